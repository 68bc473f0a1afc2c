// ByteBudget (cache/byte_budget.h): bytes are taken in order, a taker that does
// not fit waits until enough is given back, optional work is refused, and nothing
// is ever refused to a taker that can wait.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/waiting.h"

#include "cache/byte_budget.h"

namespace nfsgw::cache {
namespace {

TEST(ByteBudget, ATakerThatDoesNotFitWaitsUntilEnoughIsGivenBack) {
  ByteBudget b(10);
  EXPECT_TRUE(b.try_take(6));
  std::vector<int> granted;
  EXPECT_FALSE(b.take_or_wait(5, [&] { granted.push_back(1); }));
  EXPECT_TRUE(granted.empty());
  EXPECT_EQ(b.usage().used, 6u);
  EXPECT_EQ(b.usage().waits, 1u);
  b.release(6);
  EXPECT_EQ(granted, std::vector<int>{1});
  EXPECT_EQ(b.usage().used, 5u) << "taken on the waiter's behalf";
  b.release(5);
  EXPECT_EQ(b.usage().used, 0u);
  EXPECT_EQ(b.usage().peak, 6u);
}

TEST(ByteBudget, WaitersAreServedInOrderAndOptionalWorkDoesNotJumpTheQueue) {
  ByteBudget b(10);
  ASSERT_TRUE(b.try_take(8));
  std::vector<int> order;
  EXPECT_FALSE(b.take_or_wait(6, [&] { order.push_back(1); }));
  // 1 byte would fit, but someone waits: refused, and a taker that waits queues.
  EXPECT_FALSE(b.try_take(1));
  EXPECT_EQ(b.usage().refused, 1u);
  EXPECT_FALSE(b.take_or_wait(1, [&] { order.push_back(2); }));
  b.release(8);
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(b.usage().used, 7u);
  b.release(7);
}

TEST(ByteBudget, ARequestLargerThanTheLimitRunsAlone) {
  ByteBudget b(10);
  ASSERT_TRUE(b.try_take(3));
  bool granted = false;
  EXPECT_FALSE(b.take_or_wait(25, [&] { granted = true; }));
  b.release(3);
  EXPECT_TRUE(granted) << "never refused for good";
  EXPECT_EQ(b.usage().used, 25u);
  EXPECT_FALSE(b.try_take(1)) << "nothing else while it holds more than the limit";
  b.release(25);
  EXPECT_TRUE(b.try_take(10));
  b.release(10);
}

TEST(ByteBudget, TakeBlockingReturnsOnlyOnceTheBytesFit) {
  ByteBudget b(10);
  ASSERT_TRUE(b.try_take(7));
  std::atomic<bool> returned{false};
  std::thread t([&] {
    b.take_blocking(5);
    returned = true;
  });
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return b.usage().waits == 1; }, std::chrono::seconds(10),
                                      "the taker waiting"));
  EXPECT_FALSE(returned.load()) << "7 + 5 > 10: it must wait";
  b.release(7);
  t.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(b.usage().used, 5u);
  b.release(5);
}

TEST(ByteBudget, AGrantGivesItsBytesBackWhenItGoes) {
  auto b = std::make_shared<ByteBudget>(100);
  {
    ASSERT_TRUE(b->try_take(40));
    ByteGrant g(b, 40);
    g.keep_only(10);
    EXPECT_EQ(b->usage().used, 10u);
    ByteGrant moved = std::move(g);
    EXPECT_EQ(g.bytes(), 0u);
    EXPECT_EQ(moved.bytes(), 10u);
  }
  EXPECT_EQ(b->usage().used, 0u);
}

}  // namespace
}  // namespace nfsgw::cache
