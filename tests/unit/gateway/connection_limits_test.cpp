// What a connection, and all of them together, may hold of the server: a call
// counts until its reply is written (not merely queued), reading stops while a
// connection's replies are not drained, server-wide limits hold every connection,
// connections above max_connections are closed at once, and an idle connection is
// closed after its timeout (but not one whose call is still running), which the
// tests measure with a clock they move.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "cache/monotonic_clock.h"
#include "tests/support/waiting.h"
#include "tests/unit/gateway/rpc_server_fixture.h"

namespace nfsgw::test {
namespace {

constexpr std::uint32_t kMiB = 1u << 20;
constexpr int kSmallReceiveBuffer = 64 * 1024;
constexpr std::uint32_t kCalls = 64;
/// Replies of 1 MiB that TCP itself can hold on loopback (the server's send buffer,
/// autotuned up to tcp_wmem's maximum, and the client's 64 KiB receive buffer).
constexpr std::size_t kSocketSlack = 8;

class ConnectionLimitsTest : public RpcServerTest {
 protected:
  void SetUp() override {
    program.read_res.status = nfs3::Status::Ok;
    program.read_res.count = kMiB;
    program.read_res.data = nfs3::Payload::uninitialized(kMiB);
  }

  static std::vector<std::uint8_t> read_call(std::uint32_t xid, std::uint32_t count = kMiB) {
    CallSpec s;
    s.xid = xid;
    s.prog = nfs3::kProgram;
    s.vers = nfs3::kVersion;
    s.proc = static_cast<std::uint32_t>(nfs3::Proc::Read);
    nfs3::ReadArgs a;
    a.file = nfs3::FileHandle(std::vector<std::uint8_t>{1, 2, 3, 4});
    a.count = count;
    return call_record(s, a);
  }

  /// kCalls READs of 1 MiB in one write, xids first..first+kCalls-1.
  static std::vector<std::uint8_t> read_burst(std::uint32_t first) {
    std::vector<std::uint8_t> burst;
    for (std::uint32_t i = 0; i < kCalls; ++i) {
      const auto rec = with_record_mark(read_call(first + i));
      burst.insert(burst.end(), rec.begin(), rec.end());
    }
    return burst;
  }

  /// The program's call count once it has not changed for 500 ms (at most 10 s).
  std::size_t settled_call_count() {
    return wait_until_settled([this] { return program.call_count(); }, 500ms, 10s);
  }

  /// Moves the server's clock and sweeps for idle connections at the new time
  /// (what the server's own sweep timer does at its next tick).
  void advance(cache::ManualMonotonicClock& clock, std::chrono::milliseconds by) {
    clock.advance(by);
    server->sweep_idle();
  }

