// The pool against an origin that freezes (TCP open, no replies), is slow but
// alive, or whose callers go away: per-call timeouts (origin_timeout), reconnect
// and re-send, JUKEBOX for lost non-idempotent calls, keepalive on the socket, and
// abandoned work. Uses FakeOrigin (a loopback RPC server that can hold calls).
#include <utility>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "gateway/upstream/origin_socket.h"
#include "gateway/upstream/upstream_pool.h"
#include "tests/support/waiting.h"
#include "tests/upstream/fake_origin.h"

namespace nfsgw::upstream::test {
namespace {

using namespace std::chrono_literals;
using Mode = FakeOrigin::Mode;

/// An NFS NULL call that reports how it was answered.
class NullCall final : public UpstreamCall {
 public:
  explicit NullCall(std::shared_ptr<std::promise<nfs3::Status>> done) : done_(std::move(done)) {
    what = "NULL";
  }
  int queue(struct rpc_context* rpc, RpcCallback cb, void* p) override {
    return rpc_nfs3_null_async(rpc, cb, p);
  }
  void on_reply(void*) override { done_->set_value(nfs3::Status::Ok); }
  void on_fail(nfs3::Status s) override { done_->set_value(s); }

 private:
  std::shared_ptr<std::promise<nfs3::Status>> done_;
};

/// An NFS WRITE of `bytes` bytes that counts how often it was handed to libnfs
/// (which encodes it, data included, at once) and how many of its kind exist.
class WriteCall final : public UpstreamCall {
 public:
  WriteCall(std::shared_ptr<std::promise<nfs3::Status>> done, std::size_t bytes, std::atomic<int>& queued,
            std::atomic<int>& alive)
      : done_(std::move(done)), data_(bytes, 'w'), queued_(queued), alive_(alive) {
    what = "WRITE";
    payload = bytes;
    ++alive_;
  }
  ~WriteCall() override { --alive_; }
  int queue(struct rpc_context* rpc, RpcCallback cb, void* p) override {
    ++queued_;
    ::WRITE3args a{};
    a.file.data.data_len = sizeof fh_;
    a.file.data.data_val = fh_;
    a.count = static_cast<count3>(data_.size());
    a.stable = UNSTABLE;
    a.data.data_len = static_cast<u_int>(data_.size());
    a.data.data_val = data_.data();
    return rpc_nfs3_write_async(rpc, cb, &a, p);
  }
  void on_reply(void*) override { done_->set_value(nfs3::Status::Ok); }
  void on_fail(nfs3::Status s) override { done_->set_value(s); }

 private:
  std::shared_ptr<std::promise<nfs3::Status>> done_;
  char fh_[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<char> data_;
  std::atomic<int>& queued_;
  std::atomic<int>& alive_;
};

struct Sent {
  std::shared_ptr<std::promise<nfs3::Status>> promise = std::make_shared<std::promise<nfs3::Status>>();
  std::future<nfs3::Status> future = promise->get_future();
};

/// Bounded wait for `cond` (tests/support/waiting.h).
template <typename F>
::testing::AssertionResult eventually(F cond, std::chrono::milliseconds limit = 15s) {
  return nfsgw::test::wait_until(std::move(cond), limit, "the condition");
}

class TimeoutTest : public ::testing::Test {
 protected:
  TimeoutTest() : work_(io_.get_executor()) {
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TimeoutTest() override {
    if (pool_) pool_->stop();
    work_.reset();
    (void)eventually([&] { return io_.stopped(); }, 3s);
    io_.stop();
    thread_.join();
  }
  /// A started pool of `connections` to the fake origin, with `timeout`.
  UpstreamPool& pool(std::chrono::milliseconds timeout, unsigned connections = 1) {
    pool_ = std::make_shared<UpstreamPool>(io_, Endpoint{"127.0.0.1", origin_.port(), 100003, 3},
                                           connections, UpstreamOptions{timeout});
    pool_->start();
    EXPECT_TRUE(eventually([&] { return pool_->connections_up() == connections; }));
    return *pool_;
  }
  Sent submit(bool idempotent, std::shared_ptr<const std::atomic<bool>> gone = nullptr) {
    Sent s;
    auto call = std::make_unique<NullCall>(s.promise);
    call->idempotent = idempotent;
    call->caller_gone = std::move(gone);
    pool_->submit(std::move(call));
    return s;
  }

  FakeOrigin origin_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
  std::shared_ptr<UpstreamPool> pool_;
};

TEST_F(TimeoutTest, FrozenOriginJukeboxesTheLostNonIdempotentCallAndResendsTheIdempotentOne) {
  pool(1s);
  origin_.set_mode(Mode::Frozen);
  auto remove_like = submit(/*idempotent=*/false);
  auto getattr_like = submit(/*idempotent=*/true);
  ASSERT_TRUE(eventually([&] { return origin_.calls() == 2; }));

  // After origin_timeout without a reply the connection is declared dead: the
  // non-idempotent call is answered JUKEBOX (the client retries it itself).
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(remove_like.future.wait_for(10s), std::future_status::ready)
      << "a call to a frozen origin was never answered";
  EXPECT_EQ(remove_like.future.get(), nfs3::Status::Jukebox);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 500ms);  // not before the timeout

