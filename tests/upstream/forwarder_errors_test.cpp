// Error statuses come back from the origin unchanged (with their wcc/post-op data),
// and names libnfs cannot carry are refused before they leave the gateway. Only the
// statuses nfsgw makes up carry gateway_status (protocol/nfs3_types.h).
#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include "tests/upstream/origin_fixture.h"
#include "tests/upstream/test_util.h"

namespace nfsgw::upstream::test {
namespace {

class ErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_path_ = fresh_dir("errors");
    std::ofstream(dir_path_ + "/file") << "data";
    ::mkdir((dir_path_ + "/full").c_str(), 0755);
    std::ofstream(dir_path_ + "/full/inside") << "x";
    dir_ = h_.lookup_path("errors");
  }
  ForwarderHarness h_;
  std::string dir_path_;
  nfs3::FileHandle dir_;
};

TEST_F(ErrorsTest, NoEnt) {
  auto res = h_.call(&Forwarder::lookup, as_root(), nfs3::LookupArgs{{dir_, "missing"}});
  EXPECT_EQ(res.status, nfs3::Status::NoEnt);
  EXPECT_FALSE(res.gateway_status);  // the origin's own answer: a cache may keep it
  ASSERT_TRUE(res.dir_attributes.has_value());
  expect_matches_stat(*res.dir_attributes, dir_path_);
  auto rm = h_.call(&Forwarder::remove, as_root(), nfs3::RemoveArgs{{dir_, "missing"}});
  EXPECT_EQ(rm.status, nfs3::Status::NoEnt);
  EXPECT_FALSE(rm.gateway_status);
}

TEST_F(ErrorsTest, Exist) {
  nfs3::MkdirArgs md;
  md.where = {dir_, "file"};
  auto res = h_.call(&Forwarder::mkdir, as_root(), md);
  EXPECT_EQ(res.status, nfs3::Status::Exist);
  EXPECT_FALSE(res.gateway_status);
  EXPECT_FALSE(res.obj.has_value());
  EXPECT_TRUE(res.dir_wcc.after.has_value());
}

TEST_F(ErrorsTest, NotEmpty) {
  auto res = h_.call(&Forwarder::rmdir, as_root(), nfs3::RmdirArgs{{dir_, "full"}});
  EXPECT_EQ(res.status, nfs3::Status::NotEmpty);
  EXPECT_EQ(::access((dir_path_ + "/full/inside").c_str(), F_OK), 0);
}

TEST_F(ErrorsTest, IsDir) {
  auto res = h_.call(&Forwarder::read, as_root(), nfs3::ReadArgs{dir_, 0, 10});
  EXPECT_EQ(res.status, nfs3::Status::IsDir);
}

TEST_F(ErrorsTest, NotDir) {
  const auto file = h_.lookup_path("errors/file");
  auto res = h_.call(&Forwarder::lookup, as_root(), nfs3::LookupArgs{{file, "x"}});
  EXPECT_EQ(res.status, nfs3::Status::NotDir);
  nfs3::ReaddirArgs a;
  a.dir = file;
  a.count = 4096;
  auto rd = h_.call(&Forwarder::readdir, as_root(), a);
  EXPECT_EQ(rd.status, nfs3::Status::NotDir);
}

TEST_F(ErrorsTest, NameTooLong) {
  nfs3::CreateArgs args;
  args.where = {dir_, std::string(300, 'n')};
  auto res = h_.call(&Forwarder::create, as_root(), args);
  EXPECT_EQ(res.status, nfs3::Status::NameTooLong);
  EXPECT_FALSE(res.gateway_status);
  auto lk = h_.call(&Forwarder::lookup, as_root(), nfs3::LookupArgs{{dir_, std::string(300, 'n')}});
  EXPECT_EQ(lk.status, nfs3::Status::NameTooLong);
}

