// READ data in flight is bounded by memory_mb's shares (DataCacheSettings::
// reply_budget, block_budget): fetches from the origin wait for room, READs wait
// for room for their reply, read-ahead does without; no READ fails for it, and
// every byte is given back.
#include <vector>

#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

class ReadBudgetTest : public DataCacheTest {
 protected:
  /// Lets the io_context and the pool run a while: whatever could start, has.
  void settle() {
    for (int i = 0; i < 200; ++i) {
      io.restart();
      io.run_for(1ms);
    }
  }
};

TEST_F(ReadBudgetTest, FetchesFromTheOriginWaitForRoomInTheBlockShare) {
  // Room for two fetches: each holds twice its block while its READ is out.
  settings.block_budget = std::make_shared<cache::ByteBudget>(4 * kBlock);
  start();
  const std::string content = pattern(4 * kBlock);
  const auto f = origin.add_file(content);
  origin.hold(Proc::Read);
  std::vector<std::future<nfs3::ReadRes>> readers;
  for (std::uint32_t b = 0; b < 4; ++b) readers.push_back(spawn(read_call(f, b * kBlock, kBlock)));
  pump_until([&] { return origin.held(Proc::Read) == 2; });
  settle();
  EXPECT_EQ(origin.held(Proc::Read), 2u) << "two fetches in flight at most";
  EXPECT_EQ(settings.block_budget->usage().used, 4u * kBlock);
  EXPECT_EQ(settings.block_budget->usage().waits, 2u);
  origin.release(Proc::Read);
  for (std::uint32_t b = 0; b < 4; ++b) {
    auto r = wait(readers[b]);
    ASSERT_EQ(r.status, Status::Ok) << b;
    EXPECT_EQ(bytes_of(r), content.substr(b * kBlock, kBlock)) << b;
  }
  quiesce();
  EXPECT_EQ(origin.calls(Proc::Read), 4u);
  EXPECT_EQ(settings.block_budget->usage().used, 0u) << "every block's bytes given back";
  EXPECT_LE(settings.block_budget->usage().peak, 4u * kBlock);
}

TEST_F(ReadBudgetTest, AReadWaitsForRoomForItsReplyBeforeItAsksForAnything) {
  settings.reply_budget = std::make_shared<cache::ByteBudget>(kBlock);
  start();
  const std::string content = pattern(2 * kBlock);
  const auto f = origin.add_file(content);
  origin.hold(Proc::Read);
  auto first = spawn(read_call(f, 0, kBlock));
  pump_until([&] { return origin.held(Proc::Read) == 1; });
  auto second = spawn(read_call(f, kBlock, kBlock));
  pump_until([&] { return settings.reply_budget->usage().waits == 1; });
  settle();
  EXPECT_EQ(origin.held(Proc::Read), 1u) << "the second READ's reply has no room yet";
  origin.release(Proc::Read);
  EXPECT_EQ(bytes_of(wait(first)), content.substr(0, kBlock));
  EXPECT_EQ(bytes_of(wait(second)), content.substr(kBlock, kBlock));
  quiesce();
  EXPECT_EQ(settings.reply_budget->usage().used, 0u);
  EXPECT_EQ(settings.reply_budget->usage().peak, kBlock);
}

TEST_F(ReadBudgetTest, ReadAheadIsSkippedWhenTheShareIsUsedUpAndNeverMakesAReadWait) {
  settings.readahead_bytes = 4 * kBlock;
  settings.block_budget = std::make_shared<cache::ByteBudget>(2 * kBlock);
  start();
  const std::string content = pattern(8 * kBlock);
  const auto f = origin.add_file(content);
  // Something else holds the whole share: the READ's own fetch waits for it, and
  // each block read-ahead would start is refused rather than queued.
  ASSERT_TRUE(settings.block_budget->try_take(2 * kBlock));
  auto reader = spawn(read_call(f, 0, kBlock));
  pump_until([&] {
    const auto u = settings.block_budget->usage();
    return u.waits == 1 && u.refused >= 4;  // blocks 1..4
  });
  settle();
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
  settings.block_budget->release(2 * kBlock);
  auto r = wait(reader);
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(bytes_of(r), content.substr(0, kBlock));
  quiesce();
  EXPECT_EQ(origin.calls(Proc::Read), 1u) << "no block was read ahead";
  EXPECT_EQ(counts().blocks_read_ahead, 0u);
  EXPECT_EQ(settings.block_budget->usage().used, 0u);
}

TEST_F(ReadBudgetTest, ReadAheadWithinTheShareHoldsItsBlocksUntilTheyAreStored) {
  settings.readahead_bytes = 2 * kBlock;
  settings.block_budget = std::make_shared<cache::ByteBudget>(64 * kBlock);
  start();
  const std::string content = pattern(4 * kBlock);
  const auto f = origin.add_file(content);
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), content.substr(0, kBlock));
  quiesce();
  EXPECT_EQ(counts().blocks_read_ahead, 2u);
  EXPECT_EQ(settings.block_budget->usage().used, 0u);
  EXPECT_EQ(cached_blocks(), 3u) << "the READ's block and the two read ahead, kept";
}

}  // namespace
}  // namespace nfsgw::datacache::test
