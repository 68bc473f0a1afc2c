// READ through the cache: whole blocks fetched once, then served without the
// origin; answers exactly as the origin gives them (EOF, short final READs).
#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

using ReadTest = DataCacheTest;

TEST_F(ReadTest, AColdReadFetchesTheWholeBlockAndASecondReadIsAHit) {
  start();
  const std::string content = pattern(3 * kBlock);
  const auto f = origin.add_file(content);

  auto first = read(f, 100, 200);
  ASSERT_EQ(first.status, Status::Ok);
  EXPECT_EQ(bytes_of(first), content.substr(100, 200));
  EXPECT_EQ(first.count, 200u);
  EXPECT_FALSE(first.eof);
  EXPECT_EQ(origin.calls(Proc::Read), 1u);
  EXPECT_EQ(origin.bytes_read(), kBlock);  // the whole block, not the 200 bytes asked
  EXPECT_EQ(counts().read_misses, 1u);
  EXPECT_EQ(counts().blocks_fetched, 1u);
  EXPECT_EQ(counts().bytes_fetched, kBlock);

  origin.reset_calls();
  auto second = read(f, 1000, 3000);
  EXPECT_EQ(bytes_of(second), content.substr(1000, 3000));
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
  EXPECT_EQ(counts().read_hits, 1u);
  EXPECT_EQ(counts().bytes_from_cache, 3000u);
}

TEST_F(ReadTest, AReadAcrossBlocksIsServedFromEach) {
  start();
  const std::string content = pattern(3 * kBlock);
  const auto f = origin.add_file(content);
  auto r = read(f, kBlock - 10, kBlock + 20);  // the end of block 0, all of 1, the start of 2
  EXPECT_EQ(bytes_of(r), content.substr(kBlock - 10, kBlock + 20));
  EXPECT_EQ(origin.calls(Proc::Read), 3u);
  EXPECT_EQ(cached_blocks(), 3u);

  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, 3 * kBlock)), content);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
}

TEST_F(ReadTest, EndOfFileIsAnsweredAsTheOriginWould) {
  start();
  const std::uint64_t size = 2 * kBlock + 123;  // not a multiple of the block
  const std::string content = pattern(size);
  const auto f = origin.add_file(content);

  auto exact = read(f, size - 123, 123);  // ends at the end
  EXPECT_EQ(bytes_of(exact), content.substr(size - 123));
  EXPECT_TRUE(exact.eof);

  auto past = read(f, size - 23, 4096);  // asks beyond the end: short
  EXPECT_EQ(past.count, 23u);
  EXPECT_EQ(bytes_of(past), content.substr(size - 23));
  EXPECT_TRUE(past.eof);

  auto before_end = read(f, size - 124, 100);
  EXPECT_FALSE(before_end.eof);

  auto beyond = read(f, size + 5000, 100);  // starts past the end
  EXPECT_EQ(beyond.status, Status::Ok);
  EXPECT_EQ(beyond.count, 0u);
  EXPECT_TRUE(beyond.data.empty());
  EXPECT_TRUE(beyond.eof);

  auto none = read(f, 10, 0);  // count 0
  EXPECT_EQ(none.count, 0u);
  EXPECT_FALSE(none.eof);

  // A READ of nothing touches no block: nothing is fetched for it.
  const auto cold = origin.add_file(pattern(kBlock + 10));
  read(cold, 0, 1);  // learns the attributes and the permission (one block fetched)
  origin.reset_calls();
  for (auto [off, cnt] : {std::pair<std::uint64_t, std::uint32_t>{kBlock + 5, 0}, {kBlock + 10, 100}, {5 * kBlock, 7}}) {
    auto r = read(cold, off, cnt);
    EXPECT_EQ(r.count, 0u) << off;
    EXPECT_TRUE(r.data.empty()) << off;
  }
  EXPECT_EQ(origin.calls(Proc::Read), 0u);

  // The same answers straight from the origin.
  for (auto [off, cnt] : {std::pair<std::uint64_t, std::uint32_t>{size - 23, 4096}, {size + 5000, 100}, {10, 0}}) {
    nfs3::ReadRes direct = run(invoke(origin, &Nfs3Program::read, as(0), nfs3::ReadArgs{f, off, cnt}));
    nfs3::ReadRes cached = read(f, off, cnt);
    EXPECT_EQ(cached.count, direct.count) << off;
    EXPECT_EQ(cached.eof, direct.eof) << off;
    EXPECT_EQ(cached.data, direct.data) << off;
    EXPECT_EQ(cached.file_attributes, direct.file_attributes) << off;
  }
}

TEST_F(ReadTest, AnEmptyFileIsAnsweredWithoutAnOriginRead) {
  start();
  const auto f = origin.add_file("");
  auto r = read(f, 0, 4096);
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_EQ(r.count, 0u);
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
}

TEST_F(ReadTest, ABlockLargerThanRtmaxTakesSeveralReads) {
  origin.set_rtmax(1000);
  start();
  const std::string content = pattern(kBlock);
  const auto f = origin.add_file(content);
  EXPECT_EQ(bytes_of(read(f, 0, 10)), content.substr(0, 10));
  EXPECT_EQ(origin.calls(Proc::Read), 5u);  // 4096 in 1000-byte READs
  EXPECT_EQ(origin.calls(Proc::Fsinfo), 1u);

  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 3000, 1000)), content.substr(3000, 1000));
  EXPECT_EQ(origin.calls(Proc::Read), 0u);

  // rtmax is learnt once per export.
  const auto g = origin.add_file(pattern(kBlock, 2));
  EXPECT_EQ(bytes_of(read(g, 0, 1000)), pattern(kBlock, 2).substr(0, 1000));
  EXPECT_EQ(origin.calls(Proc::Fsinfo), 0u);
}

TEST_F(ReadTest, ACountAboveRtmaxIsAnsweredShortAsTheOriginWould) {
  origin.set_rtmax(1000);
  start();
  const std::string content = pattern(3 * kBlock);
  const auto f = origin.add_file(content);
  auto r = read(f, 100, 3000);
  EXPECT_EQ(r.count, 1000u);
  EXPECT_EQ(bytes_of(r), content.substr(100, 1000));
  EXPECT_FALSE(r.eof);
  nfs3::ReadRes direct = run(invoke(origin, &Nfs3Program::read, as(0), nfs3::ReadArgs{f, 100, 3000}));
  EXPECT_EQ(direct.count, r.count);
}

TEST_F(ReadTest, AShortReplyBeforeTheEndIsFollowedByAnotherRead) {
  origin.set_short_reads(true);
  start();
  const std::string content = pattern(kBlock);
  const auto f = origin.add_file(content);
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), content);
  EXPECT_GT(origin.calls(Proc::Read), 1u);
  EXPECT_EQ(cached_blocks(), 1u);
}

TEST_F(ReadTest, OtherProceduresPassStraightThrough) {
  start();
  const auto f = origin.add_file(pattern(10));
  auto g = run(invoke(*layer, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f}));
  EXPECT_EQ(g.attributes, origin.attributes(f));
  auto c = run(invoke(*layer, &Nfs3Program::commit, as(0), nfs3::CommitArgs{f, 0, 0}));
  EXPECT_EQ(c.verf, FakeFiles::kVerf);
  auto l = run(invoke(*layer, &Nfs3Program::lookup, as(0), nfs3::LookupArgs{{f, "x"}}));
  EXPECT_EQ(l.status, Status::NotSupp);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  EXPECT_EQ(origin.calls(Proc::Commit), 1u);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
}

}  // namespace
}  // namespace nfsgw::datacache::test
