// UpstreamPool on its own: port discovery through rpcbind, and what happens to
// calls still waiting for an origin when the pool is stopped.
#include <utility>

#include <future>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "gateway/upstream/upstream_pool.h"
#include "tests/upstream/origin_fixture.h"
#include "tests/support/waiting.h"

namespace nfsgw::upstream {
namespace {

using namespace std::chrono_literals;

/// Records how the pool answered it; never expects to be sent.
class RecordingCall final : public UpstreamCall {
 public:
  explicit RecordingCall(std::promise<nfs3::Status>& done) : done_(done) {}
  int queue(struct rpc_context*, RpcCallback, void*) override { return -1; }
  void on_reply(void*) override { done_.set_value(nfs3::Status::Ok); }
  void on_fail(nfs3::Status s) override { done_.set_value(s); }

 private:
  std::promise<nfs3::Status>& done_;
};

class PoolTest : public ::testing::Test {
 protected:
  PoolTest() : work_(io_.get_executor()) {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~PoolTest() override {
    // A stopped pool leaves no work behind: run() returns by itself. Every test
    // here stops its pool, so this checks it after each one.
    EXPECT_TRUE(test::runs_dry(io_, work_)) << "work was still posted to the io_context 5 s after the pool stopped";
    io_.stop();  // ends the thread either way
    thread_.join();
  }
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

TEST_F(PoolTest, AsksRpcbindForThePortWhenItIsZero) {
  // rpcbind itself is always registered with rpcbind (program 100000 v2): a safe
  // target that does not depend on which NFS server holds the NFS registration.
  auto pool = std::make_shared<UpstreamPool>(io_, Endpoint{"127.0.0.1", 0, 100000, 2}, 2);
  pool->start();
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return pool->connections_up() >= 2; }, 60s, "two connections up"));
  EXPECT_EQ(pool->connections_up(), 2u);
  pool->stop();
  EXPECT_EQ(pool->connections_up(), 0u);
}

TEST_F(PoolTest, StopAnswersWaitingCallsWithJukebox) {
  // Nothing listens on this port: the call can only wait.
  auto pool = std::make_shared<UpstreamPool>(io_, Endpoint{"127.0.0.1", 21491, 100003, 3}, 1);
  pool->start();
  std::promise<nfs3::Status> done;
  auto call = std::make_unique<RecordingCall>(done);
  call->idempotent = false;
  pool->submit(std::move(call));
  auto fut = done.get_future();
  EXPECT_EQ(fut.wait_for(300ms), std::future_status::timeout);
  pool->stop();
  ASSERT_EQ(fut.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(fut.get(), nfs3::Status::Jukebox);

  // After stop, new calls are answered at once, never queued.
  std::promise<nfs3::Status> late;
  pool->submit(std::make_unique<RecordingCall>(late));
  auto late_fut = late.get_future();
  ASSERT_EQ(late_fut.wait_for(60s), std::future_status::ready);
  EXPECT_EQ(late_fut.get(), nfs3::Status::Jukebox);
}

}  // namespace
}  // namespace nfsgw::upstream
