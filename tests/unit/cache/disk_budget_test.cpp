// The disk budget arithmetic: when to sweep, how much, and where to cut.
#include <gtest/gtest.h>

#include "cache/disk_budget.h"

using namespace nfsgw::cache;

TEST(DiskBudget, WithinBudgetDropsNothing) {
  DiskBudget b(1000);
  const auto t = DiskBudget::Clock::now();
  EXPECT_EQ(b.share_to_drop(0, t), 0.0);
  EXPECT_EQ(b.share_to_drop(1000, t), 0.0);
  EXPECT_GT(b.share_to_drop(1001, t), 0.0);  // positive control
}

TEST(DiskBudget, AboveBudgetDropsDownTo75Percent) {
  DiskBudget b(1000);
  const auto t = DiskBudget::Clock::now();
  EXPECT_DOUBLE_EQ(b.share_to_drop(2000, t), (2000.0 - 750.0) / 2000.0);
}

TEST(DiskBudget, FreedBytesCountUntilTheEngineGivesThemBack) {
  DiskBudget b(1000);
  auto t = DiskBudget::Clock::now();
  const double share = b.share_to_drop(2000, t);
  b.swept(share, t);  // 1250 bytes freed, not yet reclaimed by the engine
  EXPECT_EQ(b.share_to_drop(2000, t + std::chrono::seconds(30)), 0.0);
  // The engine reclaims 1000 of them; 250 still pending: effective 1000 - 250.
  EXPECT_EQ(b.share_to_drop(1000, t + std::chrono::seconds(60)), 0.0);
  // New data beyond the budget counts again.
  EXPECT_GT(b.share_to_drop(1400, t + std::chrono::seconds(90)), 0.0);
}

TEST(DiskBudget, PendingReclaimIsForgottenAfterAWhile) {
  DiskBudget b(1000);
  auto t = DiskBudget::Clock::now();
  b.swept(b.share_to_drop(2000, t), t);
  EXPECT_EQ(b.share_to_drop(2000, t + std::chrono::minutes(1)), 0.0);
  EXPECT_GT(b.share_to_drop(2000, t + std::chrono::minutes(11)), 0.0);
}

TEST(PlanSweep, CutsAtTheOldestBucketsThatCoverTheWant) {
  std::map<std::uint32_t, std::uint64_t> h{{10, 100}, {20, 100}, {30, 100}};
  auto c = plan_sweep(h, 150);
  EXPECT_EQ(c.cutoff, 20u);
  EXPECT_EQ(c.at_cutoff, 50u);
  c = plan_sweep(h, 100);
  EXPECT_EQ(c.cutoff, 10u);
  EXPECT_EQ(c.at_cutoff, 100u);
  c = plan_sweep(h, 0);
  EXPECT_EQ(c.cutoff, 10u);
  EXPECT_EQ(c.at_cutoff, 0u);
  c = plan_sweep(h, 1000);  // more than there is: everything
  EXPECT_EQ(c.cutoff, 30u);
  EXPECT_EQ(c.at_cutoff, 100u);
  c = plan_sweep({}, 10);
  EXPECT_EQ(c.at_cutoff, 0u);
}