TEST_F(ErrorsTest, EmbeddedNulIsRefusedNotTruncated) {
  nfs3::CreateArgs args;
  args.where = {dir_, std::string("file\0evil", 9)};
  auto res = h_.call(&Forwarder::create, as_root(), args);
  EXPECT_EQ(res.status, nfs3::Status::Inval);
  EXPECT_TRUE(res.gateway_status);  // made up by nfsgw: the origin never saw the name
  auto rm = h_.call(&Forwarder::remove, as_root(), nfs3::RemoveArgs{{dir_, std::string("file\0x", 6)}});
  EXPECT_EQ(rm.status, nfs3::Status::Inval);
  EXPECT_TRUE(rm.gateway_status);
  EXPECT_EQ(::access((dir_path_ + "/file").c_str(), F_OK), 0);  // "file" was not removed
}

TEST_F(ErrorsTest, EveryNulRefusalIsMarkedAsNfsgws) {
  const std::string nul("a\0b", 3);
  const auto file = h_.lookup_path("errors/file");
  auto lk = h_.call(&Forwarder::lookup, as_root(), nfs3::LookupArgs{{dir_, nul}});
  EXPECT_EQ(lk.status, nfs3::Status::Inval);
  EXPECT_TRUE(lk.gateway_status);
  nfs3::MkdirArgs md;
  md.where = {dir_, nul};
  auto mk = h_.call(&Forwarder::mkdir, as_root(), md);
  EXPECT_EQ(mk.status, nfs3::Status::Inval);
  EXPECT_TRUE(mk.gateway_status);
  nfs3::SymlinkArgs sl;
  sl.where = {dir_, "link"};
  sl.symlink_data = nul;  // the target, too, travels as a C string
  auto sy = h_.call(&Forwarder::symlink, as_root(), sl);
  EXPECT_EQ(sy.status, nfs3::Status::Inval);
  EXPECT_TRUE(sy.gateway_status);
  nfs3::MknodArgs mn;
  mn.where = {dir_, nul};
  mn.type = nfs3::FileType::Fifo;
  auto nd = h_.call(&Forwarder::mknod, as_root(), mn);
  EXPECT_EQ(nd.status, nfs3::Status::Inval);
  EXPECT_TRUE(nd.gateway_status);
  auto rd = h_.call(&Forwarder::rmdir, as_root(), nfs3::RmdirArgs{{dir_, nul}});
  EXPECT_EQ(rd.status, nfs3::Status::Inval);
  EXPECT_TRUE(rd.gateway_status);
  auto rn = h_.call(&Forwarder::rename, as_root(), nfs3::RenameArgs{{dir_, "file"}, {dir_, nul}});
  EXPECT_EQ(rn.status, nfs3::Status::Inval);
  EXPECT_TRUE(rn.gateway_status);
  auto ln = h_.call(&Forwarder::link, as_root(), nfs3::LinkArgs{file, {dir_, nul}});
  EXPECT_EQ(ln.status, nfs3::Status::Inval);
  EXPECT_TRUE(ln.gateway_status);
  EXPECT_EQ(::access((dir_path_ + "/link").c_str(), F_OK), -1);
  EXPECT_EQ(::access((dir_path_ + "/file").c_str(), F_OK), 0);
}

TEST_F(ErrorsTest, GarbageHandleIsAnNfsErrorNotACrash) {
  nfs3::FileHandle junk;
  junk.assign(std::vector<std::uint8_t>(64, 0xAB));
  auto res = h_.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{junk});
  EXPECT_NE(res.status, nfs3::Status::Ok);
  nfs3::FileHandle empty;
  auto res2 = h_.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{empty});
  EXPECT_NE(res2.status, nfs3::Status::Ok);
  // The connection survives it.
  auto ok = h_.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{dir_});
  EXPECT_EQ(ok.status, nfs3::Status::Ok);
  EXPECT_FALSE(ok.gateway_status);
}

}  // namespace
}  // namespace nfsgw::upstream::test
