// libtirpc-backed reference encoders and decoders (see tirpc_reference.h).
#include "tests/unit/protocol/tirpc_reference.h"

#include <rpc/rpc.h>

#include <cstring>

namespace nfsgw::test::tirpc_ref {

namespace {

constexpr unsigned kBufSize = 8192;

/// Runs `fn` on an encoding XDR stream and returns the bytes it produced.
template <class Fn>
Bytes encode_with(Fn fn) {
  Bytes buf(kBufSize);
  XDR x;
  xdrmem_create(&x, reinterpret_cast<char*>(buf.data()), kBufSize, XDR_ENCODE);
  bool ok = fn(&x);
  unsigned len = xdr_getpos(&x);
  xdr_destroy(&x);
  if (!ok) return {};
  buf.resize(len);
  return buf;
}

/// A decoding XDR stream over a private copy (tirpc wants a mutable pointer).
struct DecodeStream {
  explicit DecodeStream(std::span<const std::uint8_t> in) : copy(in.begin(), in.end()) {
    xdrmem_create(&x, reinterpret_cast<char*>(copy.data()), static_cast<unsigned>(copy.size()),
                  XDR_DECODE);
  }
  ~DecodeStream() { xdr_destroy(&x); }
  Bytes copy;
  XDR x;
};

void set_auth(opaque_auth& oa, const Auth& a) {
  oa.oa_flavor = static_cast<int>(a.flavor);
  oa.oa_base = reinterpret_cast<caddr_t>(const_cast<std::uint8_t*>(a.body.data()));
  oa.oa_length = static_cast<u_int>(a.body.size());
}

Auth get_auth(const opaque_auth& oa) {
  Auth a;
  a.flavor = static_cast<std::uint32_t>(oa.oa_flavor);
  const auto* p = reinterpret_cast<const std::uint8_t*>(oa.oa_base);
  if (p) a.body.assign(p, p + oa.oa_length);
  return a;
}

/// xdr_void as an xdrproc_t; the detour through a generic function pointer type
/// keeps -Wcast-function-type quiet about tirpc's K&R-style declaration.
xdrproc_t void_proc() {
  return reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(xdr_void));
}

}  // namespace

Bytes encode_u32(std::uint32_t v) {
  return encode_with([&](XDR* x) { u_int t = v; return xdr_u_int(x, &t) != 0; });
}

Bytes encode_u64(std::uint64_t v) {
  return encode_with([&](XDR* x) { u_quad_t t = v; return xdr_u_hyper(x, &t) != 0; });
}

Bytes encode_bool(bool v) {
  return encode_with([&](XDR* x) { bool_t t = v ? TRUE : FALSE; return xdr_bool(x, &t) != 0; });
}

Bytes encode_bytes(std::span<const std::uint8_t> v) {
  return encode_with([&](XDR* x) {
    char* p = reinterpret_cast<char*>(const_cast<std::uint8_t*>(v.data()));
    u_int len = static_cast<u_int>(v.size());
    return xdr_bytes(x, &p, &len, ~0u) != 0;
  });
}

Bytes encode_opaque(std::span<const std::uint8_t> v) {
  return encode_with([&](XDR* x) {
    return xdr_opaque(x, reinterpret_cast<char*>(const_cast<std::uint8_t*>(v.data())),
                      static_cast<u_int>(v.size())) != 0;
  });
}

Bytes encode_string(const std::string& v) {
  return encode_with([&](XDR* x) {
    char* p = const_cast<char*>(v.c_str());
    return xdr_string(x, &p, ~0u) != 0;
  });
}

