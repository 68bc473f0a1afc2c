#include "tools/nfsgw-bench/latency_histogram.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace nfsgw::bench {
namespace {

TEST(NearestRank, MatchesDefinition) {
  // Nearest rank: ceil(p/100 * n), 1-based.
  EXPECT_EQ(nearest_rank_index(100, 50), 49u);
  EXPECT_EQ(nearest_rank_index(100, 99), 98u);
  EXPECT_EQ(nearest_rank_index(1000, 99.9), 998u);
  EXPECT_EQ(nearest_rank_index(10, 99.9), 9u);   // ceil(9.99) = 10
  EXPECT_EQ(nearest_rank_index(3, 50), 1u);      // ceil(1.5) = 2
  EXPECT_EQ(nearest_rank_index(1, 50), 0u);
  EXPECT_EQ(nearest_rank_index(5, 0), 0u);
  EXPECT_EQ(nearest_rank_index(5, 100), 4u);
  EXPECT_EQ(nearest_rank_index(5, 250), 4u);     // clamped
  EXPECT_EQ(nearest_rank_index(5, -3), 0u);
}

TEST(LatencyHistogram, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0u);
  EXPECT_EQ(h.percentile(99.9), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (std::uint64_t v = 100; v >= 1; --v) h.record(v);  // order must not matter
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.percentile(50), 50u);
  EXPECT_EQ(h.percentile(99), 99u);
  EXPECT_EQ(h.percentile(99.9), 100u);
  EXPECT_EQ(h.percentile(0), 1u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(LatencyHistogram, TailIsSeenAboveTheMedian) {
  // 999 fast calls and one very slow one: p50 and p99 stay fast, p99.9 of
  // 1000 samples is the 999th value (still fast), max is the slow one.
  LatencyHistogram h;
  for (int i = 0; i < 999; ++i) h.record(200'000);
  h.record(50'000'000);
  auto fast_hi = 200'000 * (1.0 + 1.0 / LatencyHistogram::kSubBuckets);
  EXPECT_GE(h.percentile(50), 200'000u);
  EXPECT_LE(h.percentile(50), fast_hi);
  EXPECT_LE(h.percentile(99.9), fast_hi);
  EXPECT_EQ(h.percentile(100), 50'000'000u);
  // With 10 slow ones out of 1000, p99.9 must land on the slow value.
  for (int i = 0; i < 9; ++i) h.record(50'000'000);
  EXPECT_GE(h.percentile(99.9), 50'000'000u * (1.0 - 1.0 / LatencyHistogram::kSubBuckets));
}

TEST(LatencyHistogram, LargeValuesWithinRelativeError) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> dist(1, 10'000'000'000ull);
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t v = dist(rng);
    auto b = LatencyHistogram::bucket_of(v);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    std::uint64_t up = LatencyHistogram::bucket_upper(b);
    ASSERT_GE(up, v) << v;
    ASSERT_LE(static_cast<double>(up - v), static_cast<double>(v) / LatencyHistogram::kSubBuckets) << v;
  }
  // Extremes map inside the table.
  EXPECT_LT(LatencyHistogram::bucket_of(~std::uint64_t{0}), LatencyHistogram::kBuckets);
  EXPECT_EQ(LatencyHistogram::bucket_upper(LatencyHistogram::bucket_of(~std::uint64_t{0})), ~std::uint64_t{0});
}

TEST(LatencyHistogram, PercentilesOfAUniformSpread) {
  LatencyHistogram h;
  for (std::uint64_t us = 1; us <= 10000; ++us) h.record(us * 1000);  // 1 us .. 10 ms in ns
  auto near = [](std::uint64_t got, double want) {
    return std::abs(static_cast<double>(got) - want) <= want / LatencyHistogram::kSubBuckets;
  };
  EXPECT_TRUE(near(h.percentile(50), 5'000'000)) << h.percentile(50);
  EXPECT_TRUE(near(h.percentile(99), 9'900'000)) << h.percentile(99);
  EXPECT_TRUE(near(h.percentile(99.9), 9'990'000)) << h.percentile(99.9);
}

TEST(LatencyHistogram, MergeEqualsRecordingEverything) {
  LatencyHistogram a, b, all;
  for (std::uint64_t v = 1; v <= 5000; v += 3) {
    (v % 2 ? a : b).record(v * 17);
    all.record(v * 17);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9}) EXPECT_EQ(a.percentile(p), all.percentile(p)) << p;
}

TEST(LatencyHistogram, MergingEmptyKeepsMinimum) {
  LatencyHistogram a, empty;
  a.record(42);
  a.merge(empty);
  EXPECT_EQ(a.min(), 42u);
  EXPECT_EQ(a.percentile(50), 42u);
}

}  // namespace
}  // namespace nfsgw::bench
