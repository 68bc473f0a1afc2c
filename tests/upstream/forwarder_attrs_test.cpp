// Attribute procedures forwarded to a real origin, checked against stat():
// NULL, GETATTR, SETATTR, LOOKUP, ACCESS, FSSTAT, FSINFO, PATHCONF.
#include <sys/statvfs.h>
#include <unistd.h>

#include <fstream>

#include "tests/upstream/origin_fixture.h"
#include "tests/upstream/test_util.h"

namespace nfsgw::upstream::test {
namespace {

class AttrsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("attrs");
    std::ofstream(dir_ + "/file") << std::string(12345, 'x');
    ::chmod((dir_ + "/file").c_str(), 0640);
    ASSERT_EQ(::symlink("file", (dir_ + "/link").c_str()), 0);
    fs_.mkdir_sub = ::mkdir((dir_ + "/sub").c_str(), 0711);
  }
  nfs3::GetattrRes getattr(const nfs3::FileHandle& fh) {
    return h_.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{fh});
  }
  ForwarderHarness h_;
  std::string dir_;
  struct {
    int mkdir_sub = -1;
  } fs_;
};

TEST_F(AttrsTest, NullAnswers) {
  h_.call(&Forwarder::null, as_root());
  EXPECT_EQ(h_.fwd().connections_up(), 4u);
}

TEST_F(AttrsTest, GetattrMatchesStatForEveryType) {
  ASSERT_EQ(fs_.mkdir_sub, 0);
  // The export root changes under ganesha's feet as every test adds its own
  // directory, so only its identity is compared.
  auto root = getattr(h_.root());
  ASSERT_EQ(root.status, nfs3::Status::Ok);
  const struct stat rst = lstat_or_fail(Origin::get().export_dir());
  EXPECT_EQ(root.attributes.type, nfs3::FileType::Dir);
  EXPECT_EQ(root.attributes.fileid, rst.st_ino);
  EXPECT_EQ(root.attributes.mode, rst.st_mode & 07777);
  EXPECT_EQ(root.attributes.uid, rst.st_uid);
  for (const char* name : {"attrs", "attrs/file", "attrs/link", "attrs/sub"}) {
    auto res = getattr(h_.lookup_path(name));
    ASSERT_EQ(res.status, nfs3::Status::Ok) << name;
    expect_matches_stat(res.attributes, Origin::get().path(name));
  }
}

TEST_F(AttrsTest, LookupReturnsHandleAndBothAttributes) {
  const auto dir = h_.lookup_path("attrs");
  auto res = h_.call(&Forwarder::lookup, as_root(), nfs3::LookupArgs{{dir, "file"}});
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  EXPECT_FALSE(res.object.empty());
  ASSERT_TRUE(res.obj_attributes.has_value());
  ASSERT_TRUE(res.dir_attributes.has_value());
  expect_matches_stat(*res.obj_attributes, dir_ + "/file");
  expect_matches_stat(*res.dir_attributes, dir_);
  // The handle it returns is a working one.
  auto again = getattr(res.object);
  ASSERT_EQ(again.status, nfs3::Status::Ok);
  EXPECT_EQ(again.attributes.fileid, res.obj_attributes->fileid);
}

TEST_F(AttrsTest, AccessReportsWhatTheOriginAllows) {
  const auto file = h_.lookup_path("attrs/file");
  const std::uint32_t asked = nfs3::access::Read | nfs3::access::Modify | nfs3::access::Execute;
  auto res = h_.call(&Forwarder::access, as_root(), nfs3::AccessArgs{file, asked});
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  EXPECT_EQ(res.access & nfs3::access::Read, nfs3::access::Read);
  EXPECT_EQ(res.access & nfs3::access::Modify, nfs3::access::Modify);
  // 0640: nobody may execute, not even root.
  EXPECT_EQ(res.access & nfs3::access::Execute, 0u);
  ASSERT_TRUE(res.obj_attributes.has_value());
  expect_matches_stat(*res.obj_attributes, dir_ + "/file");
}

TEST_F(AttrsTest, SetattrChangesModeSizeAndTimesOnDisk) {
  const auto file = h_.lookup_path("attrs/file");
  nfs3::SetattrArgs args;
  args.object = file;
  args.new_attributes.mode = 0604;
  args.new_attributes.size = 100;
  args.new_attributes.mtime = {nfs3::TimeHow::ClientTime, {1'000'000'000, 5}};
  auto res = h_.call(&Forwarder::setattr, as_root(), args);
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  const struct stat st = lstat_or_fail(dir_ + "/file");
  EXPECT_EQ(st.st_mode & 07777, 0604u);
  EXPECT_EQ(st.st_size, 100);
  EXPECT_EQ(st.st_mtim.tv_sec, 1'000'000'000);
  ASSERT_TRUE(res.obj_wcc.before.has_value());
  EXPECT_EQ(res.obj_wcc.before->size, 12345u);
  ASSERT_TRUE(res.obj_wcc.after.has_value());
  expect_matches_stat(*res.obj_wcc.after, dir_ + "/file");
}

TEST_F(AttrsTest, GuardedSetattrWithStaleCtimeIsNotSync) {
  const auto file = h_.lookup_path("attrs/file");
  nfs3::SetattrArgs args;
  args.object = file;
  args.new_attributes.mode = 0600;
  args.guard = nfs3::Time{1, 2};  // not the file's ctime
  auto res = h_.call(&Forwarder::setattr, as_root(), args);
  EXPECT_EQ(res.status, nfs3::Status::NotSync);
  EXPECT_EQ(lstat_or_fail(dir_ + "/file").st_mode & 07777, 0640u);
}

TEST_F(AttrsTest, FsstatFsinfoPathconf) {
  const auto root = h_.root();
  auto st = h_.call(&Forwarder::fsstat, as_root(), nfs3::FsstatArgs{root});
  ASSERT_EQ(st.status, nfs3::Status::Ok);
  struct statvfs vfs {};
  ASSERT_EQ(::statvfs(Origin::get().export_dir().c_str(), &vfs), 0);
  EXPECT_EQ(st.tbytes, static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize);
  EXPECT_EQ(st.tfiles, static_cast<std::uint64_t>(vfs.f_files));
  EXPECT_LE(st.abytes, st.fbytes);
  ASSERT_TRUE(st.obj_attributes.has_value());
  EXPECT_EQ(st.obj_attributes->fileid, lstat_or_fail(Origin::get().export_dir()).st_ino);

  auto info = h_.call(&Forwarder::fsinfo, as_root(), nfs3::FsinfoArgs{root});
  ASSERT_EQ(info.status, nfs3::Status::Ok);
  EXPECT_GT(info.rtmax, 0u);
  EXPECT_GT(info.wtmax, 0u);
  EXPECT_LE(info.rtpref, info.rtmax);
  EXPECT_GT(info.maxfilesize, 0u);
  EXPECT_NE(info.properties & nfs3::fsf::Symlink, 0u);
  EXPECT_NE(info.properties & nfs3::fsf::Link, 0u);

  auto pc = h_.call(&Forwarder::pathconf, as_root(), nfs3::PathconfArgs{root});
  ASSERT_EQ(pc.status, nfs3::Status::Ok);
  EXPECT_GE(pc.name_max, 255u);
  EXPECT_GT(pc.linkmax, 1u);
  EXPECT_TRUE(pc.case_preserving);
  EXPECT_FALSE(pc.case_insensitive);
}

}  // namespace
}  // namespace nfsgw::upstream::test
