// Unit test: which libnfs failure texts mean "connection lost" versus "the origin
// answered with an RPC-level error".
#include <gtest/gtest.h>

#include "gateway/upstream/rpc_error_class.h"

namespace nfsgw::upstream {
namespace {

constexpr int kError = 1, kCancel = 2, kTimeout = 3;

TEST(RpcErrorClass, DeniedReplyIsAnAuthFailure) {
  EXPECT_EQ(classify_rpc_failure(kError, "RPC Packet not accepted by the server"),
            RpcFailure::Denied);
}

TEST(RpcErrorClass, AcceptedButFailedRepliesAreBadReplies) {
  for (const char* m : {"Server responded: Garbage arguments", "Server responded: System Error",
                        "Server responded: Procedure not available",
                        "Message rejected by server", "Unknown rpc response from server"}) {
    EXPECT_EQ(classify_rpc_failure(kError, m), RpcFailure::BadReply) << m;
  }
}

TEST(RpcErrorClass, SocketErrorsAndCancelsAreConnectionLoss) {
  EXPECT_EQ(classify_rpc_failure(kError, "RPC ERROR: Failed to reconnect async"),
            RpcFailure::ConnectionLost);
  EXPECT_EQ(classify_rpc_failure(kError, "Socket failed with POLLHUP"), RpcFailure::ConnectionLost);
  EXPECT_EQ(classify_rpc_failure(kError, nullptr), RpcFailure::ConnectionLost);
  EXPECT_EQ(classify_rpc_failure(kCancel, nullptr), RpcFailure::ConnectionLost);
  EXPECT_EQ(classify_rpc_failure(kTimeout, nullptr), RpcFailure::ConnectionLost);
  // A CANCEL never carries reply text, even if data were non-null.
  EXPECT_EQ(classify_rpc_failure(kCancel, "Server responded: System Error"),
            RpcFailure::ConnectionLost);
}

}  // namespace
}  // namespace nfsgw::upstream
