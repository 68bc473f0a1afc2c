// LogLimit: a burst per period, then silence, then a count of what was left out.
#include <gtest/gtest.h>

#include "gateway/translator/log_limit.h"

namespace {

using namespace std::chrono_literals;

TEST(LogLimit, ABurstPerPeriodThenTheCountOfWhatWasLeftOut) {
  auto now = std::chrono::steady_clock::time_point{} + 1h;
  nfsgw::LogLimit limit(3, 10s, [&] { return now; });
  std::uint64_t dropped = 99;
  int allowed = 0;
  for (int i = 0; i < 100; ++i) {
    if (limit.allow(dropped)) {
      ++allowed;
      EXPECT_EQ(dropped, 0u);
    }
  }
  EXPECT_EQ(allowed, 3);
  now += 9s;
  EXPECT_FALSE(limit.allow(dropped)) << "still inside the period";
  now += 2s;
  ASSERT_TRUE(limit.allow(dropped));
  EXPECT_EQ(dropped, 98u) << "97 in the first period and one more before it ended";
  ASSERT_TRUE(limit.allow(dropped));
  EXPECT_EQ(dropped, 0u);
}

}  // namespace
