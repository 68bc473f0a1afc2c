// Statuses the gateway made up (gateway_status: JUKEBOX for a lost call, ...) say
// nothing about the file system: they are passed on, marked, and never cached nor
// acted upon.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class GatewayStatusTest : public MetaCacheTest {
 protected:
  void SetUp() override {
    start();
    dir = origin.add_dir(origin.root(), "d");
    file = origin.add_file(dir, "f");
    link = origin.add_symlink(dir, "l", "f");
  }
  nfs3::FileHandle dir, file, link;
};

TEST_F(GatewayStatusTest, Getattr) {
  origin.fail(Proc::Getattr, 1);
  auto r = getattr(file);
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(getattr(file).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
  EXPECT_EQ(getattr(file).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
}

TEST_F(GatewayStatusTest, Lookup) {
  origin.fail(Proc::Lookup, 1);
  auto r = lookup(dir, "f");
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(lookup(dir, "f").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);
}

TEST_F(GatewayStatusTest, AMadeUpNoentIsNotANegativeEntry) {
  ASSERT_EQ(access(dir, nfs3::access::Lookup).status, Status::Ok);
  origin.fail(Proc::Lookup, 1, Status::NoEnt);
  auto r = lookup(dir, "f");
  EXPECT_EQ(r.status, Status::NoEnt);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(lookup(dir, "f").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);
}

TEST_F(GatewayStatusTest, AMadeUpStaleDropsNothing) {
  ASSERT_EQ(list(dir), (std::vector<std::string>{"f", "l"}));
  clock.advance(20'000);
  origin.fail(Proc::Getattr, 1, Status::Stale);
  auto r = getattr(dir);
  EXPECT_EQ(r.status, Status::Stale);
  EXPECT_TRUE(r.gateway_status);
  origin.reset_calls();
  EXPECT_EQ(lookup(dir, "f").status, Status::Ok);  // revalidated: the entries are still there
  EXPECT_EQ(list(dir), (std::vector<std::string>{"f", "l"}));
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
}

TEST_F(GatewayStatusTest, Readdirplus) {
  origin.fail(Proc::Readdirplus, 1);
  auto r = readdirplus(dir);
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(list(dir), (std::vector<std::string>{"f", "l"}));
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 2u);
}

TEST_F(GatewayStatusTest, Readdir) {
  origin.fail(Proc::Readdirplus, 1);
  auto r = readdir(dir);
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(readdir(dir).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 2u);
}

TEST_F(GatewayStatusTest, Access) {
  origin.fail(Proc::Access, 1);
  auto r = access(dir, nfs3::access::Lookup);
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(access(dir, nfs3::access::Lookup).access, nfs3::access::Lookup);
  EXPECT_EQ(origin.calls(Proc::Access), 2u);
  EXPECT_EQ(access(dir, nfs3::access::Lookup).access, nfs3::access::Lookup);
  EXPECT_EQ(origin.calls(Proc::Access), 2u);
}

TEST_F(GatewayStatusTest, Readlink) {
  access(link, nfs3::access::Read);
  origin.fail(Proc::Readlink, 1);
  auto r = readlink(link);
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(readlink(link).data, "f");
  EXPECT_EQ(origin.calls(Proc::Readlink), 2u);
  EXPECT_EQ(readlink(link).data, "f");
  EXPECT_EQ(origin.calls(Proc::Readlink), 2u);
}

TEST_F(GatewayStatusTest, FsinfoPathconfFsstat) {
  origin.fail(Proc::Fsinfo, 1);
  origin.fail(Proc::Pathconf, 1);
  origin.fail(Proc::Fsstat, 1);
  auto i = fsinfo(origin.root());
  auto p = pathconf(origin.root());
  auto s = fsstat(origin.root());
  EXPECT_TRUE(i.gateway_status && p.gateway_status && s.gateway_status);
  EXPECT_EQ(i.status, Status::Jukebox);
  EXPECT_EQ(fsinfo(origin.root()).status, Status::Ok);
  EXPECT_EQ(pathconf(origin.root()).status, Status::Ok);
  EXPECT_EQ(fsstat(origin.root()).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Fsinfo), 2u);
  EXPECT_EQ(origin.calls(Proc::Pathconf), 2u);
  EXPECT_EQ(origin.calls(Proc::Fsstat), 2u);
}

TEST_F(GatewayStatusTest, AFailedChangeTeachesNothing) {
  settings.access_check = cache::AccessCheck::Local;
  close_layer();
  start();
  const auto mine = origin.add_dir(origin.root(), "mine", 0755, kUser, kUser);
  ASSERT_EQ(list(mine, as(kUser)), std::vector<std::string>{});
  // A STALE from the origin would drop the directory; a made-up one must not.
  origin.fail(Proc::Create, 1, Status::Stale);
  auto r = create(mine, "x", as(kUser));
  EXPECT_EQ(r.status, Status::Stale);
  EXPECT_TRUE(r.gateway_status);
  origin.fail(Proc::Remove, 1, Status::Stale);
  EXPECT_TRUE(remove(mine, "x", as(kUser)).gateway_status);
  origin.reset_calls();
  EXPECT_EQ(list(mine, as(kUser)), std::vector<std::string>{});
  EXPECT_EQ(origin.total_calls(), 0u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
