// The fixture of the Connection and RpcServer tests: an RpcServer on loopback over
// the NFSv3 table of a fake program whose GETATTR waits until the test releases it.
#pragma once

#include <utility>

#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include "cache/monotonic_clock.h"
#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "gateway/server/rpc_server.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/loopback_client.h"
#include "tests/unit/gateway/rpc_test_helpers.h"

namespace nfsgw::test {

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
  void start(server::ServerLimits limits, unsigned threads = 1) {
    dispatcher.add(rpc::make_nfs3_table(program));
    server = std::make_unique<server::RpcServer>(io, dispatcher, limits, *timer_clock);
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
  /// What the server measures idleness with; a test may point it at its own clock
  /// before start().
  const cache::MonotonicClock* timer_clock = &cache::monotonic_clock();
  std::unique_ptr<server::RpcServer> server;
  std::future<void> runner;
  std::uint16_t port = 0;
};

}  // namespace nfsgw::test
