// Malformed RPC input over a raw TCP socket gets the RFC 5531 answer (or, for an
// oversized record, a closed connection), and nfsgw keeps serving everyone else.
// The bytes are built by hand (tests/support/rpc_wire), not with nfsgw's own codec.
#include <gtest/gtest.h>
#include <nfsc/libnfs.h>

#include <random>
#include <string>

#include "tests/support/gateway_env.h"
#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/rpc_wire.h"

namespace {

using namespace integ;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginAndGatewayEnvironment);

constexpr std::uint32_t kAcceptSuccess = 0, kProgUnavail = 1, kProgMismatch = 2, kProcUnavail = 3, kGarbageArgs = 4;
constexpr int kTimeoutMs = 10000;

class MalformedRpc : public ::testing::Test {
 protected:
  void SetUp() override { INTEG_REQUIRE_GATEWAY(); }

  /// Sends one record and returns the parsed reply (fails the test when none).
  ParsedReply call(TcpConn& c, const std::vector<std::uint8_t>& body) {
    EXPECT_TRUE(c.send_all(record(body)));
    auto reply = c.read_record(kTimeoutMs);
    if (!reply) {
      ADD_FAILURE() << "no reply (closed=" << c.closed() << ")";
      return {};
    }
    auto p = parse_reply(*reply);
    EXPECT_TRUE(p.ok) << "malformed reply of " << reply->size() << " bytes";
    return p;
  }

  /// A NULL call answers SUCCESS: the connection is still usable.
  void expect_connection_alive(TcpConn& c, std::uint32_t xid) {
    auto p = call(c, rpc_call(xid, kNfsProgram, 3, 0).bytes);
    EXPECT_EQ(p.xid, xid);
    EXPECT_EQ(p.reply_stat, 0u);
    EXPECT_EQ(p.accept_stat, kAcceptSuccess);
  }

  /// A fresh libnfs client mounts and stats the root: other clients are unaffected.
  void expect_gateway_serves() {
    NfsClient client(gateway_url(), -1, -1, 15000);
    ASSERT_EQ(client.mount_status(), 0) << client.mount_error();
    EXPECT_EQ(lstat_of(client.get(), "/").rc, 0);
  }
};

TEST_F(MalformedRpc, TruncatedArgumentsGetGarbageArgs) {
  TcpConn c(gateway_port());
  ASSERT_TRUE(c.connected());
  // GETATTR whose handle claims 64 bytes but carries 8.
  auto x = rpc_call(0x1001, kNfsProgram, 3, 1);
  x.u32(64).u32(0xdeadbeef).u32(0xfeedface);
  auto p = call(c, x.bytes);
  EXPECT_EQ(p.xid, 0x1001u);
  EXPECT_EQ(p.reply_stat, 0u);
  EXPECT_EQ(p.accept_stat, kGarbageArgs);
  // LOOKUP with no arguments at all.
  p = call(c, rpc_call(0x1002, kNfsProgram, 3, 3).bytes);
  EXPECT_EQ(p.xid, 0x1002u);
  EXPECT_EQ(p.accept_stat, kGarbageArgs);
  // MNT with a path length far beyond the bytes sent.
  auto m = rpc_call(0x1003, kMountProgram, 3, 1);
  m.u32(1000).u32(0x2f2f2f2f);
  p = call(c, m.bytes);
  EXPECT_EQ(p.xid, 0x1003u);
  EXPECT_EQ(p.accept_stat, kGarbageArgs);
  expect_connection_alive(c, 0x1004);
  expect_gateway_serves();
}

TEST_F(MalformedRpc, UnknownProgramGetsProgUnavail) {
  TcpConn c(gateway_port());
  ASSERT_TRUE(c.connected());
  auto p = call(c, rpc_call(0x2001, 0x20000099, 1, 0).bytes);
  EXPECT_EQ(p.xid, 0x2001u);
  EXPECT_EQ(p.reply_stat, 0u);
  EXPECT_EQ(p.accept_stat, kProgUnavail);
  expect_connection_alive(c, 0x2002);
}

