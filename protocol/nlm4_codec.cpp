// NLM v4 codecs: the XDR layouts of nlm4_prot (XNFS, RFC 1813 appendix II), field
// by field in the order the protocol defines them. Every variable-length item is
// read through Reader with its bound, so nothing here can overrun or allocate more
// than kMaxNetobj / kMaxStrLen / kMaxFh per item.
#include "protocol/nlm4_types.h"

#include "protocol/nfs3_codec.h"

namespace nfsgw::nlm4 {

namespace {

Netobj decode_netobj(xdr::Reader& r) {
  std::span<const std::uint8_t> b = r.opaque_var(kMaxNetobj);
  return Netobj(b.begin(), b.end());
}

Stat decode_stat(xdr::Reader& r) {
  const auto s = static_cast<Stat>(r.u32());
  if (!is_valid(s)) throw xdr::DecodeError("nlm4: invalid nlm4_stats");
  return s;
}

ShareMode decode_mode(xdr::Reader& r) {
  const std::uint32_t v = r.u32();
  if (v > static_cast<std::uint32_t>(ShareMode::DenyReadWrite)) throw xdr::DecodeError("nlm4: invalid fsh4_mode");
  return static_cast<ShareMode>(v);
}

ShareAccess decode_access(xdr::Reader& r) {
  const std::uint32_t v = r.u32();
  if (v > static_cast<std::uint32_t>(ShareAccess::ReadWrite)) throw xdr::DecodeError("nlm4: invalid fsh4_access");
  return static_cast<ShareAccess>(v);
}

}  // namespace

bool is_valid(Stat s) { return static_cast<std::uint32_t>(s) <= static_cast<std::uint32_t>(Stat::Failed); }

const char* name(Stat s) {
  switch (s) {
    case Stat::Granted: return "NLM4_GRANTED";
    case Stat::Denied: return "NLM4_DENIED";
    case Stat::DeniedNoLocks: return "NLM4_DENIED_NOLOCKS";
    case Stat::Blocked: return "NLM4_BLOCKED";
    case Stat::DeniedGracePeriod: return "NLM4_DENIED_GRACE_PERIOD";
    case Stat::Deadlock: return "NLM4_DEADLCK";
    case Stat::Rofs: return "NLM4_ROFS";
    case Stat::StaleFh: return "NLM4_STALE_FH";
    case Stat::Fbig: return "NLM4_FBIG";
    case Stat::Failed: return "NLM4_FAILED";
  }
  return "NLM4_?";
}

const char* name(Proc p) {
  switch (p) {
    case Proc::Null: return "NULL";
    case Proc::Test: return "TEST";
    case Proc::Lock: return "LOCK";
    case Proc::Cancel: return "CANCEL";
    case Proc::Unlock: return "UNLOCK";
    case Proc::Granted: return "GRANTED";
    case Proc::TestMsg: return "TEST_MSG";
    case Proc::LockMsg: return "LOCK_MSG";
    case Proc::CancelMsg: return "CANCEL_MSG";
    case Proc::UnlockMsg: return "UNLOCK_MSG";
    case Proc::GrantedMsg: return "GRANTED_MSG";
    case Proc::TestRes: return "TEST_RES";
    case Proc::LockRes: return "LOCK_RES";
    case Proc::CancelRes: return "CANCEL_RES";
    case Proc::UnlockRes: return "UNLOCK_RES";
    case Proc::GrantedRes: return "GRANTED_RES";
    case Proc::Share: return "SHARE";
    case Proc::Unshare: return "UNSHARE";
    case Proc::NmLock: return "NM_LOCK";
    case Proc::FreeAll: return "FREE_ALL";
  }
  return nullptr;
}

void decode(xdr::Reader& r, Lock& v) {
  v.caller_name = r.string(kMaxStrLen);
  nfs3::decode(r, v.fh);  // opaque<64>: longer is a DecodeError
  v.oh = decode_netobj(r);
  v.svid = r.i32();
  v.offset = r.u64();
  v.length = r.u64();
}

void encode(xdr::Writer& w, const Lock& v) {
  w.string(v.caller_name);
  nfs3::encode(w, v.fh);
  w.opaque_var(v.oh);
  w.i32(v.svid);
  w.u64(v.offset);
  w.u64(v.length);
}

void decode(xdr::Reader& r, Holder& v) {
  v.exclusive = r.boolean();
  v.svid = r.i32();
  v.oh = decode_netobj(r);
  v.offset = r.u64();
  v.length = r.u64();
}

void encode(xdr::Writer& w, const Holder& v) {
  w.boolean(v.exclusive);
  w.i32(v.svid);
  w.opaque_var(v.oh);
  w.u64(v.offset);
  w.u64(v.length);
}

void decode(xdr::Reader& r, Share& v) {
  v.caller_name = r.string(kMaxStrLen);
  nfs3::decode(r, v.fh);
  v.oh = decode_netobj(r);
  v.mode = decode_mode(r);
  v.access = decode_access(r);
}

void encode(xdr::Writer& w, const Share& v) {
  w.string(v.caller_name);
  nfs3::encode(w, v.fh);
  w.opaque_var(v.oh);
  w.u32(static_cast<std::uint32_t>(v.mode));
  w.u32(static_cast<std::uint32_t>(v.access));
}

void decode(xdr::Reader& r, TestArgs& v) {
  v.cookie = decode_netobj(r);
  v.exclusive = r.boolean();
  decode(r, v.lock);
}

void encode(xdr::Writer& w, const TestArgs& v) {
  w.opaque_var(v.cookie);
  w.boolean(v.exclusive);
  encode(w, v.lock);
}

void decode(xdr::Reader& r, LockArgs& v) {
  v.cookie = decode_netobj(r);
  v.block = r.boolean();
  v.exclusive = r.boolean();
  decode(r, v.lock);
  v.reclaim = r.boolean();
  v.state = r.i32();
}

void encode(xdr::Writer& w, const LockArgs& v) {
  w.opaque_var(v.cookie);
  w.boolean(v.block);
  w.boolean(v.exclusive);
  encode(w, v.lock);
  w.boolean(v.reclaim);
  w.i32(v.state);
}

void decode(xdr::Reader& r, CancelArgs& v) {
  v.cookie = decode_netobj(r);
  v.block = r.boolean();
  v.exclusive = r.boolean();
  decode(r, v.lock);
}

void encode(xdr::Writer& w, const CancelArgs& v) {
  w.opaque_var(v.cookie);
  w.boolean(v.block);
  w.boolean(v.exclusive);
  encode(w, v.lock);
}

void decode(xdr::Reader& r, UnlockArgs& v) {
  v.cookie = decode_netobj(r);
  decode(r, v.lock);
}

void encode(xdr::Writer& w, const UnlockArgs& v) {
  w.opaque_var(v.cookie);
  encode(w, v.lock);
}

void decode(xdr::Reader& r, ShareArgs& v) {
  v.cookie = decode_netobj(r);
  decode(r, v.share);
  v.reclaim = r.boolean();
}

void encode(xdr::Writer& w, const ShareArgs& v) {
  w.opaque_var(v.cookie);
  encode(w, v.share);
  w.boolean(v.reclaim);
}

void decode(xdr::Reader& r, Notify& v) {
  v.name = r.string(kMaxNameLen);
  v.state = r.i32();
}

void encode(xdr::Writer& w, const Notify& v) {
  w.string(v.name);
  w.i32(v.state);
}

void decode(xdr::Reader& r, Res& v) {
  v.cookie = decode_netobj(r);
  v.stat = decode_stat(r);
}

void encode(xdr::Writer& w, const Res& v) {
  w.opaque_var(v.cookie);
  w.u32(static_cast<std::uint32_t>(v.stat));
}

void decode(xdr::Reader& r, TestRes& v) {
  v.cookie = decode_netobj(r);
  v.stat = decode_stat(r);
  v.holder = Holder{};
  if (v.stat == Stat::Denied) decode(r, v.holder);
}

void encode(xdr::Writer& w, const TestRes& v) {
  w.opaque_var(v.cookie);
  w.u32(static_cast<std::uint32_t>(v.stat));
  if (v.stat == Stat::Denied) encode(w, v.holder);
}

void decode(xdr::Reader& r, ShareRes& v) {
  v.cookie = decode_netobj(r);
  v.stat = decode_stat(r);
  v.sequence = r.i32();
}

void encode(xdr::Writer& w, const ShareRes& v) {
  w.opaque_var(v.cookie);
  w.u32(static_cast<std::uint32_t>(v.stat));
  w.i32(v.sequence);
}

}  // namespace nfsgw::nlm4
