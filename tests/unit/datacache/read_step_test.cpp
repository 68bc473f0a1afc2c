// The data cache's READ answer step (DataCache::read_now): it answers exactly what
// the coroutine answers, from blocks in memory, when the layer below answers the
// file's attributes and the caller's permission at once; otherwise it passes, and
// then nothing has been counted.
#include <random>

#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

class ReadStepTest : public DataCacheTest {
 protected:
  void start_with_steps() {
    start();
    origin.answer_steps(true);
  }
  Now<nfs3::ReadRes> read_now(const nfs3::FileHandle& fh, std::uint64_t offset, std::uint32_t count,
                              const CallContext& ctx = as(0)) {
    return layer->read_now(ctx, nfs3::ReadArgs{fh, offset, count});
  }
  static void expect_same(const nfs3::ReadRes& step, const nfs3::ReadRes& coroutine) {
    EXPECT_EQ(step.status, coroutine.status);
    EXPECT_EQ(bytes_of(step), bytes_of(coroutine));
    EXPECT_EQ(step.count, coroutine.count);
    EXPECT_EQ(step.eof, coroutine.eof);
    EXPECT_EQ(step.file_attributes, coroutine.file_attributes);
    EXPECT_FALSE(step.gateway_status);
  }
};

TEST_F(ReadStepTest, ACachedBlockIsAnsweredAtOnceAndCountedOnce) {
  start_with_steps();
  const auto f = origin.add_file(pattern(100, 3));
  const nfs3::ReadRes first = read(f, 0, 4096);  // fetches the block
  ASSERT_EQ(bytes_of(first), pattern(100, 3));
  origin.reset_calls();
  const DataCounts before = counts();
  const std::uint64_t steps_before = origin.step_answers();

  const auto now = read_now(f, 0, 4096);
  ASSERT_TRUE(now) << "a cached block of a file whose attributes and permission are known";
  expect_same(*now, first);
  EXPECT_EQ(origin.calls(nfs3::Proc::Read) + origin.calls(nfs3::Proc::Getattr) + origin.calls(nfs3::Proc::Access), 0u);
  const DataCounts after = counts();
  EXPECT_EQ(after.reads, before.reads + 1);
  EXPECT_EQ(after.read_hits, before.read_hits + 1);
  EXPECT_EQ(after.bytes_from_cache, before.bytes_from_cache + 100);
  EXPECT_EQ(origin.step_answers(), steps_before + 2) << "the GETATTR and ACCESS it used, counted once each";
}

// An answer of a file of one block rests on what the layer below's GETATTR and
// ACCESS rest on and on the file's blocks; a copy given again counts as the READ
// it stands for.
TEST_F(ReadStepTest, AnAnswerRestsOnTheAnswersBelowAndOnTheBlocks) {
  start_with_steps();
  const auto f = origin.add_file(pattern(100, 3));
  ASSERT_EQ(bytes_of(read(f, 0, 4096)), pattern(100, 3));
  const auto now = read_now(f, 0, 4096);
  ASSERT_TRUE(now);
  ASSERT_TRUE(now.basis.keepable());
  EXPECT_TRUE(now.basis.still_holds());

  // A copy given again counts a READ, a hit, its bytes and the two answers below.
  const DataCounts before = counts();
  const std::uint64_t steps_before = origin.step_answers();
  now.basis.replay_bumps();
  EXPECT_EQ(counts().reads, before.reads + 1);
  EXPECT_EQ(counts().read_hits, before.read_hits + 1);
  EXPECT_EQ(counts().bytes_from_cache, before.bytes_from_cache + 100);
  EXPECT_EQ(origin.step_answers(), steps_before + 2);

  // The blocks change (here: dropped from the store), the layer below does not.
  const auto kept = read_now(f, 0, 4096);
  ASSERT_TRUE(kept);
  store->drop_file(cache::ObjectKey{kExport, f});
  EXPECT_FALSE(kept.basis.still_holds()) << "rests on the file's blocks";

  // The layer below's answers change (the caller's permission), the blocks do not.
  ASSERT_EQ(bytes_of(read(f, 0, 4096)), pattern(100, 3));
  const auto again = read_now(f, 0, 4096);
  ASSERT_TRUE(again);
  ASSERT_TRUE(again.basis.still_holds()) << "positive control";
  origin.refuse_read(kUser);
  EXPECT_FALSE(again.basis.still_holds()) << "rests on the GETATTR and ACCESS answers below";
}

TEST_F(ReadStepTest, AWriteThroughTheCacheVoidsAnswersOfTheFile) {
  start_with_steps();
  const auto f = origin.add_file(pattern(100, 3));
  ASSERT_EQ(bytes_of(read(f, 0, 4096)), pattern(100, 3));
  const auto now = read_now(f, 0, 4096);
  ASSERT_TRUE(now);
  ASSERT_TRUE(now.basis.still_holds());
  ASSERT_EQ(write(f, 10, "changed").status, Status::Ok);
  EXPECT_FALSE(now.basis.still_holds());
}

TEST_F(ReadStepTest, AnAnswerOfAFileWithReadAheadIsNotKept) {
  settings.readahead_bytes = 2 * kBlock;
  start_with_steps();
  const auto small = origin.add_file(pattern(100, 1));
  const auto big = origin.add_file(pattern(2 * kBlock, 2));
  ASSERT_EQ(read(small, 0, 100).status, Status::Ok);
  ASSERT_EQ(read(big, 0, kBlock).status, Status::Ok);
  ASSERT_EQ(read(big, kBlock, kBlock).status, Status::Ok);
  quiesce();
  const auto one_block = read_now(small, 0, 100);
  ASSERT_TRUE(one_block);
  EXPECT_TRUE(one_block.basis.keepable()) << "positive control";
  const auto two_blocks = read_now(big, 0, kBlock);
  ASSERT_TRUE(two_blocks);
  EXPECT_FALSE(two_blocks.basis.keepable()) << "its READs are tracked for read-ahead";
}

