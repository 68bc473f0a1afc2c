// ONC RPC v2 message headers (RFC 5531 section 9) and AUTH_SYS bodies (appendix A).
#include "protocol/rpc_message.h"

namespace nfsgw::rpc {

namespace {

constexpr std::uint32_t kMsgAccepted = 0;
constexpr std::uint32_t kMsgDenied = 1;

void decode_opaque_auth(xdr::Reader& r, OpaqueAuth& a) {
  a.flavor = r.u32();
  std::span<const std::uint8_t> body = r.opaque_var(kMaxAuthBytes);
  a.body.assign(body.begin(), body.end());
}

void encode_opaque_auth(xdr::Writer& w, const OpaqueAuth& a) {
  w.u32(a.flavor);
  w.opaque_var(a.body);
}

/// xid, REPLY: the common start of every reply.
void reply_prefix(xdr::Writer& w, std::uint32_t xid) {
  w.u32(xid);
  w.u32(static_cast<std::uint32_t>(MsgType::Reply));
}

/// MSG_ACCEPTED with an AUTH_NONE verifier, then the accept_stat.
void accepted_prefix(xdr::Writer& w, std::uint32_t xid, AcceptStat stat) {
  reply_prefix(w, xid);
  w.u32(kMsgAccepted);
  w.u32(static_cast<std::uint32_t>(AuthFlavor::None));
  w.u32(0);  // empty verifier body
  w.u32(static_cast<std::uint32_t>(stat));
}

}  // namespace

CallHeader decode_call_header(xdr::Reader& r) {
  CallHeader h;
  h.xid = r.u32();
  if (r.u32() != static_cast<std::uint32_t>(MsgType::Call))
    throw xdr::DecodeError("rpc: message is not a CALL");
  // rpcvers is returned as is: the dispatcher answers RPC_MISMATCH for it.
  h.rpcvers = r.u32();
  h.prog = r.u32();
  h.vers = r.u32();
  h.proc = r.u32();
  decode_opaque_auth(r, h.cred);
  decode_opaque_auth(r, h.verf);
  return h;
}

void encode_call_header(xdr::Writer& w, const CallHeader& h) {
  w.u32(h.xid);
  w.u32(static_cast<std::uint32_t>(MsgType::Call));
  w.u32(h.rpcvers);
  w.u32(h.prog);
  w.u32(h.vers);
  w.u32(h.proc);
  encode_opaque_auth(w, h.cred);
  encode_opaque_auth(w, h.verf);
}

AuthSys decode_auth_sys(std::span<const std::uint8_t> body) {
  // Bytes after the gid list are ignored: some clients pad the body.
  xdr::Reader r(body);
  AuthSys a;
  a.stamp = r.u32();
  a.machinename = r.string(kMaxMachineName);
  a.uid = r.u32();
  a.gid = r.u32();
  std::uint32_t n = r.u32();
  if (n > kMaxAuthSysGids) throw xdr::DecodeError("rpc: AUTH_SYS has too many gids");
  if (std::size_t{n} * 4 > r.remaining()) throw xdr::DecodeError("rpc: truncated AUTH_SYS gids");
  a.gids.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) a.gids.push_back(r.u32());
  return a;
}

std::vector<std::uint8_t> encode_auth_sys(const AuthSys& a) {
  std::vector<std::uint8_t> out;
  out.reserve(20 + a.machinename.size() + 3 + 4 * a.gids.size());
  xdr::Writer w(out);
  w.u32(a.stamp);
  w.string(a.machinename);
  w.u32(a.uid);
  w.u32(a.gid);
  w.u32(static_cast<std::uint32_t>(a.gids.size()));
  for (std::uint32_t g : a.gids) w.u32(g);
  return out;
}

void encode_accepted_reply(xdr::Writer& w, std::uint32_t xid, AcceptStat stat) {
  accepted_prefix(w, xid, stat);
  // PROG_MISMATCH always carries mismatch_info; keep the message well-formed even
  // when a caller uses this builder instead of encode_prog_mismatch.
  if (stat == AcceptStat::ProgMismatch) {
    w.u32(0);
    w.u32(0);
  }
}

void encode_prog_mismatch(xdr::Writer& w, std::uint32_t xid, std::uint32_t low, std::uint32_t high) {
  accepted_prefix(w, xid, AcceptStat::ProgMismatch);
  w.u32(low);
  w.u32(high);
}

void encode_rpc_mismatch(xdr::Writer& w, std::uint32_t xid) {
  reply_prefix(w, xid);
  w.u32(kMsgDenied);
  w.u32(static_cast<std::uint32_t>(RejectStat::RpcMismatch));
  w.u32(kRpcVersion);
  w.u32(kRpcVersion);
}

void encode_auth_error(xdr::Writer& w, std::uint32_t xid, AuthStat why) {
  reply_prefix(w, xid);
  w.u32(kMsgDenied);
  w.u32(static_cast<std::uint32_t>(RejectStat::AuthError));
  w.u32(static_cast<std::uint32_t>(why));
}

ReplyHeader decode_reply_header(xdr::Reader& r) {
  ReplyHeader h;
  h.xid = r.u32();
  if (r.u32() != static_cast<std::uint32_t>(MsgType::Reply))
    throw xdr::DecodeError("rpc: message is not a REPLY");
  std::uint32_t stat = r.u32();
  if (stat == kMsgAccepted) {
    h.stat = ReplyStat::Accepted;
    OpaqueAuth verf;
    decode_opaque_auth(r, verf);
    std::uint32_t a = r.u32();
    if (a > static_cast<std::uint32_t>(AcceptStat::SystemErr))
      throw xdr::DecodeError("rpc: invalid accept_stat");
    h.accept = static_cast<AcceptStat>(a);
    if (h.accept == AcceptStat::ProgMismatch) {
      h.mismatch_low = r.u32();
      h.mismatch_high = r.u32();
    }
  } else if (stat == kMsgDenied) {
    h.stat = ReplyStat::Denied;
    std::uint32_t rj = r.u32();
    if (rj == static_cast<std::uint32_t>(RejectStat::RpcMismatch)) {
      h.reject = RejectStat::RpcMismatch;
      h.mismatch_low = r.u32();
      h.mismatch_high = r.u32();
    } else if (rj == static_cast<std::uint32_t>(RejectStat::AuthError)) {
      h.reject = RejectStat::AuthError;
      std::uint32_t why = r.u32();
      if (why > static_cast<std::uint32_t>(AuthStat::Failed))
        throw xdr::DecodeError("rpc: unknown auth_stat");
      h.auth = static_cast<AuthStat>(why);
    } else {
      throw xdr::DecodeError("rpc: invalid reject_stat");
    }
  } else {
    throw xdr::DecodeError("rpc: invalid reply_stat");
  }
  return h;
}

}  // namespace nfsgw::rpc
