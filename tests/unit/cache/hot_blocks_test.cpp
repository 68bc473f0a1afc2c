// The hot tier of the block store (cache/hot_blocks.h): its bound and order, and
// that a store with it answers exactly as the same store without it, whatever
// changes its files go through (a copy that outlived a change would show here).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "block_store_helpers.h"
#include "cache/block_store.h"
#include "cache/hot_blocks.h"

namespace nfsgw::cache {
namespace {

using testing::data_file;
using testing::data_stamp;
using testing::pattern;

std::shared_ptr<const std::string> bytes_of(std::size_t n, std::uint32_t seed) {
  return std::make_shared<const std::string>(pattern(n, seed));
}

std::string fkey(int n) { return "file-" + std::to_string(n); }

TEST(HotBlocks, FindsWhatItKeptUnderItsStampOnly) {
  HotBlocks hot(1 << 20);
  const Stamp st = data_stamp(100), other = data_stamp(101);
  EXPECT_FALSE(hot.find(fkey(1), 0, st));
  hot.keep(fkey(1), 0, st, bytes_of(100, 1), 42);
  const auto copy = hot.find(fkey(1), 0, st);
  ASSERT_TRUE(copy);
  EXPECT_EQ(*copy.bytes, pattern(100, 1));
  EXPECT_EQ(copy.last_used, 42);
  EXPECT_FALSE(hot.find(fkey(1), 0, other)) << "another version of the file";
  EXPECT_FALSE(hot.find(fkey(1), 1, st)) << "another block";
  EXPECT_FALSE(hot.find(fkey(2), 0, st)) << "another file";
  hot.touched(fkey(1), 99);
  EXPECT_EQ(hot.find(fkey(1), 0, st).last_used, 99);
  EXPECT_EQ(hot.hits(), 2u);
  // A copy under a new stamp replaces the file's others.
  hot.keep(fkey(1), 1, st, bytes_of(100, 2), 42);
  hot.keep(fkey(1), 2, other, bytes_of(100, 3), 42);
  EXPECT_FALSE(hot.find(fkey(1), 1, st));
  EXPECT_TRUE(hot.find(fkey(1), 2, other));
  EXPECT_EQ(hot.blocks(), 1u);
}

TEST(HotBlocks, ForgetsFilesBlocksAndEverything) {
  HotBlocks hot(1 << 20);
  const Stamp st = data_stamp(100);
  for (int f = 0; f < 3; ++f)
    for (std::uint64_t i = 0; i < 2; ++i) hot.keep(fkey(f), i, st, bytes_of(100, f), 0);
  ASSERT_EQ(hot.blocks(), 6u);
  hot.forget_block(fkey(0), 1);
  EXPECT_TRUE(hot.find(fkey(0), 0, st));
  EXPECT_FALSE(hot.find(fkey(0), 1, st));
  hot.forget_file(fkey(1));
  EXPECT_FALSE(hot.find(fkey(1), 0, st));
  EXPECT_TRUE(hot.find(fkey(2), 0, st));
  EXPECT_EQ(hot.blocks(), 3u);
  hot.forget_all();
  EXPECT_EQ(hot.blocks(), 0u);
  EXPECT_EQ(hot.bytes(), 0u) << "every byte counted is given back";
}

TEST(HotBlocks, StaysWithinItsBudgetLeastRecentlyUsedFileFirst) {
  constexpr std::size_t kBudget = 256 << 10;
  HotBlocks hot(kBudget);
  const Stamp st = data_stamp(4096);
  hot.keep(fkey(0), 0, st, bytes_of(4096, 0), 0);
  std::size_t most = 0;
  for (int f = 1; f < 1000; ++f) {
    hot.keep(fkey(f), 0, st, bytes_of(4096, f), 0);
    ASSERT_TRUE(hot.find(fkey(0), 0, st)) << "file 0 is used all along: never the least recent (at " << f << ")";
    most = std::max(most, hot.bytes());
  }
  EXPECT_LE(most, kBudget);
  EXPECT_GT(most, kBudget / 2) << "positive control: it filled";
  EXPECT_FALSE(hot.find(fkey(1), 0, st)) << "an early file, unused since: forgotten";
  EXPECT_TRUE(hot.find(fkey(999), 0, st));
  // A block larger than a file may hold is not kept; nothing is kept with no budget.
  hot.keep(fkey(5000), 0, st, bytes_of(kBudget / HotBlocks::kShards, 1), 0);
  EXPECT_FALSE(hot.find(fkey(5000), 0, st));
  HotBlocks none(0);
  none.keep(fkey(1), 0, st, bytes_of(10, 1), 0);
  EXPECT_FALSE(none.find(fkey(1), 0, st));
  EXPECT_EQ(none.bytes(), 0u);
}

TEST(HotBlocks, AFileHoldsAtMostHalfAShard) {
  constexpr std::size_t kBudget = 256 << 10;  // 32 KiB a shard: a file holds at most 16 KiB
  HotBlocks hot(kBudget);
  const Stamp st = data_stamp(1 << 20);
  for (std::uint64_t i = 0; i < 10; ++i) hot.keep(fkey(1), i, st, bytes_of(4096, i), 0);
  EXPECT_LE(hot.bytes(), kBudget / HotBlocks::kShards / 2);
  EXPECT_TRUE(hot.find(fkey(1), 9, st)) << "the block just kept stays";
}

// Every forget moves the file's change counter (an answer built from its blocks
// rests on it), whether the tier keeps copies or not; finding and keeping do not.
TEST(HotBlocks, ItsWatchMovesOnEveryForgetOnly) {
  for (const std::size_t budget : {std::size_t{1} << 20, std::size_t{0}}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    HotBlocks hot(budget);
    const Stamp st = data_stamp(100, 1);
    auto holds = [](const Watch& w) { return w.counter->load() == w.seen; };
    Watch w = hot.watch(fkey(1));
    hot.keep(fkey(1), 0, st, bytes_of(100, 1), 0);
    (void)hot.find(fkey(1), 0, st);
    std::string out(10, '\0');
    (void)hot.copy_out(fkey(1), 0, st, 100, 5, out);
    hot.touched(fkey(1), 5);
    EXPECT_TRUE(holds(w)) << "keep, find, copy_out and touched change no block";
    hot.forget_block(fkey(1), 3);  // even one it does not hold: the store's block changes
    EXPECT_FALSE(holds(w));
    w = hot.watch(fkey(1));
    hot.forget_file(fkey(1));
    EXPECT_FALSE(holds(w));
    w = hot.watch(fkey(1));
    hot.forget_all();
    EXPECT_FALSE(holds(w));
  }
}

// ---- the store with and without it -------------------------------------------------

constexpr std::uint32_t kHotBlock = 4096;

struct Pair {
  ManualClock clock;
  std::unique_ptr<BlockStore> hot, plain;
  Pair() {
    BlockStoreOptions o;
    o.block_bytes = kHotBlock;
    o.disk_bytes = 12 * kHotBlock;  // small: eviction runs too
    o.clock = &clock;
    plain = make_memory_block_store(o);
    o.memory_bytes = 256 << 10;  // 16 KiB a file: a few of its blocks at most
    hot = make_memory_block_store(o);
  }
};

// Random changes and reads of a few files on both; every answer must be the same.
TEST(HotBlocksInTheStore, AnswersExactlyAsTheStoreWithoutIt) {
  Pair p;
  std::mt19937 rng(7);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  constexpr int kFiles = 6;
  // The version each file is at (its size and mtime); callers sometimes ask with an
  // older one, as a client with stale attributes would.
  std::vector<Stamp> now(kFiles), before(kFiles);
  for (int f = 0; f < kFiles; ++f) now[f] = before[f] = data_stamp(kHotBlock * (1 + pick(6)) + pick(100), 1);
  auto some_stamp = [&](int f) { return pick(8) == 0 ? before[f] : now[f]; };
  // A change moves the times on, or not (an origin whose times are coarse).
  auto next_version = [&](int f) {
    Stamp after = now[f];
    if (pick(4) != 0) after.mtime.seconds += 1;
    before[f] = now[f];
    return after;
  };
  auto block_length = [](const Stamp& st, std::uint64_t index) -> std::uint64_t {
    const std::uint64_t start = index * kHotBlock;
    return st.size > start ? std::min<std::uint64_t>(kHotBlock, st.size - start) : kHotBlock;
  };
  // Answers built from blocks read at once (a READ step's), with what they rest on:
  // while its basis holds, the store must still hold the same bytes (a change of a
  // file's blocks that does not move its counter would leave a kept READ answer
  // stale). Checked after every step, on both stores.
  struct Kept {
    BlockStore* store;
    ObjectKey file;
    Stamp stamp;
    std::uint64_t index, from;
    std::string bytes;
    AnswerBasis basis;
  };
  std::vector<Kept> kept;
  std::size_t kept_checks = 0;
  auto check_kept = [&] {
    std::erase_if(kept, [](const Kept& k) { return !k.basis.still_holds(); });
    for (const Kept& k : kept) {
      const auto block = k.store->read(k.file, k.stamp, k.index);
      ASSERT_TRUE(block.has_value()) << "a block gone while an answer built from it holds";
      EXPECT_EQ(block->substr(k.from, k.bytes.size()), k.bytes) << "changed while an answer holds";
      ++kept_checks;
    }
  };
  std::uint32_t seed = 1;
  int reads = 0;
  for (int step = 0; step < 20000; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const int f = pick(kFiles);
    const ObjectKey file = data_file(1 + f % 2, static_cast<std::uint8_t>(f));
    const Stamp st = some_stamp(f);
    const std::uint64_t blocks = (st.size + kHotBlock - 1) / kHotBlock;
    const std::uint64_t index = pick(static_cast<int>(blocks) + 1);
    switch (pick(24)) {
      case 0:
      case 1:
      case 2:
      case 3: {  // a fetched block
        if (index >= blocks || !(st == now[f])) break;  // fetched under the file's version
        const std::string data = pattern(block_length(st, index), ++seed);
        p.hot->write(file, st, index, data);
        p.plain->write(file, st, index, data);
        break;
      }
      case 4: {  // a change through the gateway: a WRITE, maybe growing the file
        Stamp after = next_version(f);
        const std::uint64_t offset = pick(static_cast<int>(after.size) + 10);
        const std::string data = pattern(1 + pick(2 * kHotBlock), ++seed);
        after.size = std::max<std::uint64_t>(after.size, offset + data.size());
        EXPECT_EQ(p.hot->apply_write(file, st, after, offset, data), p.plain->apply_write(file, st, after, offset, data));
        now[f] = after;
        break;
      }
      case 5: {  // a SETATTR: the size moves, or only the times
        Stamp after = next_version(f);
        if (pick(2) == 0) after.size = pick(6 * kHotBlock);
        EXPECT_EQ(p.hot->restamp(file, st, after), p.plain->restamp(file, st, after));
        now[f] = after;
        break;
      }
      case 6:
        if (pick(4) == 0) {
          p.hot->drop_export(1 + f % 2);
          p.plain->drop_export(1 + f % 2);
        } else {
          p.hot->drop_file(file);
          p.plain->drop_file(file);
        }
        break;
      case 7:
        p.clock.advance(BlockStoreOptions{}.touch_interval_ms / 3);
        break;
      case 8:
      case 9:
      case 10:
      case 11: {
        ++reads;
        EXPECT_EQ(p.hot->read(file, st, index), p.plain->read(file, st, index));
        break;
      }
      default: {  // a part of a block, as a READ step asks for it
        ++reads;
        const std::uint64_t length = block_length(st, index);
        const std::uint64_t from = pick(static_cast<int>(length));
        const std::uint64_t n = 1 + pick(static_cast<int>(length - from));
        std::string a(n, 'a'), b(n, 'b');
        AnswerBasis ba, bb;
        ba.vouch();
        bb.vouch();
        const auto ra = p.hot->read_now(file, st, index, BlockStore::Part{length, from, a}, ba);
        const auto rb = p.plain->read_now(file, st, index, BlockStore::Part{length, from, b}, bb);
        EXPECT_EQ(ra, rb);
        if (ra == BlockStore::Now::Hit && rb == BlockStore::Now::Hit) {
          EXPECT_EQ(a, b);
        }
        if (kept.size() < 64) {
          if (ra == BlockStore::Now::Hit && ba.keepable()) kept.push_back({p.hot.get(), file, st, index, from, a, ba});
          if (rb == BlockStore::Now::Hit && bb.keepable()) kept.push_back({p.plain.get(), file, st, index, from, b, bb});
        }
        break;
      }
    }
    check_kept();
    if (::testing::Test::HasFailure()) return;
  }
  // Positive control: answers were kept and checked while they held.
  EXPECT_GT(kept_checks, 1000u);
  const BlockUsage h = p.hot->usage(), n = p.plain->usage();
  EXPECT_EQ(h.read_hits, n.read_hits);
  EXPECT_EQ(h.read_misses, n.read_misses);
  EXPECT_EQ(h.bytes, n.bytes);
  EXPECT_EQ(h.evicted_files, n.evicted_files);
  // Positive controls: the hot tier answered many of the reads, and eviction ran.
  EXPECT_GT(n.read_hits, static_cast<std::uint64_t>(reads) / 10) << reads << " reads";
  EXPECT_GT(h.memory_hits, n.read_hits / 4) << n.read_hits << " hits";
  EXPECT_GT(n.evicted_files, 0u);
  EXPECT_LE(h.memory_bytes, h.memory_budget);
  EXPECT_EQ(n.memory_hits, 0u);
}

}  // namespace
}  // namespace nfsgw::cache