TEST_F(ReadStepTest, ABlockNotCachedPassesAndCountsNothing) {
  start_with_steps();
  const auto cached = origin.add_file(pattern(100, 1));
  ASSERT_EQ(bytes_of(read(cached, 0, 100)), pattern(100, 1));  // rtmax known from here on
  ASSERT_TRUE(read_now(cached, 0, 100)) << "positive control";
  const auto f = origin.add_file(pattern(100, 2));
  const DataCounts before = counts();
  const std::uint64_t steps_before = origin.step_answers();
  EXPECT_FALSE(read_now(f, 0, 100));
  EXPECT_EQ(counts().reads, before.reads);
  EXPECT_EQ(origin.step_answers(), steps_before) << "asked tentatively, not used: not counted";
  // The coroutine then answers it, from the origin.
  EXPECT_EQ(bytes_of(read(f, 0, 100)), pattern(100, 2));
  EXPECT_EQ(counts().read_misses, before.read_misses + 1);
}

TEST_F(ReadStepTest, PassesWhenTheLayerBelowCannotAnswerAtOnce) {
  start();  // the layer below has no answer steps
  const auto f = origin.add_file(pattern(100, 1));
  ASSERT_EQ(bytes_of(read(f, 0, 100)), pattern(100, 1));
  EXPECT_FALSE(read_now(f, 0, 100));
  origin.answer_steps(true);
  EXPECT_TRUE(read_now(f, 0, 100)) << "positive control";
}

TEST_F(ReadStepTest, ACallerRefusedReadingPasses) {
  start_with_steps();
  const auto f = origin.add_file(pattern(100, 1));
  ASSERT_EQ(bytes_of(read(f, 0, 100)), pattern(100, 1));
  ASSERT_TRUE(read_now(f, 0, 100, as(kUser))) << "positive control";
  origin.refuse_read(kUser);
  EXPECT_FALSE(read_now(f, 0, 100, as(kUser)));
  EXPECT_TRUE(read_now(f, 0, 100, as(0)));
}

TEST_F(ReadStepTest, AFileChangedSinceItsBlocksWereFetchedPasses) {
  start_with_steps();
  const auto f = origin.add_file(pattern(100, 1));
  ASSERT_EQ(bytes_of(read(f, 0, 100)), pattern(100, 1));
  origin.set_data(f, pattern(100, 2));  // new mtime: the blocks are of another version
  EXPECT_FALSE(read_now(f, 0, 100));
  EXPECT_EQ(bytes_of(read(f, 0, 100)), pattern(100, 2));
  const auto now = read_now(f, 0, 100);
  ASSERT_TRUE(now);
  EXPECT_EQ(bytes_of(*now), pattern(100, 2));
}

TEST_F(ReadStepTest, ReadAheadToStartIsLeftToTheCoroutine) {
  settings.readahead_bytes = 2 * kBlock;
  start_with_steps();
  const auto f = origin.add_file(pattern(8 * kBlock, 1));
  ASSERT_EQ(bytes_of(read(f, 0, kBlock)), pattern(8 * kBlock, 1).substr(0, kBlock));  // starts blocks 1-2
  quiesce();
  ASSERT_EQ(counts().blocks_read_ahead, 2u);
  // Block 1 is cached, but a sequential READ of it makes block 3 due.
  EXPECT_FALSE(read_now(f, kBlock, kBlock));
  EXPECT_EQ(bytes_of(read(f, kBlock, kBlock)), pattern(8 * kBlock, 1).substr(kBlock, kBlock));
  quiesce();
  EXPECT_EQ(counts().blocks_read_ahead, 3u);
  // Block 1 again, a READ of it now starts nothing: answered at once.
  const auto now = read_now(f, kBlock, kBlock);
  ASSERT_TRUE(now);
  EXPECT_EQ(bytes_of(*now), pattern(8 * kBlock, 1).substr(kBlock, kBlock));
}

// Any READ of a cached file, at any offset and count: the step's answer (when it
// gives one) is the coroutine's.
TEST_F(ReadStepTest, AnyRangeIsAnsweredAsTheCoroutineAnswersIt) {
  origin.set_rtmax(3 * kBlock);
  start_with_steps();
  const std::string content = pattern(3 * kBlock + 123, 5);
  const auto f = origin.add_file(content);
  for (std::uint64_t b = 0; b < 4; ++b) ASSERT_EQ(read(f, b * kBlock, kBlock).status, Status::Ok);
  std::mt19937 rng(11);
  int answered = 0;
  for (int i = 0; i < 400; ++i) {
    const std::uint64_t offset = rng() % (content.size() + 50);
    const std::uint32_t count = rng() % (4 * kBlock);
    SCOPED_TRACE("READ at " + std::to_string(offset) + " of " + std::to_string(count));
    const auto now = read_now(f, offset, count);
    const nfs3::ReadRes coroutine = read(f, offset, count);
    if (!now) continue;
    ++answered;
    expect_same(*now, coroutine);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(answered, 300) << "positive control: the step answered most of them";
}

}  // namespace
}  // namespace nfsgw::datacache::test
