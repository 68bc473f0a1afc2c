// The preload at start (MetadataStoreOptions::preload_bytes): after a restart the
// memory layer is refilled from RocksDB with the newest records, within its budget,
// and those records are then served from memory, as records loaded on demand are.
#include <gtest/gtest.h>

#include <string>

#include "cache/kv_store.h"
#include "cache/metadata_store.h"
#include "record_helpers.h"
#include "temp_dir.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::attr_record;
using nfsgw::cache::testing::TempDir;
using Where = MetadataStore::Where;

namespace {

MetadataStoreOptions options(const Clock* clock, std::size_t memory, std::size_t preload) {
  static ManualMonotonicClock frozen_timers;
  MetadataStoreOptions o;
  o.memory_bytes = memory;
  o.preload_bytes = preload;
  o.disk_threads = 1;
  o.shards = 4;
  o.clock = clock;
  o.timer_clock = &frozen_timers;
  o.thread_memo = false;
  return o;
}

/// Record i's key: ordered on disk as i is, so that the oldest and the newest
/// records are in different blocks (a block read for one brings its neighbours
/// into RocksDB's cache, where peek finds them too).
ObjectKey aged(std::uint32_t i) {
  ObjectKey k{1, {}};
  k.fh.len = 8;
  for (int b = 0; b < 4; ++b) k.fh.bytes[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(i >> (24 - 8 * b));
  return k;
}

/// Writes `n` attribute records, record i last used at second i (of `clock`), then
/// closes the store and the database: what a stopped nfsgw leaves on disk.
void fill(const std::string& db, std::uint32_t n) {
  ManualClock clock(1'000'000'000'000);
  auto kv = open_rocksdb_store(db, 8, metadata_families());
  MetadataStore s(*kv, options(&clock, 64 << 20, 0));
  for (std::uint32_t i = 0; i < n; ++i) {
    s.put<AttrRecord>(aged(i), attr_record(i));
    clock.advance(1000);
  }
  s.flush();
}

std::uint64_t memory_bytes(const StoreUsage& u) {
  std::uint64_t b = 0;
  for (const auto& t : u.tables) b += t.memory_bytes;
  return b;
}

}  // namespace

TEST(MetadataStorePreload, AfterARestartTheLastRunsRecordsAreServedFromMemory) {
  TempDir dir;
  constexpr std::uint32_t kRecords = 500;
  fill(dir / "db", kRecords);
  {
    // Positive control: without the preload the reopened store has them on disk
    // only (a cold block cache: peek does not read files).
    auto kv = open_rocksdb_store(dir / "db", 8, metadata_families());
    MetadataStore s(*kv, options(&wall_clock(), 64 << 20, 0));
    s.preload_in_background();
    s.wait_preloaded();
    EXPECT_EQ(s.usage().preloaded, 0u);
    std::uint32_t on_disk = 0;
    for (std::uint32_t i = 0; i < kRecords; i += 10) on_disk += s.peek<AttrRecord>(aged(i)).where == Where::OnDisk;
    EXPECT_EQ(on_disk, kRecords / 10);
  }
  auto kv = open_rocksdb_store(dir / "db", 8, metadata_families());
  MetadataStore s(*kv, options(&wall_clock(), 64 << 20, 64 << 20));
  s.preload_in_background();
  s.wait_preloaded();
  const auto u = s.usage();
  EXPECT_EQ(u.preloaded, kRecords);
  EXPECT_EQ(u.tables[0].memory_entries, kRecords);
  for (std::uint32_t i = 0; i < kRecords; ++i) {
    auto p = s.peek<AttrRecord>(aged(i));
    ASSERT_EQ(p.where, Where::Memory) << i;
    ASSERT_NE(p.value, nullptr);
    EXPECT_EQ(p.value->attr, attr_record(i).attr);
  }
}

TEST(MetadataStorePreload, KeepsTheNewestWithinItsBudget) {
  TempDir dir;
  constexpr std::uint32_t kRecords = 2000;
  fill(dir / "db", kRecords);
  auto kv = open_rocksdb_store(dir / "db", 8, metadata_families());
  // Room for a few hundred of the 2,000 records; the preload may take half of it.
  constexpr std::size_t kMemory = 256 << 10;
  MetadataStore s(*kv, options(&wall_clock(), kMemory, kMemory / 2));
  s.preload_in_background();
  s.wait_preloaded();
  const auto u = s.usage();
  EXPECT_GT(u.preloaded, 100u);
  EXPECT_LT(u.preloaded, kRecords / 2);
  EXPECT_LE(memory_bytes(u), kMemory / 2) << "the preload stays within its part of the budget";
  EXPECT_EQ(u.evicted_memory, 0u) << "it fills free room, never pushes records out";
  // The newest are the ones kept: the last 50 written are in memory, the first 50 not.
  for (std::uint32_t i = kRecords - 50; i < kRecords; ++i)
    EXPECT_EQ(s.peek<AttrRecord>(aged(i)).where, Where::Memory) << i;
  for (std::uint32_t i = 0; i < 50; ++i) EXPECT_EQ(s.peek<AttrRecord>(aged(i)).where, Where::OnDisk) << i;
}

TEST(MetadataStorePreload, AChangeMadeBeforeThePreloadKeepsItsValue) {
  TempDir dir;
  fill(dir / "db", 100);
  auto kv = open_rocksdb_store(dir / "db", 8, metadata_families());
  // Changes of the last run (written by its store as it stopped): the preload
  // brings back the changed value, not an older one, and not the erased record.
  {
    MetadataStore first(*kv, options(&wall_clock(), 64 << 20, 0));
    first.put<AttrRecord>(aged(7), attr_record(777));
    first.erase<AttrRecord>(aged(8));
  }
  MetadataStore s(*kv, options(&wall_clock(), 64 << 20, 64 << 20));
  s.preload_in_background();
  s.wait_preloaded();
  auto p = s.peek<AttrRecord>(aged(7));
  ASSERT_EQ(p.where, Where::Memory);
  EXPECT_EQ(p.value->attr, attr_record(777).attr);
  EXPECT_EQ(s.get<AttrRecord>(aged(8)), nullptr);
  EXPECT_EQ(s.usage().preloaded, 99u);
}
