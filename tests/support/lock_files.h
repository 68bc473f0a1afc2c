// What the NLM integration tests ask of files on a server and on the origin's disk:
// a file's handle through a server's MOUNT and LOOKUP, and whether the origin's file
// system holds a write lock on a range (ganesha's VFS FSAL holds NLM locks as real
// locks on its files, so F_OFD_GETLK from this host sees them); and NLM v4 calls
// built by hand (tests/support/rpc_wire.h), independent of nfsgw's own codec, with
// every field settable so that each can be made wrong.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/nfsgw_process.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/rpc_wire.h"
#include "tests/support/temp_dir.h"

namespace integ {

/// The handle of `name` in the root of export `path` on a server (`nfs_port`,
/// `mount_port`); empty, with a test failure recorded, when the server refuses.
Handle handle_of(std::uint16_t nfs_port, std::uint16_t mount_port, const std::string& path, const std::string& name);

/// Whether a process of this host sees a write lock on [start, start + len) of
/// `path` (len 0: to the end of the file).
bool locked_at_origin(const std::string& path, off_t start = 0, off_t len = 0);

/// The nfsgw of an NLM integration suite, in a temporary folder of its own: `cfg`
/// as the suite sets it (port, origin, exports, its [server] keys, nlm_port among
/// them), started at once; throws, with nfsgw's log, when its NLM port
/// (`nlm_port`) does not listen within 30 s. Stopped when destroyed.
class NlmGateway {
 public:
  NlmGateway(const std::string& tag, GatewayConfig cfg, std::uint16_t nlm_port);
  ~NlmGateway();
  Gateway& gateway() { return *gw_; }
  std::string log() const { return gw_->log(); }
  std::uint16_t port() const { return gw_->port(); }

  /// A file made in the shared origin's export root (content "locked content\n",
  /// mode 0666), with its handle through this nfsgw's `export_path` and the origin's.
  struct File {
    std::string path;
    Handle via_gw, at_origin;
  };
  File make(const std::string& name, const std::string& export_path = "/export") const;

 private:
  TempDir dir_;
  std::unique_ptr<Gateway> gw_;
};

namespace nlm_wire {

constexpr std::uint32_t kProgram = 100021, kVersion = 4;
constexpr std::uint32_t kTest = 1, kLock = 2, kCancel = 3, kUnlock = 4, kGranted = 5, kFreeAll = 23;
constexpr std::uint32_t kStatGranted = 0, kStatDenied = 1, kStatDeniedNolocks = 2, kStatBlocked = 3,
                        kStatStaleFh = 7;

/// An NLM lock, field by field.
struct WireLock {
  std::string caller_name = "127.0.0.9";  // an address: the host's statd can monitor it
  std::vector<std::uint8_t> fh;
  std::vector<std::uint8_t> oh = {'o', 'w', 'n'};
  std::uint32_t svid = 1;
  std::uint64_t offset = 0, length = 10;
};

/// The call of `proc` (TEST, LOCK, CANCEL, UNLOCK, GRANTED) for `l`: exclusive, not
/// a reclaim, state 1.
XdrOut call_of(std::uint32_t xid, std::uint32_t proc, const WireLock& l, bool block = false);
/// The asynchronous forms (X/Open NLM: the _MSG requests, answered by _RES calls).
constexpr std::uint32_t kTestMsg = 6, kLockMsg = 7, kCancelMsg = 8, kUnlockMsg = 9, kGrantedMsg = 10;
constexpr std::uint32_t kTestRes = 11, kLockRes = 12, kCancelRes = 13, kUnlockRes = 14, kGrantedRes = 15;
/// The _MSG form of call_of's call: the same arguments, as `msg_proc` (TEST_MSG ...
/// GRANTED_MSG, each its synchronous procedure + 5).
XdrOut msg_call_of(std::uint32_t xid, std::uint32_t msg_proc, const WireLock& l, bool block = false);
/// A _RES call (LOCK_RES, CANCEL_RES, UNLOCK_RES, GRANTED_RES: nlm4_res; TEST_RES:
/// nlm4_testres without a holder) with `stat`.
XdrOut res_call_of(std::uint32_t xid, std::uint32_t res_proc, std::uint32_t stat);
/// SHARE and UNSHARE: a DOS share reservation (nlm4_share), field by field.
constexpr std::uint32_t kShare = 20, kUnshare = 21;
constexpr std::uint32_t kShareAccessRead = 1, kShareAccessWrite = 2;  // fsh4_access
constexpr std::uint32_t kShareDenyNone = 0, kShareDenyRead = 1, kShareDenyWrite = 2;  // fsh4_mode
struct WireShare {
  std::string caller_name = "127.0.0.9";
  std::vector<std::uint8_t> fh;
  std::vector<std::uint8_t> oh = {'s', 'h', 'r'};
  std::uint32_t mode = kShareDenyNone, access = kShareAccessRead;
};
/// The call of `proc` (SHARE, UNSHARE) for `s` (nlm4_shareargs: cookie, share, reclaim).
XdrOut share_call_of(std::uint32_t xid, std::uint32_t proc, const WireShare& s, bool reclaim = false);
/// Whether `r` is an accepted, successful void reply.
bool is_void(const ParsedReply& r);

/// One call on `c`: the parsed reply (ok false when none came within 30 s: a
/// server may wait on its statd, which waits 5 s on a DNS server that does not
/// answer).
ParsedReply call(TcpConn& c, const std::vector<std::uint8_t>& body);
/// The NLM status of an accepted reply (after the cookie), or 999.
std::uint32_t stat_of(const ParsedReply& r);
std::vector<std::uint8_t> bytes_of(const Handle& h);

}  // namespace nlm_wire
}  // namespace integ
