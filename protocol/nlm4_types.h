// Network Lock Manager version 4 (program 100021, version 4: X/Open XNFS, the NLM
// that goes with NFSv3, RFC 1813 appendix II) types and their XDR codecs.
//
// Bounds enforced by decode() (xdr::DecodeError past them, so a malformed call is
// GARBAGE_ARGS and never allocates more than its bound):
//   - a netobj (cookie, owner handle) holds at most kMaxNetobj (1024) bytes;
//   - caller_name holds at most kMaxStrLen (LM_MAXSTRLEN, 1024) bytes, and the
//     FREE_ALL notify name kMaxNameLen (MAXNAMELEN, LM_MAXSTRLEN + 1);
//   - the file handle is an NFSv3 handle: at most nfs3::kFhSize (64) bytes;
//   - every enum (nlm4_stats, fsh4_mode, fsh4_access) must be one of its values.
// Offsets and lengths are the protocol's unsigned 64-bit values, unchecked here: a
// length of 0 means "to the end of the file", and what a range beyond 2^64 means
// is the lock table's business (gateway/nlm/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/nfs3_types.h"
#include "protocol/xdr.h"

namespace nfsgw::nlm4 {

constexpr std::uint32_t kProgram = 100021;
constexpr std::uint32_t kVersion = 4;
constexpr std::size_t kMaxNetobj = 1024;          // MAXNETOBJ_SZ
constexpr std::size_t kMaxStrLen = 1024;          // LM_MAXSTRLEN
constexpr std::size_t kMaxNameLen = kMaxStrLen + 1;  // MAXNAMELEN (nlm4_notify.name)
constexpr std::size_t kMaxFh = nfs3::kFhSize;     // the NFSv3 handle inside the netobj

enum class Proc : std::uint32_t {
  Null = 0,
  Test = 1,
  Lock = 2,
  Cancel = 3,
  Unlock = 4,
  Granted = 5,
  TestMsg = 6,
  LockMsg = 7,
  CancelMsg = 8,
  UnlockMsg = 9,
  GrantedMsg = 10,
  TestRes = 11,
  LockRes = 12,
  CancelRes = 13,
  UnlockRes = 14,
  GrantedRes = 15,
  Share = 20,
  Unshare = 21,
  NmLock = 22,
  FreeAll = 23,
};

/// nlm4_stats.
enum class Stat : std::uint32_t {
  Granted = 0,
  Denied = 1,
  DeniedNoLocks = 2,
  Blocked = 3,
  DeniedGracePeriod = 4,
  Deadlock = 5,
  Rofs = 6,
  StaleFh = 7,
  Fbig = 8,
  Failed = 9,
};

/// fsh4_mode: what a DOS-style share denies others.
enum class ShareMode : std::uint32_t { DenyNone = 0, DenyRead = 1, DenyWrite = 2, DenyReadWrite = 3 };
/// fsh4_access: what the sharer itself wants.
enum class ShareAccess : std::uint32_t { None = 0, Read = 1, Write = 2, ReadWrite = 3 };

/// netobj: an opaque cookie or owner handle.
using Netobj = std::vector<std::uint8_t>;

/// nlm4_lock: who locks which range of which file.
struct Lock {
  std::string caller_name;  // the client host's name, as its statd knows it
  nfs3::FileHandle fh;
  Netobj oh;                // owner handle: the lock owner on the caller's host
  std::int32_t svid = 0;    // the process id of the owner (a "system v id")
  std::uint64_t offset = 0;
  std::uint64_t length = 0;  // 0: to the end of the file
  friend bool operator==(const Lock&, const Lock&) = default;
};

/// nlm4_holder: the conflicting lock a TEST answers with.
struct Holder {
  bool exclusive = false;
  std::int32_t svid = 0;
  Netobj oh;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  friend bool operator==(const Holder&, const Holder&) = default;
};

/// nlm4_testargs: TEST, TEST_MSG, and GRANTED / GRANTED_MSG (the server's callback).
struct TestArgs {
  Netobj cookie;
  bool exclusive = false;
  Lock lock;
  friend bool operator==(const TestArgs&, const TestArgs&) = default;
};

/// nlm4_lockargs: LOCK, LOCK_MSG and NM_LOCK.
struct LockArgs {
  Netobj cookie;
  bool block = false;
  bool exclusive = false;
  Lock lock;
  bool reclaim = false;     // taken again after the server restarted (grace period)
  std::int32_t state = 0;   // the caller's NSM state number
  friend bool operator==(const LockArgs&, const LockArgs&) = default;
};

/// nlm4_cancargs: CANCEL and CANCEL_MSG.
struct CancelArgs {
  Netobj cookie;
  bool block = false;
  bool exclusive = false;
  Lock lock;
  friend bool operator==(const CancelArgs&, const CancelArgs&) = default;
};

/// nlm4_unlockargs: UNLOCK and UNLOCK_MSG.
struct UnlockArgs {
  Netobj cookie;
  Lock lock;
  friend bool operator==(const UnlockArgs&, const UnlockArgs&) = default;
};

/// nlm4_res: the result of LOCK, CANCEL, UNLOCK, GRANTED and NM_LOCK, and the
/// argument of LOCK_RES, CANCEL_RES, UNLOCK_RES and GRANTED_RES.
struct Res {
  Netobj cookie;
  Stat stat = Stat::Granted;
  friend bool operator==(const Res&, const Res&) = default;
};

/// nlm4_testres: the result of TEST and the argument of TEST_RES. The holder is on
/// the wire only when stat is Denied (nlm4_testrply is a union on stat).
struct TestRes {
  Netobj cookie;
  Stat stat = Stat::Granted;
  Holder holder;  // stat == Denied
  friend bool operator==(const TestRes&, const TestRes&) = default;
};

/// nlm4_share.
struct Share {
  std::string caller_name;
  nfs3::FileHandle fh;
  Netobj oh;
  ShareMode mode = ShareMode::DenyNone;
  ShareAccess access = ShareAccess::None;
  friend bool operator==(const Share&, const Share&) = default;
};

/// nlm4_shareargs: SHARE and UNSHARE.
struct ShareArgs {
  Netobj cookie;
  Share share;
  bool reclaim = false;
  friend bool operator==(const ShareArgs&, const ShareArgs&) = default;
};

/// nlm4_shareres.
struct ShareRes {
  Netobj cookie;
  Stat stat = Stat::Granted;
  std::int32_t sequence = 0;
  friend bool operator==(const ShareRes&, const ShareRes&) = default;
};

/// nlm4_notify: FREE_ALL (a client host forgets every lock it held).
struct Notify {
  std::string name;
  std::int32_t state = 0;
  friend bool operator==(const Notify&, const Notify&) = default;
};

/// True for the values nlm4_stats defines.
bool is_valid(Stat s);
/// "NLM4_GRANTED", ..., or "NLM4_?" for a value outside the enum.
const char* name(Stat s);
/// "TEST", "LOCK_MSG", ..., or nullptr for a number that is no NLM v4 procedure.
const char* name(Proc p);

// Building blocks, exposed for tests.
void decode(xdr::Reader& r, Lock& v);
void encode(xdr::Writer& w, const Lock& v);
void decode(xdr::Reader& r, Holder& v);
void encode(xdr::Writer& w, const Holder& v);
void decode(xdr::Reader& r, Share& v);
void encode(xdr::Writer& w, const Share& v);

// Procedure arguments.
void decode(xdr::Reader& r, TestArgs& v);
void encode(xdr::Writer& w, const TestArgs& v);
void decode(xdr::Reader& r, LockArgs& v);
void encode(xdr::Writer& w, const LockArgs& v);
void decode(xdr::Reader& r, CancelArgs& v);
void encode(xdr::Writer& w, const CancelArgs& v);
void decode(xdr::Reader& r, UnlockArgs& v);
void encode(xdr::Writer& w, const UnlockArgs& v);
void decode(xdr::Reader& r, ShareArgs& v);
void encode(xdr::Writer& w, const ShareArgs& v);
void decode(xdr::Reader& r, Notify& v);
void encode(xdr::Writer& w, const Notify& v);

// Results (and the arguments of the _RES procedures).
void decode(xdr::Reader& r, Res& v);
void encode(xdr::Writer& w, const Res& v);
void decode(xdr::Reader& r, TestRes& v);
void encode(xdr::Writer& w, const TestRes& v);
void decode(xdr::Reader& r, ShareRes& v);
void encode(xdr::Writer& w, const ShareRes& v);

}  // namespace nfsgw::nlm4
