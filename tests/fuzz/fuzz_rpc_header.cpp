// The RPC CALL header and the AUTH_SYS credential (protocol/rpc_message.*), as
// the dispatcher decodes them from every record a client sends: a header that
// decodes must encode back to the bytes it was read from (nothing dropped or
// invented), an AUTH_SYS body that decodes must respect RFC 5531's bounds and
// encode back to the same body, and anything else must be refused with
// xdr::DecodeError only.
//
// Input: a whole record (the call header then anything).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/rpc_message.h"
#include "protocol/xdr.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace nfsgw;

void check_auth_sys(std::span<const std::uint8_t> body) {
  rpc::AuthSys a;
  try {
    a = rpc::decode_auth_sys(body);
  } catch (const xdr::DecodeError&) {
    return;  // refused: BADCRED
  }
  FUZZ_CHECK(a.machinename.size() <= rpc::kMaxMachineName);
  FUZZ_CHECK(a.gids.size() <= rpc::kMaxAuthSysGids);
  const auto again = rpc::encode_auth_sys(a);
  // Decoding tolerates nothing after the groups only if the encoder agrees.
  FUZZ_CHECK(again.size() <= body.size());
  const auto b = rpc::decode_auth_sys(again);
  FUZZ_CHECK(b.stamp == a.stamp && b.machinename == a.machinename && b.uid == a.uid && b.gid == a.gid &&
             b.gids == a.gids);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> in(data, size);
  rpc::CallHeader h;
  std::size_t used = 0;
  try {
    xdr::Reader r(in);
    h = rpc::decode_call_header(r);
    used = r.position();
    FUZZ_CHECK(r.rest().size() == size - used);
  } catch (const xdr::DecodeError&) {
    // Not a call: the dispatcher drops it or answers GARBAGE. The bytes may still
    // be a credential body on their own.
    check_auth_sys(in);
    return 0;
  }
  FUZZ_CHECK(h.cred.body.size() <= rpc::kMaxAuthBytes);
  FUZZ_CHECK(h.verf.body.size() <= rpc::kMaxAuthBytes);
  std::vector<std::uint8_t> out;
  xdr::Writer w(out);
  rpc::encode_call_header(w, h);
  FUZZ_CHECK(out.size() == used);
  {
    xdr::Reader r2(out);
    const rpc::CallHeader h2 = rpc::decode_call_header(r2);
    FUZZ_CHECK(r2.remaining() == 0);
    FUZZ_CHECK(h2.xid == h.xid && h2.rpcvers == h.rpcvers && h2.prog == h.prog && h2.vers == h.vers &&
               h2.proc == h.proc && h2.cred.flavor == h.cred.flavor && h2.cred.body == h.cred.body &&
               h2.verf.flavor == h.verf.flavor && h2.verf.body == h.verf.body);
  }
  if (h.cred.flavor == static_cast<std::uint32_t>(rpc::AuthFlavor::Sys)) check_auth_sys(h.cred.body);
  return 0;
}
