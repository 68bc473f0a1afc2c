// Counters of what crossed the emulated link, rendered as JSON for `stats`.
//
// "up" is client -> target (towards the origin), "down" is target -> client. Calls
// are keyed by program:version:procedure; a reply is attributed to the procedure of
// the call with the same xid on the same connection (see XidTracker), so per-procedure
// reply counts show which calls were answered. All access happens on the emulator's
// single io thread, so there is no locking.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace nfsgw::wanemu {

enum class Direction : std::uint8_t { Up = 0, Down = 1 };

struct ProcKey {
  std::uint32_t prog = 0, vers = 0, proc = 0;
  auto operator<=>(const ProcKey&) const = default;
};

struct DirectionCounters {
  std::uint64_t bytes = 0;
  std::uint64_t calls = 0;
  std::uint64_t replies = 0;
  std::uint64_t unmatched_replies = 0;  // reply whose xid no call on the connection had
  std::uint64_t unparsed_bytes = 0;
  std::uint64_t short_records = 0;
  // Delay accuracy: how long after its due time each delayed chunk was written.
  std::uint64_t delayed_chunks = 0;
  std::uint64_t late_us_total = 0;
  std::uint64_t late_us_max = 0;
};

struct ProcCounters {
  std::uint64_t calls = 0;
  std::uint64_t replies = 0;
};

class TrafficCounters {
 public:
  DirectionCounters& dir(Direction d) { return dirs_[static_cast<int>(d)]; }
  const DirectionCounters& dir(Direction d) const { return dirs_[static_cast<int>(d)]; }

  void count_call(Direction d, const ProcKey& k) {
    ++dir(d).calls;
    ++procs_[k].calls;
  }
  /// `k` is null when the reply's xid matched no outstanding call.
  void count_reply(Direction d, const ProcKey* k) {
    ++dir(d).replies;
    if (k) ++procs_[*k].replies;
    else ++dir(d).unmatched_replies;
  }

  std::uint64_t connections_accepted = 0;
  std::uint64_t connections_refused = 0;  // accepted and closed while cut
  std::uint64_t connect_failures = 0;     // target did not accept

  const std::map<ProcKey, ProcCounters>& procs() const { return procs_; }

  void reset() { *this = TrafficCounters{}; }

  /// One-line JSON object. `extra` is spliced in verbatim as further members
  /// (already formatted as `"name":value,...`, may be empty).
  std::string to_json(const std::string& extra = {}) const;

 private:
  DirectionCounters dirs_[2];
  std::map<ProcKey, ProcCounters> procs_;
};

}  // namespace nfsgw::wanemu