  // The idempotent one waits, re-sent on a new connection, as a hard mount does.
  EXPECT_EQ(getattr_like.future.wait_for(0ms), std::future_status::timeout);
  ASSERT_TRUE(eventually([&] { return origin_.connections() >= 2 && origin_.calls() >= 3; }))
      << "connections " << origin_.connections() << ", calls " << origin_.calls();

  origin_.set_mode(Mode::Answer);  // the origin wakes up
  ASSERT_EQ(getattr_like.future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(getattr_like.future.get(), nfs3::Status::Ok);

  // And the pool serves normally afterwards.
  auto later = submit(false);
  ASSERT_EQ(later.future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(later.future.get(), nfs3::Status::Ok);
}

TEST_F(TimeoutTest, ConnectionsDroppedBeforeAnyReplyAreFailedAttemptsAndTheBackoffGrows) {
  // A relay that accepts and drops at once (wan-emu while its link is cut): each
  // such connection was counted as working, so the retries never slowed down
  // (every 100 ms, each one logging "connected" and "connection lost").
  pool(5s);
  auto first = submit(true);
  ASSERT_EQ(first.future.wait_for(10s), std::future_status::ready);
  ASSERT_EQ(first.future.get(), nfs3::Status::Ok);  // answered: a working connection
  const int before = origin_.connections();

  origin_.set_mode(Mode::Drop);
  nfsgw::test::pass_time(3s, "the attempts are counted over 3 s");
  // Backoff 100, 200, 400, 800, 1600 ms: about 4 attempts in 3 s (30 without it).
  const int attempts = origin_.connections() - before;
  EXPECT_GE(attempts, 2) << "positive control: the pool kept trying";
  EXPECT_LE(attempts, 7) << "the pool retried every " << 3000 / std::max(attempts, 1) << " ms";

  // Reachable again: served within the longest backoff (2 s).
  origin_.set_mode(Mode::Answer);
  auto after = submit(true);
  ASSERT_EQ(after.future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(after.future.get(), nfs3::Status::Ok);
  EXPECT_TRUE(eventually([&] { return pool_->connections_up() == 1; }));
}

TEST_F(TimeoutTest, FrozenOriginKeepsBeingRetriedWhileItStaysFrozen) {
  pool(1s);
  origin_.set_mode(Mode::Frozen);
  auto call = submit(true);
  // Re-sent once per timeout, each time on a fresh connection.
  ASSERT_TRUE(eventually([&] { return origin_.connections() >= 4; }, 20s))
      << "connections " << origin_.connections();
  EXPECT_GE(origin_.calls(), 3);
  EXPECT_EQ(call.future.wait_for(0ms), std::future_status::timeout);
  origin_.set_mode(Mode::Answer);
  ASSERT_EQ(call.future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(call.future.get(), nfs3::Status::Ok);
}

TEST_F(TimeoutTest, SlowOriginThatKeepsAnsweringIsNotCut) {
  pool(1s);
  // 20 calls answered one every 150 ms: the last waits 3 s, three timeouts, but
  // replies keep coming, so the connection is alive and nothing is re-sent.
  origin_.set_mode(Mode::Slow, 150ms);
  std::vector<Sent> sent;
  for (int i = 0; i < 20; ++i) sent.push_back(submit(false));
  for (auto& s : sent) {
    ASSERT_EQ(s.future.wait_for(15s), std::future_status::ready);
    EXPECT_EQ(s.future.get(), nfs3::Status::Ok);
  }
  EXPECT_EQ(origin_.connections(), 1);
  EXPECT_EQ(origin_.calls(), 20);
}

/// The file descriptor of this process's TCP socket whose local port is `port`.
int own_socket_with_local_port(std::uint16_t port) {
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(e.path().filename().c_str());
    sockaddr_in a{};
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 && a.sin_family == AF_INET &&
        ntohs(a.sin_port) == port) {
      return fd;
    }
  }
  return -1;
}

int int_option(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof v;
  if (::getsockopt(fd, level, name, &v, &len) != 0) return -1;
  return v;
}

TEST_F(TimeoutTest, OriginSocketsCarryNoDelayKeepaliveAndAUserTimeout) {
  pool(12s);
  // The pool's side is connected before the fake origin's accept loop has
  // recorded the peer: wait for it (CI once read an empty list here).
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return !origin_.peer_ports().empty(); }, 10s,
                                      "the fake origin to record the pool's connection"));
  const auto peers = origin_.peer_ports();
  ASSERT_EQ(peers.size(), 1u);
  const int fd = own_socket_with_local_port(peers[0]);
  ASSERT_GE(fd, 0) << "the pool's socket was not found among this process's descriptors";
  // Nagle off: calls pipelined on one connection leave at once (libnfs leaves it on).
  EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_NODELAY), 1);
  EXPECT_EQ(int_option(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_KEEPIDLE), 6);
  EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_KEEPINTVL), 2);
  EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_KEEPCNT), 3);
  EXPECT_EQ(int_option(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 12000);
}

