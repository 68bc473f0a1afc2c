// An independent XDR/RPC reference built on libtirpc's xdr_* routines, behind
// nfsgw-free plain types: tirpc's headers cannot share a translation unit with
// libnfs's, so only tirpc_reference.cpp includes them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nfsgw::test::tirpc_ref {

using Bytes = std::vector<std::uint8_t>;

Bytes encode_u32(std::uint32_t v);
Bytes encode_u64(std::uint64_t v);
Bytes encode_bool(bool v);
Bytes encode_bytes(std::span<const std::uint8_t> v);   // xdr_bytes (variable opaque)
Bytes encode_opaque(std::span<const std::uint8_t> v);  // xdr_opaque (fixed opaque)
Bytes encode_string(const std::string& v);             // xdr_string

std::optional<std::uint32_t> decode_u32(std::span<const std::uint8_t> in);
std::optional<std::uint64_t> decode_u64(std::span<const std::uint8_t> in);
std::optional<Bytes> decode_bytes(std::span<const std::uint8_t> in, unsigned max);
std::optional<std::string> decode_string(std::span<const std::uint8_t> in, unsigned max);

struct Auth {
  std::uint32_t flavor = 0;
  Bytes body;
};

struct Call {
  std::uint32_t xid = 0, rpcvers = 2, prog = 0, vers = 0, proc = 0;
  Auth cred, verf;
};
/// xdr_callmsg; the reference stops at the end of the header.
Bytes encode_call(const Call& c);
/// Decodes with xdr_callmsg; nullopt when tirpc refuses the input.
std::optional<Call> decode_call(std::span<const std::uint8_t> in);

struct Reply {
  std::uint32_t xid = 0;
  bool accepted = true;
  std::uint32_t accept_stat = 0;  // when accepted
  std::uint32_t reject_stat = 0;  // when denied
  std::uint32_t low = 0, high = 0;
  std::uint32_t auth_stat = 0;
  std::uint32_t verf_flavor = 0;
  std::size_t verf_len = 0;
};
/// xdr_replymsg with an AUTH_NONE verifier and void results.
Bytes encode_reply(const Reply& r);
std::optional<Reply> decode_reply(std::span<const std::uint8_t> in);

struct AuthSys {
  std::uint32_t stamp = 0;
  std::string machinename;
  std::uint32_t uid = 0, gid = 0;
  std::vector<std::uint32_t> gids;
};
Bytes encode_auth_sys(const AuthSys& a);
std::optional<AuthSys> decode_auth_sys(std::span<const std::uint8_t> in);

}  // namespace nfsgw::test::tirpc_ref
