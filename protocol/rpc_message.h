// ONC RPC v2 (RFC 5531) call and reply headers, and AUTH_NONE / AUTH_SYS credentials.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/xdr.h"

namespace nfsgw::rpc {

constexpr std::uint32_t kRpcVersion = 2;

enum class MsgType : std::uint32_t { Call = 0, Reply = 1 };
enum class ReplyStat : std::uint32_t { Accepted = 0, Denied = 1 };
enum class AcceptStat : std::uint32_t {
  Success = 0,
  ProgUnavail = 1,
  ProgMismatch = 2,
  ProcUnavail = 3,
  GarbageArgs = 4,
  SystemErr = 5,
};
enum class RejectStat : std::uint32_t { RpcMismatch = 0, AuthError = 1 };
enum class AuthStat : std::uint32_t {
  Ok = 0,
  BadCred = 1,
  RejectedCred = 2,
  BadVerf = 3,
  RejectedVerf = 4,
  TooWeak = 5,
  InvalResp = 6,
  Failed = 7,
};
enum class AuthFlavor : std::uint32_t { None = 0, Sys = 1, Short = 2, Dh = 3, RpcsecGss = 6 };

constexpr std::size_t kMaxAuthBytes = 400;       // RFC 5531 opaque_auth body bound
constexpr std::size_t kMaxMachineName = 255;     // RFC 5531 authsys_parms
constexpr std::size_t kMaxAuthSysGids = 16;

struct OpaqueAuth {
  std::uint32_t flavor = static_cast<std::uint32_t>(AuthFlavor::None);
  std::vector<std::uint8_t> body;  // at most kMaxAuthBytes
};

/// authsys_parms (RFC 5531 appendix A).
struct AuthSys {
  std::uint32_t stamp = 0;
  std::string machinename;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> gids;  // at most kMaxAuthSysGids
};

/// The header of a CALL message, up to (not including) the procedure arguments.
struct CallHeader {
  std::uint32_t xid = 0;
  std::uint32_t rpcvers = kRpcVersion;
  std::uint32_t prog = 0;
  std::uint32_t vers = 0;
  std::uint32_t proc = 0;
  OpaqueAuth cred;
  OpaqueAuth verf;
};

/// Decodes the message type and, for a CALL, the header. Throws xdr::DecodeError on
/// malformed input (including a message that is not a CALL). The reader is left at
/// the first byte of the procedure arguments.
CallHeader decode_call_header(xdr::Reader& r);
void encode_call_header(xdr::Writer& w, const CallHeader& h);

/// Parses an AUTH_SYS credential body; throws xdr::DecodeError when malformed.
AuthSys decode_auth_sys(std::span<const std::uint8_t> body);
std::vector<std::uint8_t> encode_auth_sys(const AuthSys& a);

// Reply builders. Each appends a complete reply header (for Success, the caller then
// appends the procedure result). The verifier is always AUTH_NONE.
void encode_accepted_reply(xdr::Writer& w, std::uint32_t xid, AcceptStat stat);
/// PROG_MISMATCH carries the supported version range.
void encode_prog_mismatch(xdr::Writer& w, std::uint32_t xid, std::uint32_t low, std::uint32_t high);
void encode_rpc_mismatch(xdr::Writer& w, std::uint32_t xid);
void encode_auth_error(xdr::Writer& w, std::uint32_t xid, AuthStat why);

/// A decoded reply header, used by clients and tests.
struct ReplyHeader {
  std::uint32_t xid = 0;
  ReplyStat stat = ReplyStat::Accepted;
  AcceptStat accept = AcceptStat::Success;       // when Accepted
  RejectStat reject = RejectStat::RpcMismatch;   // when Denied
  std::uint32_t mismatch_low = 0, mismatch_high = 0;  // ProgMismatch / RpcMismatch
  AuthStat auth = AuthStat::Ok;                  // when Denied with AuthError
};
ReplyHeader decode_reply_header(xdr::Reader& r);

}  // namespace nfsgw::rpc