TEST(OriginSocketOptions, SpreadTheTimeoutOverIdleAndProbes) {
  const auto d = origin_socket_options(60s);
  EXPECT_EQ(d.keepalive_idle_s, 30);
  EXPECT_EQ(d.keepalive_interval_s, 10);
  EXPECT_EQ(d.keepalive_count, 3);
  EXPECT_EQ(d.user_timeout_ms, 60000u);
  const auto s = origin_socket_options(1s);  // never zero
  EXPECT_EQ(s.keepalive_idle_s, 1);
  EXPECT_EQ(s.keepalive_interval_s, 1);
  EXPECT_EQ(s.user_timeout_ms, 1000u);
  const auto l = origin_socket_options(600s);
  EXPECT_EQ(l.keepalive_idle_s, 300);
  EXPECT_EQ(l.keepalive_interval_s, 100);
}

TEST_F(TimeoutTest, CallsOfACallerThatLeftAreAbandonedNotKeptWaiting) {
  // A long timeout: whatever ends these calls early, it is not the timeout.
  pool(60s);
  origin_.set_mode(Mode::Frozen);
  auto gone = std::make_shared<std::atomic<bool>>(false);
  std::vector<Sent> sent;
  for (int i = 0; i < 10; ++i) sent.push_back(submit(i % 2 == 0, gone));
  auto other = submit(true);  // a caller still there
  ASSERT_TRUE(eventually([&] { return origin_.calls() == 11; }));
  EXPECT_EQ(sent[0].future.wait_for(200ms), std::future_status::timeout);

  gone->store(true);  // the client's connection closed
  for (auto& s : sent) {
    ASSERT_EQ(s.future.wait_for(5s), std::future_status::ready)
        << "a call of a caller that left is still waiting on a frozen origin";
    EXPECT_EQ(s.future.get(), nfs3::Status::Jukebox);
  }
  EXPECT_EQ(other.future.wait_for(0ms), std::future_status::timeout);  // untouched

  // A call whose caller is already gone is not sent at all: a call sent after it,
  // on the one connection, is the origin's twelfth.
  auto late = submit(true, gone);
  ASSERT_EQ(late.future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(late.future.get(), nfs3::Status::Jukebox);
  EXPECT_EQ(origin_.calls(), 11);

  origin_.set_mode(Mode::Answer);
  ASSERT_EQ(other.future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(other.future.get(), nfs3::Status::Ok);
  auto after = submit(true);
  ASSERT_EQ(after.future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(after.future.get(), nfs3::Status::Ok);
  EXPECT_EQ(origin_.calls(), 12) << "the call of a caller that left was sent";
}

TEST_F(TimeoutTest, AStuckOriginGetsABoundedQueueInsideLibnfsAndCallsOfCallersThatLeftAreFreedUnsent) {
  // A long timeout: the connection stays "up" all along. The origin reads nothing:
  // what libnfs cannot write stays in its out-queue, encoded, data included.
  pool(60s);
  origin_.set_mode(Mode::Stuck);
  constexpr int kCalls = 48;
  constexpr std::size_t kBytes = 256 * 1024;  // 12 MiB in all
  std::atomic<int> queued{0}, alive{0};
  auto gone = std::make_shared<std::atomic<bool>>(false);
  std::vector<Sent> sent;
  for (int i = 0; i < kCalls; ++i) {
    Sent s;
    auto c = std::make_unique<WriteCall>(s.promise, kBytes, queued, alive);
    c->caller_gone = gone;
    pool_->submit(std::move(c));
    sent.push_back(std::move(s));
  }
  // Whatever the socket buffers took, plus CallQueue::kMaxUnsentBytes (call_queue.h):
  // the count once it stopped growing.
  const int in_libnfs = nfsgw::test::wait_until_settled([&] { return queued.load(); }, 300ms, 5s);
  std::printf("calls handed to libnfs: %d of %d (%zu KiB each)\n", in_libnfs, kCalls, kBytes / 1024);
  EXPECT_GT(in_libnfs, 0);
  EXPECT_LE(in_libnfs, kCalls / 2) << "calls to a stuck origin were all encoded into libnfs's queue";
  EXPECT_EQ(sent[0].future.wait_for(0ms), std::future_status::timeout);

  // The callers leave: within a sweep every call is answered, and those never
  // handed to libnfs are gone entirely (never encoded, nothing left of them).
  gone->store(true);
  for (auto& s : sent) {
    ASSERT_EQ(s.future.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(s.future.get(), nfs3::Status::Jukebox);
  }
  ASSERT_TRUE(eventually([&] { return alive.load() <= in_libnfs; }, 2s))
      << alive.load() << " calls still exist, " << in_libnfs << " of them inside libnfs";
  EXPECT_EQ(nfsgw::test::wait_until_settled([&] { return queued.load(); }, 200ms, 5s), in_libnfs)
      << "calls of callers that left were handed to libnfs";
}

TEST_F(TimeoutTest, CallsOfACallerThatLeftAreNotResentAfterATimeout) {
  pool(1s);
  origin_.set_mode(Mode::Frozen);
  auto gone = std::make_shared<std::atomic<bool>>(false);
  auto call = submit(true, gone);
  ASSERT_TRUE(eventually([&] { return origin_.calls() == 1; }));
  gone->store(true);
  ASSERT_EQ(call.future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(call.future.get(), nfs3::Status::Jukebox);
  // Past the timeout and the reconnect: the call was not sent again. A call sent
  // after the reconnect, to an origin answering again, is the origin's second.
  ASSERT_TRUE(eventually([&] { return origin_.connections() >= 2; }, 10s));
  origin_.set_mode(Mode::Answer);
  auto after = submit(true);
  ASSERT_EQ(after.future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(after.future.get(), nfs3::Status::Ok);
  EXPECT_EQ(origin_.calls(), 2) << "the call of a caller that left was sent again";
}

TEST(WaitingCallsTest, CallsOfCallersThatLeftDoNotPileUpWhileNoConnectionIsUp) {
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread t([&] { io.run(); });
  {
    // Nothing listens on this port: every call waits in the pool.
    int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
    const std::uint16_t closed_port = ntohs(a.sin_port);  // bound, never listening
    auto pool = std::make_shared<UpstreamPool>(io, Endpoint{"127.0.0.1", closed_port, 100003, 3}, 1,
                                               UpstreamOptions{2s});
    pool->start();
    auto gone = std::make_shared<std::atomic<bool>>(false);
    std::vector<Sent> left;
    for (int i = 0; i < 40; ++i) {
      Sent s;
      auto c = std::make_unique<NullCall>(s.promise);
      c->caller_gone = gone;
      pool->submit(std::move(c));
      left.push_back(std::move(s));
    }
    gone->store(true);
    // Other callers keep coming: the queue is swept as it grows.
    std::vector<Sent> live;
    for (int i = 0; i < 100; ++i) {
      Sent s;
      pool->submit(std::make_unique<NullCall>(s.promise));
      live.push_back(std::move(s));
    }
    for (auto& s : left) {
      ASSERT_EQ(s.future.wait_for(5s), std::future_status::ready)
          << "a call of a caller that left is still queued";
      EXPECT_EQ(s.future.get(), nfs3::Status::Jukebox);
    }
    EXPECT_EQ(live[0].future.wait_for(0ms), std::future_status::timeout);
    pool->stop();
    for (auto& s : live) {
      ASSERT_EQ(s.future.wait_for(5s), std::future_status::ready);
      EXPECT_EQ(s.future.get(), nfs3::Status::Jukebox);
    }
    ::close(probe);
  }
  work.reset();
  (void)eventually([&] { return io.stopped(); }, 3s);
  io.stop();
  t.join();
}

}  // namespace
}  // namespace nfsgw::upstream::test
