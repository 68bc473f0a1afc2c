// CallMeter: which bucket a duration lands in, what a snapshot adds up, errors by
// status, and counts from several threads at once.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "gateway/metrics/call_meter.h"

namespace nfsgw::metrics {
namespace {

TEST(CallMeter, BucketsAreInclusiveUpperBounds) {
  EXPECT_EQ(CallMeter::bucket_of(0), 0u);
  EXPECT_EQ(CallMeter::bucket_of(100'000), 0u) << "100 us is in the 0.0001 bucket";
  EXPECT_EQ(CallMeter::bucket_of(100'001), 1u);
  EXPECT_EQ(CallMeter::bucket_of(20'000'000), 7u) << "20 ms: the 0.025 bucket";
  EXPECT_EQ(CallMeter::bucket_of(10'000'000'000ull), kLatencyBounds.size() - 1);
  EXPECT_EQ(CallMeter::bucket_of(10'000'000'001ull), kLatencyBounds.size()) << "+Inf";
}

TEST(CallMeter, SnapshotAddsTimesAndErrorsPerProcedure) {
  CallMeter m;
  m.record(nfs3::Proc::Lookup, nfs3::Status::Ok, 2'000'000);      // 2 ms
  m.record(nfs3::Proc::Lookup, nfs3::Status::NoEnt, 30'000'000);  // 30 ms
  cache::AnswerBasis basis;
  m.record_at_once(nfs3::Proc::Lookup, nfs3::Status::NoEnt, basis);
  m.record_at_once(nfs3::Proc::Lookup, nfs3::Status::Ok, basis);
  EXPECT_EQ(basis.bumps(), 3u) << "a copy of either answer counts the same: two buckets, one error";
  m.record(nfs3::Proc::Getattr, static_cast<nfs3::Status>(12345), 1);
  const CallSnapshot l = m.snapshot(nfs3::Proc::Lookup);
  EXPECT_EQ(l.count, 4u);
  EXPECT_DOUBLE_EQ(l.sum_seconds, 0.032) << "answers at once add no time";
  EXPECT_EQ(l.buckets[0], 2u);
  EXPECT_EQ(l.buckets[CallMeter::bucket_of(2'000'000)], 1u);
  EXPECT_EQ(l.buckets[CallMeter::bucket_of(30'000'000)], 1u);
  EXPECT_EQ(l.errors[static_cast<std::size_t>(error_index(nfs3::Status::NoEnt))], 2u);
  std::uint64_t errors = 0;
  for (auto e : l.errors) errors += e;
  EXPECT_EQ(errors, 2u) << "OK is not an error";
  const CallSnapshot g = m.snapshot(nfs3::Proc::Getattr);
  EXPECT_EQ(g.count, 1u);
  EXPECT_EQ(g.errors.back(), 1u) << "an unknown status counts as other";
  EXPECT_EQ(m.snapshot(nfs3::Proc::Read).count, 0u);
}

TEST(CallMeter, ErrorIndexCoversEveryListedStatus) {
  EXPECT_EQ(error_index(nfs3::Status::Ok), -1);
  for (std::size_t i = 0; i < kErrorStatuses.size(); ++i) EXPECT_EQ(error_index(kErrorStatuses[i]), static_cast<int>(i));
}

TEST(CallMeter, ThreadsCountOnTheirOwnStripesAndNothingIsLost) {
  CallMeter m;
  constexpr int kThreads = 12, kEach = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&m] {
      for (int i = 0; i < kEach; ++i) {
        cache::AnswerBasis basis;
        m.record_at_once(nfs3::Proc::Getattr, nfs3::Status::Ok, basis);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(m.snapshot(nfs3::Proc::Getattr).count, static_cast<std::uint64_t>(kThreads) * kEach);
}

}  // namespace
}  // namespace nfsgw::metrics
