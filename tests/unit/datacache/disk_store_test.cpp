// The layer over the block store on disk: page-cache hits are read straight into
// the reply and checked there; a block corrupted on disk is never served, on that
// path or on the pool's.
#include <filesystem>
#include <vector>

#include "tests/unit/cache/block_store_helpers.h"
#include "tests/unit/cache/temp_dir.h"
#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

namespace fs = std::filesystem;

class DiskStoreTest : public DataCacheTest {
 protected:
  void SetUp() override {
    // No hot tier: its copies in memory, checked when kept, would (rightly) keep
    // answering after the disk's bytes went bad; the checks on disk are tested here.
    cache::BlockStoreOptions o = store_options();
    o.memory_bytes = 0;
    start(cache::open_file_block_store(dir / "data", o));
  }

  /// The one block file of the store.
  fs::path data_file() const {
    std::vector<fs::path> found;
    for (const auto& e : fs::recursive_directory_iterator(dir / "data/blocks"))
      if (e.is_regular_file()) found.push_back(e.path());
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? fs::path(dir / "none") : found[0];
  }
  void flip_byte(std::uint64_t at) { cache::testing::flip_byte(data_file(), at); }

  cache::testing::TempDir dir;
};

TEST_F(DiskStoreTest, HitsAreServedIntactAndACorruptBlockIsFetchedAgain) {
  const std::string content = pattern(2 * kBlock + 100);
  const auto f = origin.add_file(content);
  ASSERT_EQ(bytes_of(read(f, 0, 3 * kBlock)), content);  // fetched and stored
  ASSERT_EQ(cached_blocks(), 3u);
  origin.reset_calls();
  // The first hit opens the block file on the pool; the next are read on this
  // thread (the descriptor is kept), whole blocks straight into the reply.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(bytes_of(read(f, 0, 3 * kBlock)), content) << i;
  EXPECT_EQ(bytes_of(read(f, kBlock - 7, 20)), content.substr(kBlock - 7, 20)) << "parts of two blocks";
  EXPECT_EQ(origin.calls(Proc::Read), 0u);

  flip_byte(kBlock + 5);  // in block 1, which a whole-file READ reads in place
  EXPECT_EQ(bytes_of(read(f, 0, 3 * kBlock)), content);
  EXPECT_EQ(origin.calls(Proc::Read), 1u) << "the corrupt block, fetched again";
  EXPECT_EQ(store->usage().corrupt_dropped, 1u);

  flip_byte(2 * kBlock + 50);  // in the short last block, read in part
  EXPECT_EQ(bytes_of(read(f, 2 * kBlock + 40, 20)), content.substr(2 * kBlock + 40, 20));
  EXPECT_EQ(origin.calls(Proc::Read), 2u);
  EXPECT_EQ(store->usage().corrupt_dropped, 2u);

  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, 3 * kBlock)), content);
  EXPECT_EQ(origin.calls(Proc::Read), 0u) << "stored again, served again";
}

// With the hot tier, a block read once is answered from memory: the disk's copy
// going bad afterwards changes nothing until the copy is forgotten.
TEST_F(DiskStoreTest, AHotCopyIsCheckedOnceWhenKept) {
  layer.reset();
  store.reset();
  start(cache::open_file_block_store(dir / "hot", store_options()));
  const std::string content = pattern(kBlock);
  const auto f = origin.add_file(content);
  ASSERT_EQ(bytes_of(read(f, 0, kBlock)), content);  // fetched and stored
  ASSERT_EQ(bytes_of(read(f, 0, kBlock)), content);  // read from disk, checked, kept
  const auto hot_hits = store->usage().memory_hits;
  std::vector<fs::path> found;
  for (const auto& e : fs::recursive_directory_iterator(dir / "hot/blocks"))
    if (e.is_regular_file()) found.push_back(e.path());
  ASSERT_EQ(found.size(), 1u);
  cache::testing::flip_byte(found[0], 5);
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), content);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
  EXPECT_EQ(store->usage().memory_hits, hot_hits + 1);
  EXPECT_EQ(store->usage().corrupt_dropped, 0u);
}

}  // namespace
}  // namespace nfsgw::datacache::test
