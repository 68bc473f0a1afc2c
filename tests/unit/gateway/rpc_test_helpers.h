// Building RPC call records and taking reply records apart with nfsgw's own
// protocol/ codecs, the way a client would: the tests then talk to the dispatcher
// (or a live server) in wire bytes, not through internal types.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/nfs3_types.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"

namespace nfsgw::test {

/// A file handle of the given bytes.
inline nfs3::FileHandle fh(std::initializer_list<std::uint8_t> b) {
  return nfs3::FileHandle(std::span<const std::uint8_t>(b.begin(), b.size()));
}

/// An AUTH_SYS credential for uid/gid/gids.
inline rpc::OpaqueAuth auth_sys(std::uint32_t uid, std::uint32_t gid,
                                std::vector<std::uint32_t> gids = {},
                                std::string machine = "client") {
  rpc::AuthSys a;
  a.stamp = 42;
  a.machinename = std::move(machine);
  a.uid = uid;
  a.gid = gid;
  a.gids = std::move(gids);
  rpc::OpaqueAuth o;
  o.flavor = static_cast<std::uint32_t>(rpc::AuthFlavor::Sys);
  o.body = rpc::encode_auth_sys(a);
  return o;
}

inline rpc::OpaqueAuth auth_none() { return rpc::OpaqueAuth{}; }

/// The header fields of a call; procedure arguments follow via `args`.
struct CallSpec {
  std::uint32_t xid = 0x1234;
  std::uint32_t rpcvers = rpc::kRpcVersion;
  std::uint32_t prog = 0;
  std::uint32_t vers = 0;
  std::uint32_t proc = 0;
  rpc::OpaqueAuth cred = auth_sys(1000, 1000);
};

/// A call record without the record mark (what the dispatcher is given).
template <typename Args>
std::vector<std::uint8_t> call_record(const CallSpec& s, const Args& args) {
  std::vector<std::uint8_t> out;
  xdr::Writer w(out);
  rpc::CallHeader h;
  h.xid = s.xid;
  h.rpcvers = s.rpcvers;
  h.prog = s.prog;
  h.vers = s.vers;
  h.proc = s.proc;
  h.cred = s.cred;
  encode_call_header(w, h);
  encode(w, args);  // found by argument-dependent lookup (nfs3::, mount3::)
  return out;
}

/// No arguments at all (NULL, DUMP, UMNTALL, EXPORT).
struct NoArgs {};
inline void encode(xdr::Writer&, const NoArgs&) {}

/// Raw argument bytes appended as they are.
struct RawArgs {
  std::vector<std::uint8_t> bytes;
};
inline void encode(xdr::Writer& w, const RawArgs& a) {
  w.buffer().insert(w.buffer().end(), a.bytes.begin(), a.bytes.end());
}

/// A reply record split into its header and the result bytes that follow it.
struct Reply {
  rpc::ReplyHeader header;
  std::vector<std::uint8_t> body;  // the procedure result (Accepted Success only)
};

/// Checks the record mark (one last fragment of exactly the rest) and decodes the
/// reply header. Throws std::runtime_error / xdr::DecodeError when malformed.
inline Reply parse_reply(std::span<const std::uint8_t> record) {
  if (record.size() < 4) throw std::runtime_error("reply shorter than its record mark");
  const std::uint32_t mark = (std::uint32_t{record[0]} << 24) | (std::uint32_t{record[1]} << 16) |
                             (std::uint32_t{record[2]} << 8) | record[3];
  if (mark != (0x80000000u | static_cast<std::uint32_t>(record.size() - 4)))
    throw std::runtime_error("reply record mark does not match its length");
  xdr::Reader r(record.subspan(4));
  Reply rep;
  rep.header = rpc::decode_reply_header(r);
  auto rest = r.rest();
  rep.body.assign(rest.begin(), rest.end());
  return rep;
}

/// Decodes a result of type Res from a reply body and checks nothing trails it.
template <typename Res>
Res decode_result(const std::vector<std::uint8_t>& body) {
  xdr::Reader r(body);
  Res res;
  decode(r, res);
  if (r.remaining() != 0) throw std::runtime_error("bytes left after the result");
  return res;
}

}  // namespace nfsgw::test
