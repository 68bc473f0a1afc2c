// The wan-emu relay (tools/wan-emu) between nfsgw and an origin, for tests that
// count what reaches the origin: per-procedure call counters, reset, cut/restore
// and delay, all through wan-emu's one-shot control client.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/process.h"

namespace integ {

/// Calls and replies of one "prog:vers:proc" key.
struct ProcCount {
  long calls = 0, replies = 0;
};
using ProcCounts = std::map<std::string, ProcCount>;

/// "100003:3:<proc>", the relay's key of an NFSv3 procedure (GETATTR 1, LOOKUP 3,
/// ACCESS 4, READLINK 5, READ 6, READDIRPLUS 17, ...).
std::string nfs3_key(unsigned proc);
/// "100005:3:1": MOUNT v3 MNT.
inline const std::string kMountMntKey = "100005:3:1";

/// Calls of `key` (0 when absent).
long calls_of(const ProcCounts& procs, const std::string& key);
/// Calls of every NFSv3 procedure together.
long nfs3_calls(const ProcCounts& procs);
/// "100003:3:1 calls 5 replies 5; ..." or "(no calls)", for failure messages.
std::string describe(const ProcCounts& procs);

class WanRelay {
 public:
  /// Starts wan-emu relaying 127.0.0.1:listen -> 127.0.0.1:target for each pair,
  /// with its control port; waits (10 s) until the control port accepts. Throws
  /// with the log when the binary is missing or it does not come up.
  WanRelay(const std::vector<std::pair<std::uint16_t, std::uint16_t>>& pairs, std::uint16_t control_port,
           const std::string& log_path);
  ~WanRelay();  // stops the relay
  WanRelay(const WanRelay&) = delete;
  WanRelay& operator=(const WanRelay&) = delete;

  /// Sends one control command; the answer line. `ok` (when given) is false on a
  /// non-zero exit of the control client ("error ..." or no answer).
  std::string ctl(const std::vector<std::string>& cmd, bool* ok = nullptr) const;
  /// Zeroes the counters; false when the relay did not answer "ok".
  bool reset() const;
  /// The "procs" object of a stats answer; nullopt when the answer has none.
  std::optional<ProcCounts> procs() const;
  /// Bytes relayed from the origin to nfsgw (replies: READ data) since the last
  /// reset; nullopt when the relay does not answer.
  std::optional<std::uint64_t> down_bytes() const;
  std::string log() const;
  bool running() const;

 private:
  std::string bin_, control_;
  std::unique_ptr<Process> proc_;
};

}  // namespace integ
