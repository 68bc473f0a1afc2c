// What nfsgw's NLM service asks of the host's status monitor (issue 21, design.md
// "Byte-range locks", items 7 and 8): rpc.statd (NSM, program 100024 version 1) on
// the same host, as knfsd's lockd and nfs-ganesha use it.
//
//   - monitor(host, priv): SM_MON, when a client host first holds a lock through
//     nfsgw. statd records the host (in its own list, /var/lib/nfs/sm) and, when
//     that host's statd later tells it the host rebooted (SM_NOTIFY), calls nfsgw
//     back (below) with `priv`, which names the host on nfsgw's side.
//   - unmonitor(host): SM_UNMON, when the host holds no lock any more.
//   - unmonitor_all(): SM_UNMON_ALL, at start (what a previous nfsgw left) and at
//     a clean stop.
//
// The callback. SM_MON's my_id is {my_name, kCallbackProgram, kCallbackVersion,
// kCallbackProc}. Linux's statd (nfs-utils) accepts only my_prog 100021 (it
// answers stat_fail to anything else) and calls back over UDP on the loopback, at
// the port the host's rpcbind gives for (my_prog, my_vers, udp), from a privileged
// port, with AUTH_NULL, retrying until it is answered. So nfsgw must serve this
// one procedure on UDP at 127.0.0.1 and register (100021, 4, udp) with rpcbind.
// Its argument is `nsm::Status` (protocol/nlm_nsm_types.h: mon_name as given to
// SM_MON, the host's new NSM state, the 16-byte priv); the reply is void. The
// service then releases everything that host's owners held (design.md item 7).
//
// Every call ends within the implementation's bound: a statd that is not running,
// not registered or silent gives `ok == false` with the reason, never a hang.
#pragma once

#include <cstdint>
#include <string>

#include "gateway/awaitable.h"
#include "protocol/nlm_nsm_types.h"

namespace nfsgw::nlm {

/// my_id of every SM_MON: statd calls (kCallbackProgram, kCallbackVersion,
/// kCallbackProc) on the loopback. 16 is the procedure number Linux's lockd uses
/// for the same callback (NLMPROC_NSM_NOTIFY); it lies outside NLM v4's procedures
/// (0-15 and 20-23), so the NLM dispatch table can carry it beside them.
constexpr std::int32_t kCallbackProgram = 100021;
constexpr std::int32_t kCallbackVersion = 4;
constexpr std::int32_t kCallbackProc = 16;
/// Whose reboot a callback reports.
enum class Rebooted { ClientHost, Origin };

/// What the callback says: `mon_name` (as given to monitor()) rebooted and is now
/// in NSM state `state`; `priv` is what monitor() was given for it.
using HostRebooted = nsm::Status;

/// The answer of one statd call.
struct MonitorReply {
  bool ok = false;          // statd answered, and agreed (SM_MON: stat_succ)
  std::int32_t state = 0;   // statd's own NSM state number, when it answered
  std::string error;        // why not, when !ok
};

class StatusMonitor {
 public:
  virtual ~StatusMonitor() = default;

  /// SM_MON of `host` (the client's caller name or address, at most 1024 bytes,
  /// no NUL), with `priv` to come back in the callback.
  virtual Awaitable<MonitorReply> monitor(std::string host, nsm::Priv priv) = 0;
  /// SM_UNMON of `host` (same my_id as monitor()).
  virtual Awaitable<MonitorReply> unmonitor(std::string host) = 0;
  /// SM_UNMON_ALL: every host monitored with this my_id.
  virtual Awaitable<MonitorReply> unmonitor_all() = 0;
};

}  // namespace nfsgw::nlm