  /// Reads kCalls READ replies (any order) and checks each carries 1 MiB.
  static void expect_all_read_replies(LoopbackClient& c, std::uint32_t first) {
    std::set<std::uint32_t> seen;
    for (std::uint32_t i = 0; i < kCalls; ++i) {
      const auto rec = c.read_record();
      ASSERT_TRUE(rec) << "reply " << i << " of " << kCalls << " never came";
      const Reply rep = parse_reply(*rec);
      ASSERT_EQ(rep.header.accept, rpc::AcceptStat::Success);
      EXPECT_EQ(decode_result<nfs3::ReadRes>(rep.body).data.size(), kMiB);
      seen.insert(rep.header.xid);
    }
    EXPECT_EQ(seen.size(), kCalls);
    EXPECT_EQ(*seen.begin(), first);
    EXPECT_EQ(*seen.rbegin(), first + kCalls - 1);
  }
};

TEST_F(ConnectionLimitsTest, ACallCountsUntilItsReplyIsWritten) {
  server::ServerLimits limits;
  limits.connection.max_calls_in_flight = 4;
  limits.connection.max_pending_bytes = std::size_t{1} << 30;  // only the count limits here
  start(limits);
  LoopbackClient c(port, kSmallReceiveBuffer);
  c.send(read_burst(1000));  // and read nothing yet

  // Replies queued but not written still count: the server stops reading after a
  // few, instead of running all 64 and keeping 64 MiB of replies.
  const std::size_t served = settled_call_count();
  EXPECT_GE(served, 4u);
  EXPECT_LE(served, 4 + kSocketSlack);
  EXPECT_LE(server->usage().calls, 4u);

  expect_all_read_replies(c, 1000);  // once the client reads, every reply arrives
  EXPECT_EQ(program.call_count(), kCalls);
}

TEST_F(ConnectionLimitsTest, ReadingStopsWhileAConnectionsRepliesAreNotDrained) {
  server::ServerLimits limits;
  limits.connection.max_pending_bytes = 4 * kMiB;  // the default 128 calls stay allowed
  start(limits);
  LoopbackClient c(port, kSmallReceiveBuffer);
  c.send(read_burst(2000));

  const std::size_t served = settled_call_count();
  EXPECT_GE(served, 3u);
  EXPECT_LE(served, 4 + kSocketSlack);
  const auto held = server->usage();
  EXPECT_LE(held.bytes, 4 * kMiB);  // replies waiting and reservations, together
  EXPECT_GE(held.bytes, 2 * kMiB);  // positive control: the counter does count them

  expect_all_read_replies(c, 2000);
  EXPECT_EQ(program.call_count(), kCalls);
  // Everything written: nothing is held any more.
  EXPECT_TRUE(wait_until([&] { return server->usage().calls == 0; }, 2s, "every call given back"));
  EXPECT_EQ(server->usage().calls, 0u);
  EXPECT_EQ(server->usage().bytes, 0u);
}

TEST_F(ConnectionLimitsTest, AServerWideLimitHoldsEveryConnectionUntilRepliesDrain) {
  server::ServerLimits limits;
  limits.connection.max_calls_in_flight = 4;
  limits.max_calls_in_flight_total = 4;
  start(limits);
  LoopbackClient slow(port, kSmallReceiveBuffer);
  slow.send(read_burst(3000));
  settled_call_count();
  EXPECT_LE(server->usage().calls, 4u);

  LoopbackClient other(port);
  other.send(with_record_mark(null_call(77)));
  EXPECT_FALSE(other.read_record(1s)) << "served although the server was at its limit";

  expect_all_read_replies(slow, 3000);
  expect_null_reply(other, 77);  // served once the slow reader's replies drained
}

TEST_F(ConnectionLimitsTest, ConnectionsAboveMaxConnectionsAreClosedAtOnce) {
  server::ServerLimits limits;
  limits.max_connections = 2;
  start(limits);
  auto a = std::make_unique<LoopbackClient>(port);
  LoopbackClient b(port);
  a->send(with_record_mark(null_call(1)));
  expect_null_reply(*a, 1);
  b.send(with_record_mark(null_call(2)));
  expect_null_reply(b, 2);

  {
    LoopbackClient refused(port);  // accepted by the kernel, then closed by nfsgw
    try {
      refused.send(with_record_mark(null_call(3)));
    } catch (const boost::system::system_error&) {
      // already reset: as good as a close
    }
    EXPECT_TRUE(refused.closed_by_peer());
  }
  b.send(with_record_mark(null_call(4)));
  expect_null_reply(b, 4);  // those admitted are unaffected

  a.reset();  // a slot frees once nfsgw has seen `a` go
  auto served = [&] {
    LoopbackClient later(port);
    try {
      later.send(with_record_mark(null_call(5)));
      return later.read_record(1s).has_value();
    } catch (const boost::system::system_error&) {
      return false;
    }
  };
  EXPECT_TRUE(wait_until(served, 10s, "a connection admitted after one of the two closed"));
}

TEST_F(ConnectionLimitsTest, AnIdleConnectionIsClosedAfterItsTimeout) {
  cache::ManualMonotonicClock clock;
  timer_clock = &clock;
  server::ServerLimits limits;
  limits.connection.idle_timeout = 300ms;
  start(limits);
  LoopbackClient busy(port);
  LoopbackClient idle(port);
  idle.send(with_record_mark(null_call(1)));
  expect_null_reply(idle, 1);
  // Positive control: a connection that keeps calling, every 100 ms for 1.2 s
  // (four timeouts), stays open.
  for (std::uint32_t i = 0; i < 12; ++i) {
    busy.send(with_record_mark(null_call(100 + i)));
    expect_null_reply(busy, 100 + i);
    advance(clock, 100ms);
  }
  EXPECT_TRUE(idle.closed_by_peer());
  busy.send(with_record_mark(null_call(200)));
  expect_null_reply(busy, 200);
}

TEST_F(ConnectionLimitsTest, AConnectionWhoseCallIsStillRunningIsNotIdle) {
  cache::ManualMonotonicClock clock;
  timer_clock = &clock;
  server::ServerLimits limits;
  limits.connection.idle_timeout = 300ms;
  start(limits);
  LoopbackClient c(port);
  LoopbackClient quiet(port);  // looked at by the same sweeps: shows they ran
  quiet.send(with_record_mark(null_call(1)));
  expect_null_reply(quiet, 1);
  c.send(with_record_mark(getattr_call(42)));
  ASSERT_TRUE(program.wait_for_arrivals(1));
  advance(clock, 1s);  // the call waits (a slow origin) for three timeouts
  EXPECT_TRUE(quiet.closed_by_peer());
  // The sweep looked at `c` before its reply can come: both go through its strand.
  program.release(io, 42);
  expect_getattr_reply(c, 42);
}

TEST_F(ConnectionLimitsTest, AFloodOfCallsNoProcedureAnswersIsSlowedDown) {
  start({});
  LoopbackClient flood(port);
  constexpr std::uint32_t kFlood = 100;
  std::vector<std::uint8_t> burst;
  for (std::uint32_t i = 0; i < kFlood; ++i) {
    CallSpec s;
    s.xid = 5000 + i;
    s.prog = 0x20000000 + i;  // PROG_UNAVAIL
    s.vers = 1;
    const auto rec = with_record_mark(call_record(s, NoArgs{}));
    burst.insert(burst.end(), rec.begin(), rec.end());
  }
  const auto t0 = std::chrono::steady_clock::now();
  flood.send(burst);
  // A bystander is served at once meanwhile.
  LoopbackClient other(port);
  other.send(with_record_mark(null_call(1)));
  expect_null_reply(other, 1);
  // The first few refusals come at once, then ever slower: within 300 ms far fewer
  // than the 100 sent (without the throttle, all 100 come in a few milliseconds).
  std::size_t answered = 0;
  while (std::chrono::steady_clock::now() - t0 < 300ms && flood.read_record(1s)) ++answered;
  EXPECT_GE(answered, 8u);
  EXPECT_LE(answered, 20u);
  // The penalty is the flooding connection's own: another one's few unknown calls,
  // and then a NULL, are answered at once.
  LoopbackClient fresh(port);
  for (std::uint32_t i = 0; i < 3; ++i) {
    CallSpec s;
    s.xid = 9000 + i;
    s.prog = 0x30000000;
    s.vers = 1;
    fresh.send(with_record_mark(call_record(s, NoArgs{})));
    ASSERT_TRUE(fresh.read_record());
  }
  fresh.send(with_record_mark(null_call(2)));
  expect_null_reply(fresh, 2);
}

}  // namespace
}  // namespace nfsgw::test
