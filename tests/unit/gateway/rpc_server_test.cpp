// Connection and RpcServer over loopback: several calls in one burst answered out
// of order, backpressure on calls in flight, oversized records closing only their
// own connection, and fragmented records reassembled.
#include <gtest/gtest.h>

#include "tests/unit/gateway/rpc_server_fixture.h"
#include "tests/support/waiting.h"

namespace nfsgw::test {
namespace {

TEST_F(RpcServerTest, BurstOfCallsAnsweredInReverseOrder) {
  start({});
  LoopbackClient c(port);
  constexpr std::uint32_t kFirst = 100, kCount = 6;
  std::vector<std::uint8_t> burst;
  for (std::uint32_t i = 0; i < kCount; ++i) {
    const auto rec = with_record_mark(getattr_call(kFirst + i));
    burst.insert(burst.end(), rec.begin(), rec.end());
  }
  c.send(burst);  // one write: the server must split the records itself
  ASSERT_TRUE(program.wait_for_arrivals(kCount)) << "only " << program.arrived() << " arrived";
  EXPECT_EQ(program.max_waiting(), kCount);  // all in flight at once

  for (std::uint32_t i = kCount; i-- > 0;) {
    program.release(io, kFirst + i);
    expect_getattr_reply(c, kFirst + i);
  }
  EXPECT_EQ(program.call_count(), kCount);
}

TEST_F(RpcServerTest, AClientsFinRaisesItsGoneFlagAtOnceAndRepliesMadeAfterItStillGoOut) {
  start({});
  LoopbackClient c(port);
  c.send(with_record_mark(getattr_call(7)));
  ASSERT_TRUE(program.wait_for_arrivals(1));
  // The call is held by the program: its connection, and so its flag, live on.
  const CallContext ctx = program.last_ctx();
  ASSERT_NE(ctx.caller_gone, nullptr);
  EXPECT_FALSE(ctx.caller_left());
  c.shutdown_send();
  EXPECT_TRUE(wait_until([&] { return ctx.caller_left(); }, 300ms, "the gone flag, raised by the client's FIN"));
  program.release(io, 7);
  expect_getattr_reply(c, 7);
}

TEST_F(RpcServerTest, CallsInFlightAreBounded) {
  server::ServerLimits limits;
  limits.connection.max_calls_in_flight = 2;
  start(limits);
  LoopbackClient c(port);
  constexpr std::uint32_t kFirst = 200, kCount = 5;
  std::vector<std::uint8_t> burst;
  for (std::uint32_t i = 0; i < kCount; ++i) {
    const auto rec = with_record_mark(getattr_call(kFirst + i));
    burst.insert(burst.end(), rec.begin(), rec.end());
  }
  c.send(burst);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    ASSERT_TRUE(program.wait_for_arrivals(std::min(i + 2, kCount)));
    program.release(io, kFirst + i);
    expect_getattr_reply(c, kFirst + i);
  }
  EXPECT_EQ(program.max_waiting(), 2u);
}

TEST_F(RpcServerTest, OversizedRecordClosesOnlyThatConnection) {
  server::ServerLimits limits;
  limits.connection.max_record_bytes = 1024;
  start(limits);
  LoopbackClient bystander(port);
  bystander.send(with_record_mark(null_call(1)));
  expect_null_reply(bystander, 1);  // connected and served before

  const std::size_t calls_before = program.call_count();
  LoopbackClient bad(port);
  std::vector<std::uint8_t> bytes = {0x80, 0x00, 0x10, 0x00};  // last fragment, 4096 bytes
  bytes.resize(4 + 200, 0x42);
  bad.send(bytes);
  EXPECT_TRUE(bad.closed_by_peer());
  EXPECT_EQ(program.call_count(), calls_before);

  bystander.send(with_record_mark(null_call(2)));
  expect_null_reply(bystander, 2);
  LoopbackClient later(port);  // still accepting
  later.send(with_record_mark(null_call(3)));
  expect_null_reply(later, 3);
}

TEST_F(RpcServerTest, RecordAtTheLimitIsServed) {
  const std::vector<std::uint8_t> call = null_call(9);
  server::ServerLimits limits;
  limits.connection.max_record_bytes = call.size();
  start(limits);
  LoopbackClient c(port);
  c.send(with_record_mark(call));
  expect_null_reply(c, 9);
}

TEST_F(RpcServerTest, FragmentsAndByteByByteWritesAreReassembled) {
  start({});
  LoopbackClient c(port);
  // One call in two fragments: the first without the last-fragment bit.
  const std::vector<std::uint8_t> call = getattr_call(300);
  const std::size_t half = call.size() / 2;
  std::vector<std::uint8_t> first(call.begin(), call.begin() + half);
  std::vector<std::uint8_t> second(call.begin() + half, call.end());
  std::vector<std::uint8_t> wire = with_record_mark(first);
  wire[0] &= 0x7F;
  const auto tail = with_record_mark(second);
  wire.insert(wire.end(), tail.begin(), tail.end());
  for (std::uint8_t b : wire) c.send({b});
  ASSERT_TRUE(program.wait_for_arrivals(1));
  program.release(io, 300);
  expect_getattr_reply(c, 300);
}

TEST_F(RpcServerTest, GarbageRecordGetsNoReplyButTheConnectionLives) {
  start({});
  LoopbackClient c(port);
  c.send(with_record_mark({1, 2}));  // too short for an xid: nothing to answer
  c.send(with_record_mark(null_call(11)));
  expect_null_reply(c, 11);  // the next reply is for the NULL call
}

// Clients that send a call and hang up at once, served by several I/O threads as in
// production: the call may still be starting when the read loop sees EOF and lets
// go of the connection. Must neither crash nor corrupt memory, and the server must
// keep serving.
//
// BUG (found by this test, left failing on purpose; reliably caught only in the
// NFSGW_SANITIZE=ON build, where ASan reports heap-use-after-free): read_loop
// co_spawns serve_call(record), a member coroutine that holds only `this`; it takes
// shared_from_this() when its body first runs, which is after a post. If the read
// loop meanwhile hits EOF, closes and returns, the last shared_ptr goes away and
// serve_call runs on a freed Connection (connection.cpp, `auto self =
// shared_from_this();`). Fix: hand the shared_ptr over before the spawn, e.g.
// co_spawn(ex, [self = shared_from_this(), rec = assembler.take_record()]() mutable
// { return self->serve_call(std::move(rec)); }, detached), or pass `self` as a
// parameter of serve_call.
TEST_F(RpcServerTest, ClientsHangingUpRightAfterACallAreSafe) {
  start({}, 4);
  for (std::uint32_t i = 0; i < 300; ++i) {
    LoopbackClient c(port);
    const auto one = with_record_mark(null_call(1000 + i));
    std::vector<std::uint8_t> two = one;
    two.insert(two.end(), one.begin(), one.end());
    c.send(two);
  }  // each client closes its socket here, without reading
  LoopbackClient last(port);
  last.send(with_record_mark(null_call(5)));
  expect_null_reply(last, 5);
}

}  // namespace
}  // namespace nfsgw::test
