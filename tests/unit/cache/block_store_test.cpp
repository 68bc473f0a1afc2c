// The data block store's rules, on both the disk store and the memory one, each
// with and without its hot tier in memory (hot_blocks.h): a copy kept there must
// never change an answer.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "block_store_helpers.h"
#include "cache/block_store.h"
#include "temp_dir.h"

namespace nfsgw::cache {
namespace {

using testing::data_file;
using testing::data_stamp;
using testing::pattern;

using testing::kBlock;

/// (on disk, with the hot tier)
class BlockStoreTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {
 protected:
  BlockStoreTest() { reopen(); }
  bool disk() const { return std::get<0>(GetParam()); }
  void reopen() {
    store.reset();
    BlockStoreOptions o;
    o.block_bytes = kBlock;
    o.disk_bytes = 1 << 20;
    o.clock = &clock;
    o.memory_bytes = std::get<1>(GetParam()) ? 256 << 10 : 0;
    store = disk() ? open_file_block_store(dir.path(), o) : make_memory_block_store(o);
  }

  testing::TempDir dir;
  ManualClock clock;
  std::unique_ptr<BlockStore> store;
};

TEST_P(BlockStoreTest, RoundTripOfBlocks) {
  const auto f = data_file(1, 1);
  const auto st = data_stamp(3 * kBlock);
  for (std::uint32_t i = 0; i < 3; ++i) store->write(f, st, i, pattern(kBlock, i));
  for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(store->read(f, st, i), pattern(kBlock, i)) << i;
  EXPECT_FALSE(store->read(f, st, 3));
  EXPECT_FALSE(store->read(data_file(1, 2), st, 0));
  const auto u = store->usage();
  EXPECT_EQ(u.files, 1u);
  EXPECT_EQ(u.blocks, 3u);
  EXPECT_EQ(u.bytes, 3u * kBlock);
  EXPECT_EQ(u.read_hits, 3u);
  EXPECT_EQ(u.read_misses, 2u);
  EXPECT_EQ(u.corrupt_dropped, 0u);
}

TEST_P(BlockStoreTest, ContainsAsksTheIndexOnly) {
  const auto f = data_file(1, 1);
  const auto st = data_stamp(2 * kBlock);
  EXPECT_FALSE(store->contains(f, st, 0));
  store->write(f, st, 0, pattern(kBlock, 0));
  EXPECT_TRUE(store->contains(f, st, 0));
  EXPECT_FALSE(store->contains(f, st, 1)) << "a block never written";
  EXPECT_FALSE(store->contains(f, data_stamp(3 * kBlock), 0)) << "another version of the file";
  EXPECT_FALSE(store->contains(data_file(1, 2), st, 0)) << "another file";
  const auto u = store->usage();
  EXPECT_EQ(u.read_hits + u.read_misses, 0u) << "contains() is not a read";
  store->drop_file(f);
  EXPECT_FALSE(store->contains(f, st, 0));
}

TEST_P(BlockStoreTest, ReadNowAnswersFromMemoryOrSaysItWouldWait) {
  const auto f = data_file(1, 1);
  const auto st = data_stamp(kBlock + 10);
  store->write(f, st, 0, pattern(kBlock, 4));
  store->write(f, st, 1, pattern(10, 5));
  // The caller's memory, as long as the block its version has.
  std::string out(kBlock, 'x'), last(10, 'x');
  if (disk()) {
    // No descriptor of the file is open yet: an open() could wait for the disk.
    EXPECT_EQ(store->read_now(f, st, 0, out), BlockStore::Now::WouldWait);
    ASSERT_EQ(store->read(f, st, 0), pattern(kBlock, 4));  // opens it
  }
  ASSERT_EQ(store->read_now(f, st, 0, out), BlockStore::Now::Hit);
  EXPECT_EQ(out, pattern(kBlock, 4));
  ASSERT_EQ(store->read_now(f, st, 1, last), BlockStore::Now::Hit);
  EXPECT_EQ(last, pattern(10, 5)) << "the short last block";
  EXPECT_EQ(store->read_now(f, st, 1, out), BlockStore::Now::Miss) << "asked with another length";
  EXPECT_EQ(store->read_now(f, st, 2, out), BlockStore::Now::Miss);
  EXPECT_EQ(store->read_now(f, data_stamp(kBlock + 11), 0, out), BlockStore::Now::Miss) << "another version";
  EXPECT_EQ(store->read_now(data_file(1, 2), st, 0, out), BlockStore::Now::Miss);
  // A use time due for its refresh goes through read(), which writes it.
  clock.advance(BlockStoreOptions{}.touch_interval_ms);
  EXPECT_EQ(store->read_now(f, st, 0, out), BlockStore::Now::WouldWait);
  ASSERT_EQ(store->read(f, st, 0), pattern(kBlock, 4));
  out.assign(kBlock, 'x');
  EXPECT_EQ(store->read_now(f, st, 0, out), BlockStore::Now::Hit);
  EXPECT_EQ(out, pattern(kBlock, 4));
}

TEST_P(BlockStoreTest, RewritingABlockReplacesIt) {
  const auto f = data_file(1, 1);
  const auto st = data_stamp(kBlock);
  store->write(f, st, 0, pattern(kBlock, 1));
  store->write(f, st, 0, pattern(kBlock, 2));
  EXPECT_EQ(store->read(f, st, 0), pattern(kBlock, 2));
  EXPECT_EQ(store->usage().blocks, 1u);
  EXPECT_EQ(store->usage().bytes, kBlock);
}

TEST_P(BlockStoreTest, ShortLastBlockKeepsItsLength) {
  const auto f = data_file(1, 1);
  const auto st = data_stamp(kBlock + 100);
  store->write(f, st, 0, pattern(kBlock, 1));
  store->write(f, st, 1, pattern(100, 2));
  EXPECT_EQ(store->read(f, st, 1), pattern(100, 2));
  EXPECT_EQ(store->usage().bytes, kBlock + 100u);
}

TEST_P(BlockStoreTest, RefusesEmptyAndOversizedBlocks) {
  const auto f = data_file(1, 1);
  EXPECT_THROW(store->write(f, data_stamp(1), 0, ""), std::invalid_argument);
  EXPECT_THROW(store->write(f, data_stamp(1), 0, pattern(kBlock + 1, 1)), std::invalid_argument);
  EXPECT_EQ(store->usage().files, 0u);
}

TEST_P(BlockStoreTest, AnotherStampIsAMissAndAWriteUnderItDropsTheOldBlocks) {
  const auto f = data_file(1, 1);
  const auto old_stamp = data_stamp(2 * kBlock, 100), new_stamp = data_stamp(2 * kBlock, 101);
  store->write(f, old_stamp, 0, pattern(kBlock, 1));
  store->write(f, old_stamp, 1, pattern(kBlock, 2));
  EXPECT_FALSE(store->read(f, new_stamp, 0));
  EXPECT_TRUE(store->read(f, old_stamp, 0));  // a miss under another stamp drops nothing
  store->write(f, new_stamp, 1, pattern(kBlock, 3));
  EXPECT_FALSE(store->read(f, old_stamp, 0));
  EXPECT_FALSE(store->read(f, new_stamp, 0));
  EXPECT_EQ(store->read(f, new_stamp, 1), pattern(kBlock, 3));
  EXPECT_EQ(store->usage().files, 1u);
  EXPECT_EQ(store->usage().blocks, 1u);
}

TEST_P(BlockStoreTest, RestampMovesTheFileToItsNewStamp) {
  const auto f = data_file(1, 1);
  const auto a = data_stamp(2 * kBlock, 100), b = data_stamp(2 * kBlock, 101), c = data_stamp(2 * kBlock, 102);
  store->write(f, a, 0, pattern(kBlock, 1));
  store->write(f, a, 1, pattern(kBlock, 2));
  EXPECT_TRUE(store->restamp(f, a, b));
  EXPECT_FALSE(store->read(f, a, 0));
  EXPECT_EQ(store->read(f, b, 1), pattern(kBlock, 2));
  // Not under `before` any more: the file's blocks go.
  EXPECT_FALSE(store->restamp(f, a, c));
  EXPECT_FALSE(store->read(f, b, 1));
  EXPECT_EQ(store->usage().files, 0u);
  EXPECT_EQ(store->usage().bytes, 0u);
  EXPECT_FALSE(store->restamp(data_file(1, 9), a, b));
}

TEST_P(BlockStoreTest, RestampToAnotherSizeDropsTheBlocksThatNoLongerFit) {
  const auto f = data_file(1, 1);
  const auto a = data_stamp(3 * kBlock + 10);
  for (std::uint32_t i = 0; i < 3; ++i) store->write(f, a, i, pattern(kBlock, i));
  store->write(f, a, 3, pattern(10, 3));
  // Grown: the old short last block is no longer the last one.
  const auto grown = data_stamp(5 * kBlock, 101);
  ASSERT_TRUE(store->restamp(f, a, grown));
  EXPECT_FALSE(store->read(f, grown, 3));
  EXPECT_TRUE(store->read(f, grown, 2));
  // Shrunk into block 1: blocks 1 and 2 go, block 0 stays.
  const auto shrunk = data_stamp(kBlock + 5, 102);
  ASSERT_TRUE(store->restamp(f, grown, shrunk));
  EXPECT_EQ(store->read(f, shrunk, 0), pattern(kBlock, 0));
  EXPECT_FALSE(store->read(f, shrunk, 1));
  EXPECT_FALSE(store->read(f, shrunk, 2));
  EXPECT_EQ(store->usage().blocks, 1u);
  EXPECT_EQ(store->usage().bytes, kBlock);
}

TEST_P(BlockStoreTest, ApplyWritePatchesCachedBlocksOnly) {
  const auto f = data_file(1, 1);
  const auto a = data_stamp(3 * kBlock), b = data_stamp(3 * kBlock, 101);
  store->write(f, a, 0, pattern(kBlock, 0));
  store->write(f, a, 2, pattern(kBlock, 2));
  // 200 bytes across the end of block 0 into block 1 (not cached).
  const std::string w = pattern(200, 9);
  ASSERT_TRUE(store->apply_write(f, a, b, kBlock - 100, w));
  std::string want = pattern(kBlock, 0);
  want.replace(kBlock - 100, 100, w.substr(0, 100));
  EXPECT_EQ(store->read(f, b, 0), want);
  EXPECT_FALSE(store->read(f, b, 1));
  EXPECT_EQ(store->read(f, b, 2), pattern(kBlock, 2));
  EXPECT_EQ(store->usage().blocks, 2u);
}

TEST_P(BlockStoreTest, ApplyWriteAppendingGrowsTheLastBlockAndZeroFillsAGap) {
  const auto f = data_file(1, 1);
  const auto a = data_stamp(100);
  store->write(f, a, 0, pattern(100, 1));
  // Append right at the end.
  const auto b = data_stamp(150, 101);
  ASSERT_TRUE(store->apply_write(f, a, b, 100, pattern(50, 2)));
  EXPECT_EQ(store->read(f, b, 0), pattern(100, 1) + pattern(50, 2));
  // Past the end, leaving a hole of 10 bytes.
  const auto c = data_stamp(170, 102);
  ASSERT_TRUE(store->apply_write(f, b, c, 160, pattern(10, 3)));
  EXPECT_EQ(store->read(f, c, 0), pattern(100, 1) + pattern(50, 2) + std::string(10, '\0') + pattern(10, 3));
  EXPECT_EQ(store->usage().bytes, 170u);
  // A write in a later block: the short block 0 must become full of zeros, so it goes.
  const auto d = data_stamp(kBlock + 10, 103);
  ASSERT_TRUE(store->apply_write(f, c, d, kBlock, pattern(10, 4)));
  EXPECT_FALSE(store->read(f, d, 0));
  EXPECT_EQ(store->usage().blocks, 0u);
}

TEST_P(BlockStoreTest, ApplyWriteUnderAnotherStampDropsTheFile) {
  const auto f = data_file(1, 1);
  const auto a = data_stamp(kBlock), other = data_stamp(kBlock, 99), b = data_stamp(kBlock, 101);
  store->write(f, a, 0, pattern(kBlock, 0));
  EXPECT_FALSE(store->apply_write(f, other, b, 0, "x"));
  EXPECT_FALSE(store->read(f, a, 0));
  EXPECT_FALSE(store->read(f, b, 0));
  EXPECT_EQ(store->usage().files, 0u);
}

TEST_P(BlockStoreTest, DropFileAndDropExport) {
  const auto st = data_stamp(kBlock);
  const auto f1 = data_file(1, 1), f2 = data_file(1, 2), g1 = data_file(2, 1);
  for (const auto& f : {f1, f2, g1}) store->write(f, st, 0, pattern(kBlock, f.export_id));
  store->drop_file(f1);
  EXPECT_FALSE(store->read(f1, st, 0));
  EXPECT_TRUE(store->read(f2, st, 0));
  EXPECT_EQ(store->usage().files, 2u);
  store->write(f1, st, 0, pattern(kBlock, 5));
  store->drop_export(1);
  EXPECT_FALSE(store->read(f1, st, 0));
  EXPECT_FALSE(store->read(f2, st, 0));
  EXPECT_EQ(store->read(g1, st, 0), pattern(kBlock, 2));
  const auto u = store->usage();
  EXPECT_EQ(u.files, 1u);
  EXPECT_EQ(u.blocks, 1u);
  EXPECT_EQ(u.evicted_files, 0u);  // drops are not evictions
}

// Reopening is the disk store's alone (the memory store does not outlive itself):
// these run on it only, not skipped on the other.
class DiskReopenTest : public BlockStoreTest {};

TEST_P(DiskReopenTest, ReopenKeepsBlocksAndUsage) {
  const auto f = data_file(1, 1);
  const auto st = data_stamp(kBlock + 7);
  store->write(f, st, 0, pattern(kBlock, 1));
  store->write(f, st, 1, pattern(7, 2));
  reopen();
  EXPECT_EQ(store->read(f, st, 0), pattern(kBlock, 1));
  EXPECT_EQ(store->read(f, st, 1), pattern(7, 2));
  const auto u = store->usage();
  EXPECT_EQ(u.files, 1u);
  EXPECT_EQ(u.blocks, 2u);
  EXPECT_EQ(u.bytes, kBlock + 7u);
  // A new file after the reopen gets a data file of its own.
  store->write(data_file(1, 2), st, 0, pattern(kBlock, 3));
  EXPECT_EQ(store->read(f, st, 0), pattern(kBlock, 1));
  EXPECT_EQ(store->read(data_file(1, 2), st, 0), pattern(kBlock, 3));
}

TEST_P(DiskReopenTest, AnotherBlockSizeAtReopenDropsWhatWasStored) {
  const auto f = data_file(1, 1);
  const auto st = data_stamp(4 * kBlock);
  for (std::uint32_t i = 0; i < 4; ++i) store->write(f, st, i, pattern(kBlock, i));
  reopen();  // the same size: kept (positive control)
  ASSERT_EQ(store->usage().blocks, 4u);
  store.reset();
  BlockStoreOptions o;
  o.block_bytes = 2 * kBlock;
  o.disk_bytes = 1 << 20;
  o.clock = &clock;
  store = open_file_block_store(dir.path(), o);
  const auto u = store->usage();
  EXPECT_EQ(u.files, 0u);
  EXPECT_EQ(u.blocks, 0u);
  EXPECT_FALSE(store->read(f, st, 0)) << "a block of the old size was served";
  store->write(f, st, 0, pattern(2 * kBlock, 9));
  EXPECT_EQ(store->read(f, st, 0), pattern(2 * kBlock, 9));
}

INSTANTIATE_TEST_SUITE_P(Disk, DiskReopenTest, ::testing::Combine(::testing::Values(true), ::testing::Bool()),
                         [](const auto& info) { return std::get<1>(info.param) ? "DiskHot" : "Disk"; });

INSTANTIATE_TEST_SUITE_P(Stores, BlockStoreTest, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "Disk" : "Memory") +
                                  (std::get<1>(info.param) ? "Hot" : "");
                         });

}  // namespace
}  // namespace nfsgw::cache
