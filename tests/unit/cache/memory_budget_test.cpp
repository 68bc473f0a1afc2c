// memory_mb split once between its users (cache/memory_budget.h), and RocksDB
// opened within its part (cache/rocksdb_store.cpp): the block cache is the size
// given, and the memtables are bounded by their share.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cache/handle_memo.h"
#include "cache/kv_store.h"
#include "cache/memory_budget.h"
#include "cache/peek_memo.h"
#include "temp_dir.h"

using namespace nfsgw::cache;
using nfsgw::cache::testing::TempDir;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

/// The memos nfsgw sizes: the store's and the handle codec's, and one shaped like
/// the answer memo (gateway/rpc, which this library cannot see): 4 ways of ~600 bytes.
std::vector<MemoShape> memos() {
  return {PeekMemo::shape(), HandleMemo::shape(), MemoShape{32 + 4 * 600, 1024}};
}

}  // namespace

TEST(MemoryBudget, PartsAddUpToAtMostTheTotal) {
  for (std::size_t mb : {16, 32, 64, 100, 256, 1024, 65536}) {
    for (unsigned threads : {1u, 2u, 4u, 16u, 64u}) {
      if (mb < 64 && threads > 16) continue;  // the smallest memos of 64 threads take 5 MiB
      const auto b = split_memory(mb * kMiB, threads, memos());
      SCOPED_TRACE(std::to_string(mb) + " MiB, " + std::to_string(threads) + " threads");
      EXPECT_EQ(b.total, mb * kMiB);
      EXPECT_LE(b.sum(), b.total);
      EXPECT_TRUE(b.memos_fit);
      EXPECT_EQ(b.thread_memos, b.memo_bytes(memos())) << "the memos are charged what their tables take";
      EXPECT_LE(b.thread_memos, b.total / 8);
      EXPECT_GT(b.memory_layer, b.total / 4);
      EXPECT_GT(b.block_cache, b.total / 4);
      EXPECT_EQ(b.write_buffers, b.block_cache / 4) << "the memtables are part of the block cache";
      EXPECT_EQ(b.hot_blocks, b.total / 16);
      EXPECT_GE(b.duplicate_entries, MemoryBudget::kMinDuplicateEntries);
      EXPECT_LE(b.duplicate_entries, MemoryBudget::kMaxDuplicateEntries);
      EXPECT_EQ(b.duplicate_cache, b.duplicate_entries * MemoryBudget::kDuplicateEntryBytes);
      // What was left after the memos, the duplicate cache and the hot blocks is given out.
      EXPECT_GE(b.sum() + 1, b.total);
    }
  }
}

TEST(MemoryBudget, MemosShrinkWithTheBudgetAndTheThreads) {
  const auto shapes = memos();
  const auto big = split_memory(4096 * kMiB, 4, shapes);
  for (std::size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(big.memo_sets[i], shapes[i].max_sets) << "room: full size";
  const auto small = split_memory(64 * kMiB, 16, shapes);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_LT(small.memo_sets[i], shapes[i].max_sets) << i;
    EXPECT_EQ(small.memo_sets[i] & (small.memo_sets[i] - 1), 0u) << "a power of two";
  }
  // Twice the threads: no more bytes in all.
  const auto more = split_memory(64 * kMiB, 32, shapes);
  EXPECT_LE(more.thread_memos, 64 * kMiB / 8);
  EXPECT_LE(more.memo_sets[0], small.memo_sets[0]);
}

TEST(MemoryBudget, TheHotBlockShareIsTakenFromTheRest) {
  const auto none = split_memory(64 * kMiB, 2, memos(), 0.0);
  const auto some = split_memory(64 * kMiB, 2, memos(), 0.25);
  EXPECT_EQ(none.hot_blocks, 0u);
  EXPECT_EQ(some.hot_blocks, 16 * kMiB);
  EXPECT_LE(some.sum(), some.total);
  EXPECT_LT(some.memory_layer + some.block_cache, none.memory_layer + none.block_cache);
}

TEST(MemoryBudget, ReadDataInFlightAndPendingWritesHaveTheirSharesInTheTotal) {
  const auto b = split_memory(64 * kMiB, 2, memos());
  EXPECT_EQ(b.read_replies, 4 * kMiB);
  EXPECT_EQ(b.read_blocks, 4 * kMiB);
  EXPECT_EQ(b.pending_writes, 2 * kMiB);
  EXPECT_EQ(b.block_index, 2 * kMiB);
  EXPECT_LE(b.sum(), b.total) << "taken from the rest, not added to it";
  EXPECT_GE(b.sum() + 1, b.total);
}

TEST(MemoryBudget, PerThreadTablesAreMadeAtTheChosenSize) {
  struct Value {
    int v = 0;
  };
  using T = ThreadTable<Value, 4, 1024, struct SizeUse>;
  T::set_sets(100);  // rounded down to a power of two
  EXPECT_EQ(T::sets(), 64u);
  T::set_sets(1);
  EXPECT_EQ(T::sets(), T::kMinSets);
  T::set_sets(1 << 20);
  EXPECT_EQ(T::sets(), 1024u);
}

TEST(RocksDbMemory, TheDatabaseIsOpenedWithinItsPartAndTheMemtablesAreChargedToTheCache) {
  TempDir dir;
  const RocksDbMemory memory{16 * kMiB, 8 * kMiB};
  auto kv = open_rocksdb_store(dir / "db", memory, {"a", "b", "c", "d"});
  EXPECT_EQ(kv->memory().cache_capacity, 16 * kMiB);
  EXPECT_EQ(kv->memory().write_buffer_limit, 8 * kMiB);
  const auto before = kv->memory().cache_usage;  // the empty memtables' first reservation
  // About 3 MB spread over four families: below each memtable's size (half the
  // share) and below the share, so nothing is flushed and it all stays in memtables.
  std::string value(1000, 'x');
  KvStore::Batch b;
  for (int n = 0; n < 3000; ++n) b.put(static_cast<KvStore::Family>(1 + n % 4), "key" + std::to_string(n), value);
  kv->write(b, KvStore::Durability::Unsynced);
  const auto m = kv->memory();
  EXPECT_GE(m.memtables, 3000u * 1000u) << "positive control: the memtables are seen";
  // The write buffer manager reserves the memtables' memory in the block cache in
  // pieces of up to 1 MiB: the cache's usage covers them, nothing having been read.
  EXPECT_GE(m.cache_usage + kMiB, before + m.memtables) << "the memtables are charged to the block cache";
  EXPECT_LE(m.cache_usage, memory.block_cache_bytes);
}
