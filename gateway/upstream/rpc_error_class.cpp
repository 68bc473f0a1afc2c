#include "gateway/upstream/rpc_error_class.h"

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>

#include <cstring>

namespace nfsgw::upstream {

namespace {
bool starts_with(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}
}  // namespace

RpcFailure classify_rpc_failure(int status, const char* message) {
  // CANCEL comes from rpc_destroy_context, TIMEOUT from a per-call timeout: both
  // mean the call's fate on the origin is unknown, exactly like a lost connection.
  if (status != 1 || message == nullptr) return RpcFailure::ConnectionLost;
  // The texts below are the ones libnfs 4.0's reply processing emits (lib/pdu.c);
  // every other text comes from socket errors and rpc_error_all_pdus().
  if (starts_with(message, "RPC Packet not accepted")) return RpcFailure::Denied;
  if (starts_with(message, "Server responded:") ||
      starts_with(message, "Message rejected by server") ||
      starts_with(message, "Unknown rpc response")) {
    return RpcFailure::BadReply;
  }
  return RpcFailure::ConnectionLost;
}

std::string rpc_error_text(struct rpc_context* rpc) {
  const char* e = rpc != nullptr ? rpc_get_error(rpc) : nullptr;
  return e != nullptr ? std::string(e) : std::string("unknown error");
}

}  // namespace nfsgw::upstream
