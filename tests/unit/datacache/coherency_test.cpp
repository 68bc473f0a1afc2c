// Blocks are valid for the version of the file they were fetched under, and only
// the origin's own, consistent bytes are kept.
#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

using CoherencyTest = DataCacheTest;

TEST_F(CoherencyTest, AFileChangedOnTheOriginIsReadFreshNotFromStaleBlocks) {
  start();
  const auto f = origin.add_file(pattern(kBlock, 1));
  ASSERT_EQ(bytes_of(read(f, 0, kBlock)), pattern(kBlock, 1));
  origin.reset_calls();
  ASSERT_EQ(bytes_of(read(f, 0, kBlock)), pattern(kBlock, 1));
  ASSERT_EQ(origin.calls(Proc::Read), 0u);  // control: cached

  origin.set_data(f, pattern(kBlock + 7, 2));  // behind the cache's back: new size, mtime, ctime
  auto r = read(f, 0, kBlock + 7);
  EXPECT_EQ(bytes_of(r), pattern(kBlock + 7, 2));
  EXPECT_EQ(*r.file_attributes, origin.attributes(f));
  EXPECT_EQ(origin.calls(Proc::Read), 2u);

  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, kBlock + 7)), pattern(kBlock + 7, 2));
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
}

TEST_F(CoherencyTest, ASameSizeChangeIsSeenThroughTheTimes) {
  start();
  const auto f = origin.add_file(pattern(100, 1));
  ASSERT_EQ(bytes_of(read(f, 0, 100)), pattern(100, 1));
  origin.set_data(f, pattern(100, 2));
  EXPECT_EQ(bytes_of(read(f, 0, 100)), pattern(100, 2));
}

TEST_F(CoherencyTest, ABlockWhoseReplyShowsANewerVersionIsAnsweredButNotStored) {
  origin.set_rtmax(1024);  // four READs for the block
  start();
  const std::string content = pattern(kBlock);
  const auto f = origin.add_file(content);
  origin.newer_read_attrs(1);  // the first READ's reply shows a change GETATTR does not
  auto r = read(f, 0, 1024);
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(bytes_of(r), content.substr(0, 1024));
  EXPECT_EQ(counts().blocks_fetched, 1u);
  EXPECT_EQ(cached_blocks(), 0u);

  // Same attributes from GETATTR: still a miss, fetched again, and stored this time.
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 1024, 1024)), content.substr(1024, 1024));
  EXPECT_EQ(origin.calls(Proc::Read), 4u);
  EXPECT_EQ(cached_blocks(), 1u);
}

TEST_F(CoherencyTest, AnOriginErrorIsPassedAsIsAndNothingStored) {
  start();
  const auto f = origin.add_file(pattern(kBlock));
  origin.fail(Proc::Read, 1, Status::Io, false);
  auto r = read(f, 0, 10);
  EXPECT_EQ(r.status, Status::Io);
  EXPECT_FALSE(r.gateway_status);
  EXPECT_EQ(cached_blocks(), 0u);
  EXPECT_EQ(counts().forwarded, 1u);
  EXPECT_EQ(counts().blocks_fetched, 0u);
}

TEST_F(CoherencyTest, AGatewayStatusIsPassedAsIsAndNothingStored) {
  start();
  const auto f = origin.add_file(pattern(kBlock));
  origin.fail(Proc::Read, 1, Status::Jukebox, true);
  auto r = read(f, 0, 10);
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(cached_blocks(), 0u);

  EXPECT_EQ(bytes_of(read(f, 0, 10)), pattern(kBlock).substr(0, 10));  // the next try fetches
  EXPECT_EQ(cached_blocks(), 1u);
}

TEST_F(CoherencyTest, WithoutAttributesOrForADirectoryTheReadIsForwarded) {
  start();
  const auto d = origin.add_dir();
  auto r = read(d, 0, 10);
  EXPECT_EQ(r.status, Status::IsDir);
  EXPECT_EQ(counts().forwarded, 1u);

  const auto f = origin.add_file(pattern(100));
  origin.fail(Proc::Getattr, 1, Status::Jukebox, true);
  auto g = read(f, 0, 10);
  EXPECT_EQ(g.status, Status::Ok);  // forwarded: the origin answered the READ itself
  EXPECT_EQ(bytes_of(g), pattern(100).substr(0, 10));
  EXPECT_EQ(counts().forwarded, 2u);
  EXPECT_EQ(cached_blocks(), 0u);
}

}  // namespace
}  // namespace nfsgw::datacache::test
