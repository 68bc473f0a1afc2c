// Connection and RpcServer over loopback: several calls in one burst answered out
// of order, backpressure on calls in flight, oversized records closing only their
// own connection, and fragmented records reassembled.
#include <gtest/gtest.h>

#include <utility>

#include <condition_variable>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <boost/asio.hpp>

#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "gateway/server/rpc_server.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/loopback_client.h"
#include "tests/unit/gateway/rpc_test_helpers.h"

namespace nfsgw::test {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// GETATTR waits until the test releases its xid, then answers fileid = xid. Runs
/// on the server's single I/O thread, so the gate and its timer need no strand.
class GatedProgram : public FakeNfs3Program {
 public:
  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs) override {
    record("getattr", ctx);
    auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                      asio::steady_timer::time_point::max());
    {
      std::lock_guard lock(mu_);
      gates_[ctx.xid] = timer;
      ++waiting_;
      max_waiting_ = std::max(max_waiting_, waiting_);
    }
    cv_.notify_all();
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (released_.count(ctx.xid)) {
          --waiting_;
          break;
        }
      }
      boost::system::error_code ec;
      co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    nfs3::GetattrRes res;
    res.status = nfs3::Status::Ok;
    res.attributes.fileid = ctx.xid;
    co_return res;
  }

  /// Waits (bounded) until at least n calls have arrived.
  bool wait_for_arrivals(std::size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return gates_.size() >= n; });
  }
  std::size_t arrived() {
    std::lock_guard lock(mu_);
    return gates_.size();
  }
  std::size_t max_waiting() {
    std::lock_guard lock(mu_);
    return max_waiting_;
  }

  /// Lets the call with `xid` finish (on the I/O thread, where its timer lives).
  void release(asio::io_context& io, std::uint32_t xid) {
    asio::post(io, [this, xid] {
      std::shared_ptr<asio::steady_timer> t;
      {
        std::lock_guard lock(mu_);
        released_.insert(xid);
        if (auto it = gates_.find(xid); it != gates_.end()) t = it->second;
      }
      if (t) t->cancel();
    });
  }
  /// Drops the timers; called once the io_context has stopped, before it is destroyed
  /// (a timer must not outlive its io_context).
  void clear_gates() {
    std::lock_guard lock(mu_);
    gates_.clear();
  }
  void release_all(asio::io_context& io) {
    std::vector<std::uint32_t> xids;
    {
      std::lock_guard lock(mu_);
      for (const auto& [xid, t] : gates_) xids.push_back(xid);
    }
    for (auto x : xids) release(io, x);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint32_t, std::shared_ptr<asio::steady_timer>> gates_;
  std::set<std::uint32_t> released_;
  std::size_t waiting_ = 0, max_waiting_ = 0;
};

class RpcServerTest : public ::testing::Test {
 protected:
  /// More than one thread only for tests that never touch GatedProgram's gates.
  void start(server::ConnectionLimits limits, unsigned threads = 1) {
    dispatcher.add(rpc::make_nfs3_table(program));
    server = std::make_unique<server::RpcServer>(io, dispatcher, limits);
    port = server->listen("127.0.0.1", 0);
    ASSERT_NE(port, 0);
    runner = std::async(std::launch::async, [this, threads] {
      std::vector<std::thread> more;
      for (unsigned i = 1; i < threads; ++i) more.emplace_back([this] { io.run(); });
      io.run();
      for (auto& t : more) t.join();
    });
  }

  void TearDown() override {
    if (!server) return;
    program.release_all(io);
    asio::post(io, [this] { server->stop(); });
    // Everything ends by itself once the server stopped; bound the wait anyway.
    if (runner.wait_for(10s) != std::future_status::ready) {
      ADD_FAILURE() << "the server's io_context did not run out of work after stop()";
      io.stop();
    }
    runner.get();
    program.clear_gates();
  }

  static std::vector<std::uint8_t> getattr_call(std::uint32_t xid) {
    CallSpec s;
    s.xid = xid;
    s.prog = nfs3::kProgram;
    s.vers = nfs3::kVersion;
    s.proc = static_cast<std::uint32_t>(nfs3::Proc::Getattr);
    nfs3::GetattrArgs a;
    a.object = nfs3::FileHandle(std::vector<std::uint8_t>{1, 2, 3, 4});
    return call_record(s, a);
  }
  static std::vector<std::uint8_t> null_call(std::uint32_t xid) {
    CallSpec s;
    s.xid = xid;
    s.prog = nfs3::kProgram;
    s.vers = nfs3::kVersion;
    return call_record(s, NoArgs{});
  }

  /// Reads one reply and checks it is a successful GETATTR for `xid`.
  static void expect_getattr_reply(LoopbackClient& c, std::uint32_t xid) {
    const auto rec = c.read_record();
    ASSERT_TRUE(rec) << "no reply for xid " << xid;
    const Reply rep = parse_reply(*rec);
    EXPECT_EQ(rep.header.xid, xid);
    ASSERT_EQ(rep.header.accept, rpc::AcceptStat::Success);
    EXPECT_EQ(decode_result<nfs3::GetattrRes>(rep.body).attributes.fileid, xid);
  }
  static void expect_null_reply(LoopbackClient& c, std::uint32_t xid) {
    const auto rec = c.read_record();
    ASSERT_TRUE(rec) << "no reply for NULL xid " << xid;
    const Reply rep = parse_reply(*rec);
    EXPECT_EQ(rep.header.xid, xid);
    EXPECT_EQ(rep.header.accept, rpc::AcceptStat::Success);
    EXPECT_TRUE(rep.body.empty());
  }

  GatedProgram program;
  rpc::Dispatcher dispatcher;
  asio::io_context io;  // one thread: see GatedProgram
  std::unique_ptr<server::RpcServer> server;
  std::future<void> runner;
  std::uint16_t port = 0;
};

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

TEST_F(RpcServerTest, CallsInFlightAreBounded) {
  server::ConnectionLimits limits;
  limits.max_calls_in_flight = 2;
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
  server::ConnectionLimits limits;
  limits.max_record_bytes = 1024;
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
  server::ConnectionLimits limits;
  limits.max_record_bytes = call.size();
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
