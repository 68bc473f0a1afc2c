// The timer clocks: the real one ends a wait at its deadline by itself; a manual
// one moves only when told to, and then wakes the waiters registered with it.
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "cache/monotonic_clock.h"

using namespace nfsgw::cache;
using namespace std::chrono_literals;

namespace {

/// A thread waiting through `clock` until the clock reaches `deadline`, as the
/// metadata store's thread does. Constructed once the thread is waiting.
class Waiter {
 public:
  Waiter(MonotonicClock& clock, MonotonicClock::time_point deadline) {
    std::promise<void> holding;
    auto held = holding.get_future();
    done_ = std::async(std::launch::async, [this, &clock, deadline, holding = std::move(holding)]() mutable {
      std::unique_lock lock(mu);
      holding.set_value();
      while (!stop_ && clock.now() < deadline) clock.wait_until(cv, lock, deadline);
    });
    held.wait();
    std::lock_guard lock(mu);  // free again only once the thread waits
  }
  /// A test that failed does not hang here: the thread is told to stop.
  ~Waiter() {
    {
      std::lock_guard lock(mu);
      stop_ = true;
    }
    cv.notify_all();
  }
  bool ended_within(std::chrono::milliseconds limit) { return done_.wait_for(limit) == std::future_status::ready; }

  std::mutex mu;
  std::condition_variable cv;

 private:
  bool stop_ = false;
  std::future<void> done_;
};

}  // namespace

TEST(MonotonicClock, TheRealClockEndsAWaitAtItsDeadline) {
  auto& clock = monotonic_clock();
  const auto start = clock.now();
  Waiter waiter(clock, start + 20ms);
  EXPECT_EQ(clock.wake_on_advance(waiter.cv, waiter.mu), nullptr);  // nothing to register
  ASSERT_TRUE(waiter.ended_within(5s)) << "the wait never ended";
  EXPECT_GE(clock.now() - start, 20ms);
}

TEST(MonotonicClock, AManualClockMovesOnlyWhenTold) {
  ManualMonotonicClock clock;
  const auto t = clock.now();
  EXPECT_EQ(clock.now(), t);
  clock.advance(90s);
  EXPECT_EQ(clock.now(), t + 90s);
}

TEST(MonotonicClock, AMoveWakesARegisteredWaiterWhichEndsAtItsDeadline) {
  ManualMonotonicClock clock;
  Waiter waiter(clock, clock.now() + 30s);
  const auto watch = clock.wake_on_advance(waiter.cv, waiter.mu);
  ASSERT_NE(watch, nullptr);
  clock.advance(29s);
  EXPECT_FALSE(waiter.ended_within(0ms)) << "ended before its deadline";
  clock.advance(1s);
  EXPECT_TRUE(waiter.ended_within(5s)) << "the move to the deadline woke no one";
}
