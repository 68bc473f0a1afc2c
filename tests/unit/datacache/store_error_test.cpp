// A failing cache disk never fails a call: the READ goes to the origin, the error
// is counted and logged once per export. And dropping, for `nfsgw invalidate`.
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

class StoreErrorTest : public DataCacheTest {
 protected:
  StoreErrorTest() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
  }
  ~StoreErrorTest() override { spdlog::set_default_logger(previous_); }

  std::size_t logged(const std::string& what) const {
    std::size_t n = 0;
    for (const auto& line : sink_->last_formatted())
      if (line.find(what) != std::string::npos) ++n;
    return n;
  }

  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(StoreErrorTest, AFailingReadIsForwardedCountedAndLoggedOnce) {
  start();
  const std::string content = pattern(kBlock);
  const auto f = origin.add_file(content);
  store->fail_reads = true;
  for (int i = 0; i < 3; ++i) {
    auto r = read(f, 10, 100);
    ASSERT_EQ(r.status, Status::Ok);
    EXPECT_EQ(bytes_of(r), content.substr(10, 100));
    EXPECT_EQ(r.count, 100u);
  }
  EXPECT_EQ(counts().store_errors, 3u);
  EXPECT_EQ(counts().forwarded, 3u);
  EXPECT_EQ(logged("block store error"), 1u);
  EXPECT_EQ(origin.calls(Proc::Read), 3u);
}

TEST_F(StoreErrorTest, AFailingStoreWriteStillAnswersFromTheFetchedBlock) {
  start();
  const std::string content = pattern(kBlock);
  const auto f = origin.add_file(content);
  store->fail_writes = true;
  auto r = read(f, 0, kBlock);
  EXPECT_EQ(bytes_of(r), content);
  EXPECT_EQ(origin.calls(Proc::Read), 1u);  // not fetched, then forwarded again
  EXPECT_EQ(counts().store_errors, 1u);
  EXPECT_EQ(cached_blocks(), 0u);
  EXPECT_EQ(logged("block store error"), 1u);
}

// A cache disk that is read-only (or full) for a while: said once while it fails,
// once when a block is stored again, and once more if it fails again.
TEST_F(StoreErrorTest, AStoreThatWorksAgainIsSaidOnceAndAFailureAfterThatIsLoggedAgain) {
  start();
  const auto f = origin.add_file(pattern(4 * kBlock));
  store->fail_writes = true;
  for (std::uint64_t b = 0; b < 2; ++b) ASSERT_EQ(read(f, b * kBlock, 10).status, Status::Ok);
  EXPECT_EQ(logged("block store error"), 1u);
  EXPECT_EQ(logged("block store works again"), 0u);
  store->fail_writes = false;
  ASSERT_EQ(read(f, 2 * kBlock, 10).status, Status::Ok);
  EXPECT_EQ(cached_blocks(), 1u);
  EXPECT_EQ(logged("block store works again"), 1u);
  ASSERT_EQ(read(f, 3 * kBlock, 10).status, Status::Ok);
  EXPECT_EQ(logged("block store works again"), 1u) << "said once, not per block";
  store->fail_writes = true;
  ASSERT_EQ(read(f, 0, 10).status, Status::Ok);
  EXPECT_EQ(logged("block store error"), 2u);
}

TEST_F(StoreErrorTest, AFailingPatchAcknowledgesTheWriteAndDropsTheFile) {
  start();
  const auto f = origin.add_file(pattern(kBlock));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  store->fail_writes = true;
  auto w = write(f, 0, "new");
  EXPECT_EQ(w.status, Status::Ok);
  EXPECT_EQ(counts().store_errors, 1u);
  EXPECT_EQ(cached_blocks(), 0u);
  store->fail_writes = false;
  EXPECT_EQ(bytes_of(read(f, 0, 3)), "new");
}

TEST_F(StoreErrorTest, FailingReadAheadIsHarmless) {
  settings.readahead_bytes = 4 * kBlock;
  start();
  const auto f = origin.add_file(pattern(8 * kBlock));
  store->fail_reads = true;
  ASSERT_EQ(read(f, 0, kBlock).status, Status::Ok);
  quiesce();
  EXPECT_EQ(layer->fetches_in_flight(), 0u);
  EXPECT_GE(counts().store_errors, 1u);
}

using DropTest = DataCacheTest;

TEST_F(DropTest, DropFileDropsOneFileAndDropAllTheExport) {
  start();
  const auto f = origin.add_file(pattern(kBlock, 1));
  const auto g = origin.add_file(pattern(kBlock, 2));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  ASSERT_EQ(read(g, 0, kBlock).count, kBlock);
  ASSERT_EQ(cached_blocks(), 2u);

  layer->drop_file(f);
  quiesce();
  EXPECT_EQ(cached_blocks(), 1u);
  EXPECT_EQ(counts().files_dropped, 1u);
  origin.reset_calls();
  EXPECT_EQ(read(g, 0, kBlock).count, kBlock);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);  // control: the other file stays
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), pattern(kBlock, 1));
  EXPECT_EQ(origin.calls(Proc::Read), 1u);

  layer->drop_all();
  quiesce();
  EXPECT_EQ(cached_blocks(), 0u);
}

}  // namespace
}  // namespace nfsgw::datacache::test
