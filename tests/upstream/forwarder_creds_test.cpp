// The caller's AUTH_SYS identity reaches the origin: permission checks apply to
// the user, and files they create are theirs.
#include <unistd.h>

#include <fstream>

#include "tests/upstream/origin_fixture.h"
#include "tests/upstream/test_util.h"

namespace nfsgw::upstream::test {
namespace {

class CredsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fresh_dir("creds");
    private_path_ = fresh_dir("creds/private", 0700);  // root-owned
    std::ofstream(private_path_ + "/secret") << "s";
    shared_path_ = fresh_dir("creds/shared", 0777);
    // Group 4242 may enter; uid 1000 is neither the owner nor in group 1000's place.
    group_path_ = fresh_dir("creds/group", 0750);
    std::ofstream(group_path_ + "/secret") << "g";
    EXPECT_EQ(::chown(group_path_.c_str(), 0, 4242), 0);
    // Only now let the origin see them: it caches attributes.
    private_ = h_.lookup_path("creds/private");
    shared_ = h_.lookup_path("creds/shared");
    group_ = h_.lookup_path("creds/group");
  }
  ForwarderHarness h_;
  std::string private_path_, shared_path_, group_path_;
  nfs3::FileHandle private_, shared_, group_;
};

TEST_F(CredsTest, UserIsDeniedWhereRootIsAllowed) {
  auto as_1000 = h_.call(&Forwarder::lookup, as_user(1000, 1000), nfs3::LookupArgs{{private_, "secret"}});
  EXPECT_EQ(as_1000.status, nfs3::Status::Acces);
  EXPECT_FALSE(as_1000.gateway_status);  // the origin's permission check, not nfsgw's
  auto as_0 = h_.call(&Forwarder::lookup, as_root(), nfs3::LookupArgs{{private_, "secret"}});
  EXPECT_EQ(as_0.status, nfs3::Status::Ok);
  // And again as the user on the same connections: the identity follows each call.
  nfs3::ReaddirArgs a;
  a.dir = private_;
  a.count = 4096;
  auto again = h_.call(&Forwarder::readdir, as_user(1000, 1000), a);
  EXPECT_EQ(again.status, nfs3::Status::Acces);
}

TEST_F(CredsTest, SupplementaryGroupsAreSent) {
  auto without = h_.call(&Forwarder::lookup, as_user(1000, 1000), nfs3::LookupArgs{{group_, "secret"}});
  EXPECT_EQ(without.status, nfs3::Status::Acces);
  auto with = h_.call(&Forwarder::lookup, as_user(1000, 1000, {4242}), nfs3::LookupArgs{{group_, "secret"}});
  EXPECT_EQ(with.status, nfs3::Status::Ok);
}

TEST_F(CredsTest, FilesCreatedByAUserAreOwnedByThem) {
  nfs3::CreateArgs c;
  c.where = {shared_, "mine"};
  c.mode = nfs3::CreateMode::Unchecked;
  c.obj_attributes.mode = 0644;
  auto res = h_.call(&Forwarder::create, as_user(1000, 1000), c);
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  const struct stat st = lstat_or_fail(shared_path_ + "/mine");
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_gid, 1000u);

  nfs3::MkdirArgs m;
  m.where = {shared_, "theirs"};
  auto md = h_.call(&Forwarder::mkdir, as_user(1001, 1002), m);
  ASSERT_EQ(md.status, nfs3::Status::Ok);
  const struct stat dst = lstat_or_fail(shared_path_ + "/theirs");
  EXPECT_EQ(dst.st_uid, 1001u);
  EXPECT_EQ(dst.st_gid, 1002u);

  // A user may not chown to someone else; root may.
  nfs3::SetattrArgs s;
  s.object = *res.obj;
  s.new_attributes.uid = 0;
  auto denied = h_.call(&Forwarder::setattr, as_user(1000, 1000), s);
  EXPECT_EQ(denied.status, nfs3::Status::Perm);
  EXPECT_EQ(lstat_or_fail(shared_path_ + "/mine").st_uid, 1000u);
}

}  // namespace
}  // namespace nfsgw::upstream::test
