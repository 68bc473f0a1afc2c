// MeasuredProgram: passes every call and answer through unchanged, times the
// waited ones with the clock it is given, and counts the at-once ones without it.
#include <gtest/gtest.h>

#include "fake_nfs3_program.h"
#include "gateway/metrics/measured_program.h"
#include "run_awaitable.h"

namespace nfsgw::metrics {
namespace {

std::uint64_t g_now = 0;
std::uint64_t fake_clock() {
  const std::uint64_t t = g_now;
  g_now += 3'000'000;  // each reading 3 ms after the one before
  return t;
}

class AtOnce : public test::FakeNfs3Program {
 public:
  Now<nfs3::LookupRes> lookup_now(const CallContext&, const nfs3::LookupArgs&) override {
    if (!answer_now) return {};
    return {lookup_res, {}};
  }
  bool answer_now = false;
};

TEST(MeasuredProgram, TimesWaitedCallsAndCountsTheirStatus) {
  AtOnce inner;
  CallMeter meter;
  MeasuredProgram m(inner, meter, &fake_clock);
  inner.lookup_res.status = nfs3::Status::NoEnt;
  CallContext ctx;
  const auto res = test::run_awaitable(m.lookup(ctx, nfs3::LookupArgs{}));
  EXPECT_EQ(res.status, nfs3::Status::NoEnt) << "the answer passes unchanged";
  EXPECT_EQ(inner.call_count(), 1u);
  const CallSnapshot s = meter.snapshot(nfs3::Proc::Lookup);
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.sum_seconds, 0.003);
  EXPECT_EQ(s.buckets[CallMeter::bucket_of(3'000'000)], 1u);
  EXPECT_EQ(s.errors[static_cast<std::size_t>(error_index(nfs3::Status::NoEnt))], 1u);
}

TEST(MeasuredProgram, AtOnceAnswersAreCountedWithoutTheClock) {
  AtOnce inner;
  CallMeter meter;
  MeasuredProgram m(inner, meter, &fake_clock);
  CallContext ctx;
  EXPECT_FALSE(m.lookup_now(ctx, nfs3::LookupArgs{})) << "no answer at once: none made up";
  EXPECT_EQ(meter.snapshot(nfs3::Proc::Lookup).count, 0u) << "the coroutine path will count it";
  inner.answer_now = true;
  const std::uint64_t clock_before = g_now;
  ASSERT_TRUE(m.lookup_now(ctx, nfs3::LookupArgs{}));
  EXPECT_EQ(g_now, clock_before) << "no clock read";
  const CallSnapshot s = meter.snapshot(nfs3::Proc::Lookup);
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(s.buckets[0], 1u);
  EXPECT_FALSE(m.getattr_now(ctx, nfs3::GetattrArgs{}));
  EXPECT_FALSE(m.access_now(ctx, nfs3::AccessArgs{}));
}

TEST(MeasuredProgram, EveryProcedureIsCountedUnderItsOwnName) {
  test::FakeNfs3Program inner;
  CallMeter meter;
  MeasuredProgram m(inner, meter, &fake_clock);
  CallContext ctx;
  test::run_awaitable(m.null(ctx));
  test::run_awaitable(m.getattr(ctx, {}));
  test::run_awaitable(m.read(ctx, {}));
  test::run_awaitable(m.write(ctx, {}));
  test::run_awaitable(m.readdirplus(ctx, {}));
  test::run_awaitable(m.commit(ctx, {}));
  for (auto p : {nfs3::Proc::Null, nfs3::Proc::Getattr, nfs3::Proc::Read, nfs3::Proc::Write,
                 nfs3::Proc::Readdirplus, nfs3::Proc::Commit})
    EXPECT_EQ(meter.snapshot(p).count, 1u) << nfs3::proc_name(static_cast<std::uint32_t>(p));
  EXPECT_EQ(meter.snapshot(nfs3::Proc::Lookup).count, 0u);
  EXPECT_EQ(inner.call_count(), 6u);
}

}  // namespace
}  // namespace nfsgw::metrics
