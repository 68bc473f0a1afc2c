// The striped per-export counters add up to every bump, whatever thread made it.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "gateway/metacache/metacache_stats.h"

using nfsgw::metacache::ExportCounters;
using nfsgw::nfs3::Proc;

TEST(ExportCounters, BumpsFromManyThreadsAddUp) {
  ExportCounters c;
  // More threads than stripes, so that some share one.
  const int threads = static_cast<int>(ExportCounters::kStripes) * 2 + 1;
  constexpr int kEach = 5000;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        c.add(Proc::Lookup, ExportCounters::Calls);
        if (i % 2 == 0) c.add(Proc::Lookup, ExportCounters::Hits);
      }
      c.add(Proc::Getattr, ExportCounters::OriginCalls, 3);
    });
  }
  for (auto& th : pool) th.join();
  const auto lookup = c.get(Proc::Lookup);
  EXPECT_EQ(lookup.calls, static_cast<std::uint64_t>(threads) * kEach);
  EXPECT_EQ(lookup.hits, static_cast<std::uint64_t>(threads) * kEach / 2);
  EXPECT_EQ(lookup.misses, 0u);
  EXPECT_EQ(c.get(Proc::Getattr).origin_calls, static_cast<std::uint64_t>(threads) * 3);
  EXPECT_EQ(c.get(Proc::Getattr).calls, 0u);
}
