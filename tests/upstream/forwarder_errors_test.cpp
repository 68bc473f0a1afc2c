// Error statuses come back from the origin unchanged (with their wcc/post-op data),
// and names libnfs cannot carry are refused before they leave the gateway.
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
  ASSERT_TRUE(res.dir_attributes.has_value());
  expect_matches_stat(*res.dir_attributes, dir_path_);
  auto rm = h_.call(&Forwarder::remove, as_root(), nfs3::RemoveArgs{{dir_, "missing"}});
  EXPECT_EQ(rm.status, nfs3::Status::NoEnt);
}

TEST_F(ErrorsTest, Exist) {
  nfs3::MkdirArgs md;
  md.where = {dir_, "file"};
  auto res = h_.call(&Forwarder::mkdir, as_root(), md);
  EXPECT_EQ(res.status, nfs3::Status::Exist);
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
  auto lk = h_.call(&Forwarder::lookup, as_root(), nfs3::LookupArgs{{dir_, std::string(300, 'n')}});
  EXPECT_EQ(lk.status, nfs3::Status::NameTooLong);
}

TEST_F(ErrorsTest, EmbeddedNulIsRefusedNotTruncated) {
  nfs3::CreateArgs args;
  args.where = {dir_, std::string("file\0evil", 9)};
  auto res = h_.call(&Forwarder::create, as_root(), args);
  EXPECT_EQ(res.status, nfs3::Status::Inval);
  auto rm = h_.call(&Forwarder::remove, as_root(), nfs3::RemoveArgs{{dir_, std::string("file\0x", 6)}});
  EXPECT_EQ(rm.status, nfs3::Status::Inval);
  EXPECT_EQ(::access((dir_path_ + "/file").c_str(), F_OK), 0);  // "file" was not removed
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
}

}  // namespace
}  // namespace nfsgw::upstream::test
