// Read-ahead: which blocks are due (ReadAhead), and the layer fetching them in
// the background after sequential READs, within the export's in-flight limit.
#include "gateway/datacache/read_ahead.h"
#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

nfs3::FileHandle handle(std::uint8_t id) {
  nfs3::FileHandle fh;
  fh.len = 4;
  fh.bytes[0] = id;
  return fh;
}

cache::Stamp version(std::uint64_t size, std::uint32_t mtime = 1) {
  cache::Stamp s;
  s.size = size;
  s.mtime = s.ctime = {mtime, 0};
  return s;
}

TEST(ReadAheadPlan, SequentialReadsGetTheWindowAheadOnce) {
  ReadAhead ra(100, 300);
  const auto f = handle(1);
  const auto v = version(10'000);
  auto r = ra.on_read(f, v, 0, 100, 16);  // a file's start counts as sequential
  EXPECT_EQ(r.first, 1u);
  EXPECT_EQ(r.end, 4u);
  r = ra.on_read(f, v, 100, 200, 16);  // only the block that entered the window
  EXPECT_EQ(r.first, 4u);
  EXPECT_EQ(r.end, 5u);
  r = ra.on_read(f, v, 150, 250, 16);  // within a block of the last end: still sequential
  EXPECT_EQ(r.first, 5u);
  EXPECT_EQ(r.end, 6u);
}

TEST(ReadAheadPlan, RandomReadsGetNothingAndResetTheMark) {
  ReadAhead ra(100, 300);
  const auto f = handle(1);
  const auto v = version(10'000);
  EXPECT_EQ(ra.on_read(f, v, 5000, 5100, 16).size(), 0u);  // not at the start of an unseen file
  EXPECT_EQ(ra.on_read(f, v, 2000, 2100, 16).size(), 0u);
  auto r = ra.on_read(f, v, 2100, 2200, 16);  // now sequential
  EXPECT_EQ(r.first, 22u);
  EXPECT_EQ(r.end, 25u);
}

TEST(ReadAheadPlan, TheWindowStopsAtTheEndOfTheFileAndAtTheLimit) {
  ReadAhead ra(100, 1000);
  const auto f = handle(1);
  auto r = ra.on_read(f, version(350), 0, 100, 16);
  EXPECT_EQ(r.first, 1u);
  EXPECT_EQ(r.end, 4u);  // blocks 1..3 hold bytes 100..349
  const auto g = handle(2);
  r = ra.on_read(g, version(10'000), 0, 100, 2);
  EXPECT_EQ(r.size(), 2u);
  r = ra.on_read(g, version(10'000), 100, 200, 16);  // what the limit left out comes next
  EXPECT_EQ(r.first, 3u);
  EXPECT_EQ(r.end, 12u);
}

TEST(ReadAheadPlan, ANewVersionStartsAgain) {
  ReadAhead ra(100, 200);
  const auto f = handle(1);
  EXPECT_EQ(ra.on_read(f, version(10'000, 1), 0, 100, 16).size(), 2u);
  auto r = ra.on_read(f, version(10'000, 2), 100, 200, 16);
  EXPECT_EQ(r.first, 2u);  // block 2 again: it was started for the old version
  EXPECT_EQ(r.end, 4u);
}

TEST(ReadAheadPlan, OnlyTheMostRecentFilesAreRemembered) {
  ReadAhead ra(100, 200, 2);
  const auto v = version(10'000);
  ra.on_read(handle(1), v, 1000, 1100, 16);
  ra.on_read(handle(2), v, 1000, 1100, 16);
  ra.on_read(handle(3), v, 1000, 1100, 16);
  EXPECT_EQ(ra.files(), 2u);
  EXPECT_EQ(ra.on_read(handle(1), v, 1100, 1200, 16).size(), 0u);  // forgotten: not sequential
  EXPECT_GT(ra.on_read(handle(3), v, 1100, 1200, 16).size(), 0u);  // control: remembered
}

class ReadAheadTest : public DataCacheTest {
 protected:
  ReadAheadTest() { settings.readahead_bytes = 4 * kBlock; }
};

TEST_F(ReadAheadTest, SequentialReadsAreServedFromBlocksReadAhead) {
  start();
  const std::string content = pattern(16 * kBlock);
  const auto f = origin.add_file(content);
  ASSERT_EQ(bytes_of(read(f, 0, kBlock)), content.substr(0, kBlock));
  quiesce();
  EXPECT_EQ(counts().blocks_read_ahead, 4u);
  EXPECT_EQ(cached_blocks(), 5u);

  for (std::uint32_t b = 1; b < 16; ++b) {
    ASSERT_EQ(bytes_of(read(f, b * kBlock, kBlock)), content.substr(b * kBlock, kBlock)) << b;
    quiesce();
  }
  EXPECT_EQ(counts().read_misses, 1u);  // only the first
  EXPECT_EQ(counts().read_hits, 15u);
  EXPECT_EQ(counts().blocks_read_ahead, 15u);
  EXPECT_EQ(origin.calls(Proc::Read), 16u);  // each block once
}

TEST_F(ReadAheadTest, RandomReadsDoNotReadAhead) {
  start();
  const auto f = origin.add_file(pattern(16 * kBlock));
  for (std::uint32_t b : {9u, 3u, 12u, 6u}) ASSERT_EQ(read(f, b * kBlock + 5, 100).count, 100u);
  quiesce();
  EXPECT_EQ(counts().blocks_read_ahead, 0u);
  EXPECT_EQ(cached_blocks(), 4u);
  EXPECT_EQ(origin.calls(Proc::Read), 4u);
}

TEST_F(ReadAheadTest, NoReadAheadWhenTheWindowIsZero) {
  settings.readahead_bytes = 0;
  start();
  const auto f = origin.add_file(pattern(16 * kBlock));
  for (std::uint32_t b = 0; b < 4; ++b) ASSERT_EQ(read(f, b * kBlock, kBlock).count, kBlock);
  quiesce();
  EXPECT_EQ(counts().blocks_read_ahead, 0u);
  EXPECT_EQ(cached_blocks(), 4u);
}

TEST_F(ReadAheadTest, SeveralFetchesAreInFlightUpToTheExportsLimit) {
  settings.readahead_bytes = 8 * kBlock;
  settings.max_fetches_in_flight = 3;
  start();
  const auto f = origin.add_file(pattern(32 * kBlock));
  origin.hold(Proc::Read);
  auto first = spawn(read_call(f, 0, kBlock));
  pump_until([&] { return origin.held(Proc::Read) == 4; });  // the READ's own block and 3 ahead
  for (int i = 0; i < 50; ++i) {
    io.restart();
    io.run_for(1ms);
  }
  EXPECT_EQ(origin.held(Proc::Read), 4u);
  EXPECT_EQ(layer->fetches_in_flight(), 3u);
  origin.release(Proc::Read);
  ASSERT_EQ(wait(first).status, Status::Ok);
  quiesce();
  EXPECT_EQ(counts().blocks_read_ahead, 3u);
  EXPECT_EQ(layer->fetches_in_flight(), 0u);

  ASSERT_EQ(read(f, kBlock, kBlock).status, Status::Ok);  // the rest of the window follows
  quiesce();
  EXPECT_EQ(counts().blocks_read_ahead, 6u);
}

TEST_F(ReadAheadTest, AClientReadJoinsAReadAheadInFlight) {
  start();
  const std::string content = pattern(8 * kBlock);
  const auto f = origin.add_file(content);
  origin.hold(Proc::Read);
  auto first = spawn(read_call(f, 0, kBlock));
  pump_until([&] { return origin.held(Proc::Read) == 5; });
  auto second = spawn(read_call(f, kBlock, kBlock));  // block 1: being read ahead
  for (int i = 0; i < 50; ++i) {
    io.restart();
    io.run_for(1ms);
  }
  origin.release(Proc::Read);
  EXPECT_EQ(bytes_of(wait(first)), content.substr(0, kBlock));
  EXPECT_EQ(bytes_of(wait(second)), content.substr(kBlock, kBlock));
  quiesce();
  EXPECT_EQ(origin.calls(Proc::Read), 6u);  // blocks 0..5, each once
}

}  // namespace
}  // namespace nfsgw::datacache::test
