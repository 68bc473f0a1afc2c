// Sorting libnfs's call failures into "the connection went away" and "the origin
// answered, but not with a result".
//
// libnfs 4.0 reports both through the same callback status (RPC_STATUS_ERROR) and
// tells them apart only by the error text it passes as `data`. The pool must know
// which one it is: a lost connection means "re-send or answer JUKEBOX", a reply-level
// failure means "answer now" (ACCES for a denied credential, SERVERFAULT otherwise).
#pragma once

#include <string>

struct rpc_context;  // libnfs's, kept out of this header

namespace nfsgw::upstream {

enum class RpcFailure {
  ConnectionLost,  // no reply will ever come on this connection
  Denied,          // MSG_DENIED: the origin rejected our credentials (AUTH error)
  BadReply,        // accepted but not SUCCESS (GARBAGE_ARGS, SYSTEM_ERR, ...) or undecodable
};

/// `status` is libnfs's callback status (RPC_STATUS_ERROR = 1, CANCEL = 2,
/// TIMEOUT = 3); `message` is the text libnfs passed for RPC_STATUS_ERROR, or null.
RpcFailure classify_rpc_failure(int status, const char* message);

/// libnfs's text for the last error of `rpc` (null: none), or "unknown error".
std::string rpc_error_text(struct rpc_context* rpc);

}  // namespace nfsgw::upstream
