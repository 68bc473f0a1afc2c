// MetadataStore's queue of writes not yet in RocksDB is bounded
// (MetadataStoreOptions::pending_bytes): while the disk does not take writes, a
// writer waits once the queue is full, and nothing it was told is kept is lost.
#include <gtest/gtest.h>

#include "tests/support/waiting.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "cache/metadata_store.h"
#include "controlled_store.h"
#include "record_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::attr_record;
using nfsgw::cache::testing::ControlledStore;
using nfsgw::cache::testing::object;

namespace {

constexpr std::size_t kPending = 16 << 10;
constexpr std::uint32_t kWrites = 2000;  // far more than kPending holds

MetadataStoreOptions bounded_options() {
  MetadataStoreOptions o;
  o.memory_bytes = 1 << 20;
  o.disk_threads = 1;
  o.shards = 4;
  o.pending_bytes = kPending;
  return o;
}

}  // namespace

TEST(MetadataStorePending, WritersWaitWhileTheQueueIsFullAndNothingIsLost) {
  auto kv = std::make_unique<ControlledStore>(make_memory_store(metadata_families()));
  MetadataStore s(*kv, bounded_options());
  kv->close_gate();
  std::atomic<std::uint32_t> done{0};
  std::thread writer([&] {
    for (std::uint32_t i = 0; i < kWrites; ++i) {
      s.put<AttrRecord>(object(i), attr_record(i));
      done.fetch_add(1);
    }
  });
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return s.usage().pending_waits > 0; }, std::chrono::seconds(10),
                                      "a writer waiting for room") ||
              done.load() == kWrites);
  const auto held = s.usage();
  EXPECT_LT(done.load(), kWrites) << "the disk takes nothing, yet every write went on";
  EXPECT_GT(held.pending_waits, 0u);
  // One record's charge may go past the limit (the one that waits has not).
  EXPECT_LE(held.pending_bytes, kPending);
  EXPECT_LE(held.pending_peak, kPending);
  EXPECT_EQ(held.pending_limit, kPending);

  kv->open_gate();
  writer.join();
  s.flush();
  EXPECT_EQ(s.usage().pending_bytes, 0u) << "everything written is given back";
  for (std::uint32_t i = 0; i < kWrites; ++i) {
    auto r = s.get<AttrRecord>(object(i));
    ASSERT_NE(r, nullptr) << i;
    EXPECT_EQ(r->seq, i);
  }
}

TEST(MetadataStorePending, AnUpdateIsChargedWhatItWritesAndAnUndecidedOneNothing) {
  auto kv = std::make_unique<ControlledStore>(make_memory_store(metadata_families()));
  MetadataStore s(*kv, bounded_options());
  kv->close_gate();
  s.update<AttrRecord>(object(1), [](const AttrRecord*) { return std::optional<AttrRecord>(); });
  EXPECT_EQ(s.usage().pending_bytes, 0u) << "nothing changed, nothing queued";
  s.update<AttrRecord>(object(1), [](const AttrRecord*) { return std::optional<AttrRecord>(attr_record(1)); });
  EXPECT_GT(s.usage().pending_bytes, 0u);
  kv->open_gate();
  s.flush();
  EXPECT_EQ(s.usage().pending_bytes, 0u);
  EXPECT_NE(s.get<AttrRecord>(object(1)), nullptr);
}
