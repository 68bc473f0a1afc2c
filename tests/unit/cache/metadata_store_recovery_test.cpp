// MetadataStore after a disk failure: it keeps trying the disk (bounded: once per
// disk_retry), and once the disk takes writes again it says so, starts the disk
// empty (the disk missed every change made meanwhile) and persists again.
//
// The store's timers run on a manual clock: a test moves it, then waits for the
// store to act on the move (run_due_work), so no test sleeps through a period.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "cache/metadata_store.h"
#include "controlled_store.h"
#include "record_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::attr_record;
using nfsgw::cache::testing::ControlledStore;
using nfsgw::cache::testing::disk_keys;
using nfsgw::cache::testing::object;
using namespace std::chrono_literals;

namespace {

MetadataStoreOptions retrying_options(std::chrono::milliseconds retry, MonotonicClock& timers) {
  MetadataStoreOptions o;
  o.memory_bytes = 1 << 20;
  o.disk_threads = 1;
  o.shards = 4;
  o.disk_retry = retry;
  o.timer_clock = &timers;
  return o;
}

struct Hooks {
  std::atomic<int> errors{0}, recoveries{0};
  void attach(MetadataStore& s) {
    s.on_disk_error([this](const std::string&) { ++errors; });
    s.on_disk_recovered([this] { ++recoveries; });
  }
};

}  // namespace

TEST(MetadataStoreRecovery, TriesTheDiskAgainAndPersistsOnceItWorks) {
  auto kv = std::make_unique<ControlledStore>(make_memory_store(metadata_families()));
  ManualMonotonicClock timers;
  MetadataStore s(*kv, retrying_options(50ms, timers));
  Hooks hooks;
  hooks.attach(s);
  s.put<AttrRecord>(object(1), attr_record(1));
  s.flush();
  ASSERT_EQ(disk_keys(kv->inner(), "meta_attrs"), 1u);  // positive control: on disk

  kv->fail_writes = true;
  s.put<AttrRecord>(object(2), attr_record(2));
  s.flush();
  ASSERT_TRUE(s.usage().degraded);
  // Changed while degraded: object 1 erased (the disk still has it), 3 added.
  s.erase<AttrRecord>(object(1));
  s.put<AttrRecord>(object(3), attr_record(3));
  s.flush();

  // Still failing: tried again once per disk_retry, never sooner, said once.
  timers.advance(49ms);
  s.run_due_work();
  EXPECT_EQ(kv->recovers.load(), 0) << "tried before disk_retry had passed";
  timers.advance(1ms);
  s.run_due_work();
  EXPECT_EQ(kv->recovers.load(), 1);
  for (int i = 0; i < 3; ++i) {
    timers.advance(50ms);
    s.run_due_work();
  }
  EXPECT_EQ(kv->recovers.load(), 4);
  EXPECT_TRUE(s.usage().degraded);
  EXPECT_EQ(hooks.errors, 1);
  EXPECT_EQ(hooks.recoveries, 0);

  kv->fail_writes = false;
  timers.advance(49ms);
  s.run_due_work();
  EXPECT_EQ(hooks.recoveries, 0) << "tried before disk_retry had passed";
  timers.advance(1ms);
  s.run_due_work();
  ASSERT_EQ(hooks.recoveries, 1) << "not recovered once disk_retry had passed";
  EXPECT_EQ(kv->recovers.load(), 5);
  EXPECT_FALSE(s.usage().degraded);
  EXPECT_EQ(hooks.errors, 1);
  // The disk starts empty: object 1, erased while the disk was not written, does
  // not come back from it; what memory holds is still served.
  EXPECT_EQ(disk_keys(kv->inner(), "meta_attrs"), 0u);
  EXPECT_EQ(s.get<AttrRecord>(object(1)), nullptr);
  ASSERT_NE(s.get<AttrRecord>(object(3)), nullptr);
  EXPECT_EQ(s.get<AttrRecord>(object(3))->seq, 3u);

  // And it persists again.
  s.put<AttrRecord>(object(4), attr_record(4));
  s.flush();
  EXPECT_EQ(disk_keys(kv->inner(), "meta_attrs"), 1u);

  // A second failure is said again (once).
  kv->fail_writes = true;
  s.put<AttrRecord>(object(5), attr_record(5));
  s.put<AttrRecord>(object(6), attr_record(6));
  s.flush();
  EXPECT_TRUE(s.usage().degraded);
  EXPECT_EQ(hooks.errors, 2);
}

TEST(MetadataStoreRecovery, ZeroRetryNeverTriesAgain) {
  auto kv = std::make_unique<ControlledStore>(make_memory_store(metadata_families()));
  ManualMonotonicClock timers;
  MetadataStore s(*kv, retrying_options(0ms, timers));
  Hooks hooks;
  hooks.attach(s);
  kv->fail_writes = true;
  s.put<AttrRecord>(object(1), attr_record(1));
  s.flush();
  ASSERT_TRUE(s.usage().degraded);  // positive control: there is something to retry
  kv->fail_writes = false;
  timers.advance(24h);
  s.run_due_work();
  EXPECT_TRUE(s.usage().degraded);
  EXPECT_EQ(kv->recovers.load(), 0);
  EXPECT_EQ(hooks.recoveries, 0);
}

// On the real clock, the store's thread sleeps until its next sweep (30 s) when
// nothing is queued: a disk that fails on a read (on a caller's or the pool's
// thread, not the writer's) must wake it to the retry's time. Bounded: the test
// fails after 10 s, a third of a sweep period, where the retry is due after 20 ms.
TEST(MetadataStoreRecovery, AReadFailureIsRetriedAfterDiskRetryNotAtTheNextSweep) {
  auto kv = std::make_unique<ControlledStore>(make_memory_store(metadata_families()));
  MetadataStoreOptions o;
  o.memory_bytes = 1 << 20;
  o.disk_threads = 1;
  o.shards = 4;
  o.disk_retry = 20ms;  // the real clock (the default timer_clock)
  MetadataStore s(*kv, o);
  std::mutex mu;
  std::condition_variable cv;
  int recoveries = 0;
  s.on_disk_recovered([&] {
    std::lock_guard lock(mu);
    ++recoveries;
    cv.notify_all();
  });
  s.flush();  // the writer is idle now, asleep until its first sweep
  kv->fail_reads = true;
  EXPECT_EQ(s.get<AttrRecord>(object(7)), nullptr);
  ASSERT_TRUE(s.usage().degraded);  // positive control: the read failed the disk
  kv->fail_reads = false;
  std::unique_lock lock(mu);
  EXPECT_TRUE(cv.wait_for(lock, 10s, [&] { return recoveries > 0; }))
      << "the disk was not tried again within 10 s of a read failure";
}