std::optional<std::uint32_t> decode_u32(std::span<const std::uint8_t> in) {
  DecodeStream s(in);
  u_int v = 0;
  if (!xdr_u_int(&s.x, &v)) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> decode_u64(std::span<const std::uint8_t> in) {
  DecodeStream s(in);
  u_quad_t v = 0;
  if (!xdr_u_hyper(&s.x, &v)) return std::nullopt;
  return v;
}

std::optional<Bytes> decode_bytes(std::span<const std::uint8_t> in, unsigned max) {
  DecodeStream s(in);
  char* p = nullptr;
  u_int len = 0;
  if (!xdr_bytes(&s.x, &p, &len, max)) return std::nullopt;
  Bytes out(reinterpret_cast<std::uint8_t*>(p), reinterpret_cast<std::uint8_t*>(p) + len);
  free(p);
  return out;
}

std::optional<std::string> decode_string(std::span<const std::uint8_t> in, unsigned max) {
  DecodeStream s(in);
  char* p = nullptr;
  if (!xdr_string(&s.x, &p, max)) return std::nullopt;
  std::string out(p);
  free(p);
  return out;
}

Bytes encode_call(const Call& c) {
  rpc_msg m{};
  m.rm_xid = c.xid;
  m.rm_direction = CALL;
  m.rm_call.cb_rpcvers = c.rpcvers;
  m.rm_call.cb_prog = c.prog;
  m.rm_call.cb_vers = c.vers;
  m.rm_call.cb_proc = c.proc;
  set_auth(m.rm_call.cb_cred, c.cred);
  set_auth(m.rm_call.cb_verf, c.verf);
  return encode_with([&](XDR* x) { return xdr_callmsg(x, &m) != 0; });
}

std::optional<Call> decode_call(std::span<const std::uint8_t> in) {
  DecodeStream s(in);
  rpc_msg m{};
  // xdr_callmsg decodes auth bodies into caller-provided space when given.
  std::uint8_t cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
  m.rm_call.cb_cred.oa_base = reinterpret_cast<caddr_t>(cred);
  m.rm_call.cb_verf.oa_base = reinterpret_cast<caddr_t>(verf);
  if (!xdr_callmsg(&s.x, &m)) return std::nullopt;
  Call c;
  c.xid = m.rm_xid;
  c.rpcvers = m.rm_call.cb_rpcvers;
  c.prog = m.rm_call.cb_prog;
  c.vers = m.rm_call.cb_vers;
  c.proc = m.rm_call.cb_proc;
  c.cred = get_auth(m.rm_call.cb_cred);
  c.verf = get_auth(m.rm_call.cb_verf);
  return c;
}

Bytes encode_reply(const Reply& r) {
  rpc_msg m{};
  m.rm_xid = r.xid;
  m.rm_direction = REPLY;
  if (r.accepted) {
    m.rm_reply.rp_stat = MSG_ACCEPTED;
    m.acpted_rply.ar_verf = _null_auth;
    m.acpted_rply.ar_stat = static_cast<accept_stat>(r.accept_stat);
    if (r.accept_stat == PROG_MISMATCH) {
      m.acpted_rply.ar_vers.low = r.low;
      m.acpted_rply.ar_vers.high = r.high;
    } else {
      m.acpted_rply.ar_results.where = nullptr;
      m.acpted_rply.ar_results.proc = void_proc();
    }
  } else {
    m.rm_reply.rp_stat = MSG_DENIED;
    m.rjcted_rply.rj_stat = static_cast<reject_stat>(r.reject_stat);
    if (r.reject_stat == RPC_MISMATCH) {
      m.rjcted_rply.rj_vers.low = r.low;
      m.rjcted_rply.rj_vers.high = r.high;
    } else {
      m.rjcted_rply.rj_why = static_cast<auth_stat>(r.auth_stat);
    }
  }
  return encode_with([&](XDR* x) { return xdr_replymsg(x, &m) != 0; });
}

std::optional<Reply> decode_reply(std::span<const std::uint8_t> in) {
  DecodeStream s(in);
  rpc_msg m{};
  std::uint8_t verf[MAX_AUTH_BYTES];
  m.acpted_rply.ar_verf.oa_base = reinterpret_cast<caddr_t>(verf);
  m.acpted_rply.ar_results.where = nullptr;
  m.acpted_rply.ar_results.proc = void_proc();
  if (!xdr_replymsg(&s.x, &m)) return std::nullopt;
  Reply r;
  r.xid = m.rm_xid;
  r.accepted = m.rm_reply.rp_stat == MSG_ACCEPTED;
  if (r.accepted) {
    r.accept_stat = m.acpted_rply.ar_stat;
    r.verf_flavor = static_cast<std::uint32_t>(m.acpted_rply.ar_verf.oa_flavor);
    r.verf_len = m.acpted_rply.ar_verf.oa_length;
    if (r.accept_stat == PROG_MISMATCH) {
      r.low = static_cast<std::uint32_t>(m.acpted_rply.ar_vers.low);
      r.high = static_cast<std::uint32_t>(m.acpted_rply.ar_vers.high);
    }
  } else {
    r.reject_stat = m.rjcted_rply.rj_stat;
    if (r.reject_stat == RPC_MISMATCH) {
      r.low = static_cast<std::uint32_t>(m.rjcted_rply.rj_vers.low);
      r.high = static_cast<std::uint32_t>(m.rjcted_rply.rj_vers.high);
    } else {
      r.auth_stat = m.rjcted_rply.rj_why;
    }
  }
  return r;
}

Bytes encode_auth_sys(const AuthSys& a) {
  std::vector<gid_t> gids(a.gids.begin(), a.gids.end());
  std::string name = a.machinename;
  authunix_parms p{};
  p.aup_time = a.stamp;
  p.aup_machname = name.data();
  p.aup_uid = a.uid;
  p.aup_gid = a.gid;
  p.aup_len = static_cast<u_int>(gids.size());
  p.aup_gids = gids.data();
  return encode_with([&](XDR* x) { return xdr_authunix_parms(x, &p) != 0; });
}

std::optional<AuthSys> decode_auth_sys(std::span<const std::uint8_t> in) {
  DecodeStream s(in);
  authunix_parms p{};
  if (!xdr_authunix_parms(&s.x, &p)) {
    xdr_free(reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(xdr_authunix_parms)), reinterpret_cast<char*>(&p));
    return std::nullopt;
  }
  AuthSys a;
  a.stamp = static_cast<std::uint32_t>(p.aup_time);
  a.machinename = p.aup_machname ? p.aup_machname : "";
  a.uid = p.aup_uid;
  a.gid = p.aup_gid;
  a.gids.assign(p.aup_gids, p.aup_gids + p.aup_len);
  xdr_free(reinterpret_cast<xdrproc_t>(reinterpret_cast<void (*)()>(xdr_authunix_parms)), reinterpret_cast<char*>(&p));
  return a;
}

}  // namespace nfsgw::test::tirpc_ref