TEST_F(MalformedRpc, WrongVersionGetsProgMismatchThreeToThree) {
  TcpConn c(gateway_port());
  ASSERT_TRUE(c.connected());
  for (std::uint32_t vers : {2u, 4u}) {
    auto p = call(c, rpc_call(0x3000 + vers, kNfsProgram, vers, 0).bytes);
    EXPECT_EQ(p.xid, 0x3000u + vers);
    EXPECT_EQ(p.reply_stat, 0u);
    EXPECT_EQ(p.accept_stat, kProgMismatch) << "NFS version " << vers;
    EXPECT_EQ(p.low, 3u);
    EXPECT_EQ(p.high, 3u);
  }
  expect_connection_alive(c, 0x3010);
}

TEST_F(MalformedRpc, UnknownProcedureGetsProcUnavail) {
  TcpConn c(gateway_port());
  ASSERT_TRUE(c.connected());
  auto p = call(c, rpc_call(0x4001, kNfsProgram, 3, 99).bytes);
  EXPECT_EQ(p.xid, 0x4001u);
  EXPECT_EQ(p.accept_stat, kProcUnavail);
  p = call(c, rpc_call(0x4002, kMountProgram, 3, 77).bytes);
  EXPECT_EQ(p.xid, 0x4002u);
  EXPECT_EQ(p.accept_stat, kProcUnavail);
  expect_connection_alive(c, 0x4003);
}

TEST_F(MalformedRpc, WrongRpcVersionIsDenied) {
  TcpConn c(gateway_port());
  ASSERT_TRUE(c.connected());
  auto x = rpc_call(0x5001, kNfsProgram, 3, 0);
  x.bytes[11] = 3;  // rpcvers 3
  auto p = call(c, x.bytes);
  EXPECT_EQ(p.xid, 0x5001u);
  EXPECT_EQ(p.reply_stat, 1u);  // MSG_DENIED
  ASSERT_GE(p.results.size(), 12u);
  EXPECT_EQ(p.results[3], 0u);  // RPC_MISMATCH
  EXPECT_EQ(p.results[7], 2u);  // low
  EXPECT_EQ(p.results[11], 2u); // high
}

TEST_F(MalformedRpc, OneGigabyteRecordMarkerClosesTheConnection) {
  TcpConn c(gateway_port());
  ASSERT_TRUE(c.connected());
  XdrOut marker;
  marker.u32(0x80000000u | (1u << 30));
  ASSERT_TRUE(c.send_all(marker.bytes));
  c.send_all(rpc_call(0x6001, kNfsProgram, 3, 0).bytes);  // the start of the "record"
  EXPECT_TRUE(c.wait_closed(kTimeoutMs)) << "nfsgw kept a connection announcing a 1 GiB record";
  expect_gateway_serves();
}

TEST_F(MalformedRpc, ManySmallFragmentsOverTheLimitCloseTheConnection) {
  TcpConn c(gateway_port());
  ASSERT_TRUE(c.connected());
  std::vector<std::uint8_t> frag(1 << 20, 0);
  XdrOut hdr;
  hdr.u32(1u << 20);  // not the last fragment
  bool sent_all = true;
  for (int i = 0; i < 6 && sent_all; ++i) {  // 6 MiB > the default 4 MiB bound
    sent_all = c.send_all(hdr.bytes) && c.send_all(frag);
  }
  EXPECT_TRUE(c.wait_closed(kTimeoutMs)) << "nfsgw kept a connection whose record exceeds max_record_bytes";
  expect_gateway_serves();
}

TEST_F(MalformedRpc, RandomGarbageDoesNotHurtOtherClients) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 20; ++round) {
    TcpConn c(gateway_port());
    ASSERT_TRUE(c.connected());
    std::vector<std::uint8_t> body(4 + rng() % 300);
    for (auto& b : body) b = static_cast<std::uint8_t>(rng());
    c.send_all(record(body));
    // Whatever the answer (a reply or a close), the gateway must not die.
    c.read_record(200);
  }
  // A REPLY sent to the server, and a CALL cut off inside its credential.
  {
    TcpConn c(gateway_port());
    XdrOut reply;
    reply.u32(0x7001).u32(1).u32(0);
    c.send_all(record(reply.bytes));
    c.read_record(500);
  }
  {
    TcpConn c(gateway_port());
    auto x = rpc_call(0x7002, kNfsProgram, 3, 0);
    x.bytes.resize(30);
    c.send_all(record(x.bytes));
    c.read_record(500);
  }
  expect_gateway_serves();
}

}  // namespace
