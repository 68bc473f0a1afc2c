// MetadataStore's own timers, on a manual clock: the disk budget sweep runs by
// itself every 30 s of the timer clock, and a move of that clock alone wakes the
// store's thread.
#include <gtest/gtest.h>

#include <chrono>

#include "cache/metadata_store.h"
#include "controlled_store.h"
#include "record_helpers.h"

using namespace nfsgw::cache;
using nfsgw::cache::testing::attr_record;
using nfsgw::cache::testing::ControlledStore;
using nfsgw::cache::testing::object;
using namespace std::chrono_literals;

TEST(MetadataStoreTimers, TheDiskSweepRunsByItselfEveryThirtySeconds) {
  ControlledStore kv(make_memory_store(metadata_families()));
  ManualClock wall;
  ManualMonotonicClock timers;
  MetadataStoreOptions o;
  o.memory_bytes = 1 << 20;
  o.disk_threads = 1;
  o.shards = 4;
  o.disk_bytes = 1;  // every record is over budget
  o.clock = &wall;
  o.timer_clock = &timers;
  MetadataStore s(kv, o);
  for (std::uint32_t i = 0; i < 100; ++i) s.put<AttrRecord>(object(i), attr_record(i));
  s.flush();
  const int writes = kv.writes;

  timers.advance(29s);
  s.run_due_work();
  EXPECT_EQ(s.usage().evicted_disk, 0u) << "swept before its period";
  EXPECT_EQ(kv.writes, writes);

  // No run_due_work() here: the move alone must wake the store's thread.
  timers.advance(1s);
  ASSERT_TRUE(kv.wait_for_writes(writes + 1, 5s)) << "the clock's move did not wake the store";
  s.run_due_work();
  EXPECT_EQ(s.usage().evicted_disk, 100u);

  // The next period counts from that sweep. More records than it dropped: the
  // budget counts the dropped bytes as not yet given back (disk_budget.h), and
  // only records beyond them are over budget.
  for (std::uint32_t i = 100; i < 300; ++i) s.put<AttrRecord>(object(i), attr_record(i));
  s.flush();
  timers.advance(29s);
  s.run_due_work();
  EXPECT_EQ(s.usage().evicted_disk, 100u) << "swept before its period";
  timers.advance(1s);
  s.run_due_work();
  EXPECT_GT(s.usage().evicted_disk, 100u);
}
