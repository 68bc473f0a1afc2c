// FSINFO and PATHCONF are kept for fsinfo_ttl, FSSTAT for fsstat_ttl, decoded back
// exactly as the origin answered.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

using FsInfoTest = MetaCacheTest;

TEST_F(FsInfoTest, FsinfoAndPathconfForFsinfoTtlFsstatForFsstatTtl) {
  start();
  const auto root = origin.root();
  const auto info = fsinfo(root);
  const auto conf = pathconf(root);
  const auto stat = fsstat(root);
  ASSERT_EQ(info.status, Status::Ok);
  ASSERT_EQ(conf.status, Status::Ok);
  ASSERT_EQ(stat.status, Status::Ok);
  EXPECT_EQ(origin.total_calls(), 3u);

  origin.set_free_bytes(123);
  origin.set_name_max(100);
  clock.advance(4'999);
  auto info2 = fsinfo(root);
  EXPECT_EQ(info2.rtmax, info.rtmax);
  EXPECT_EQ(info2.maxfilesize, info.maxfilesize);
  EXPECT_EQ(info2.properties, info.properties);
  EXPECT_EQ(info2.time_delta, info.time_delta);
  EXPECT_EQ(info2.obj_attributes, info.obj_attributes);
  EXPECT_EQ(pathconf(root).name_max, 255u);
  EXPECT_EQ(fsstat(root).fbytes, stat.fbytes);
  EXPECT_EQ(origin.total_calls(), 3u);

  clock.advance(1);  // fsstat_ttl (5 s) over
  EXPECT_EQ(fsstat(root).fbytes, 123u);
  EXPECT_EQ(origin.calls(Proc::Fsstat), 2u);
  EXPECT_EQ(pathconf(root).name_max, 255u);
  fsinfo(root);
  EXPECT_EQ(origin.calls(Proc::Fsinfo), 1u);
  EXPECT_EQ(origin.calls(Proc::Pathconf), 1u);

  clock.advance(3'600'000 - 5'000 - 1);
  EXPECT_EQ(pathconf(root).name_max, 255u);
  EXPECT_EQ(origin.calls(Proc::Pathconf), 1u);
  clock.advance(1);  // fsinfo_ttl (1 h) over
  EXPECT_EQ(pathconf(root).name_max, 100u);
  fsinfo(root);
  EXPECT_EQ(origin.calls(Proc::Pathconf), 2u);
  EXPECT_EQ(origin.calls(Proc::Fsinfo), 2u);
  const auto c = layer->counters().get(Proc::Pathconf);
  EXPECT_EQ(c.hits, 3u);
  EXPECT_EQ(c.misses, 2u);
}

TEST_F(FsInfoTest, ImmutableKeepsThemForEver) {
  settings.consistency = cache::Consistency::Immutable;
  start();
  ASSERT_EQ(fsstat(origin.root()).status, Status::Ok);
  clock.advance(365LL * 24 * 3600 * 1000);
  ASSERT_EQ(fsstat(origin.root()).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Fsstat), 1u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
