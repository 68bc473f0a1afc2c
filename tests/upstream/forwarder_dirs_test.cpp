// Namespace procedures against a real origin, checked on the local filesystem:
// CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME, LINK, READDIR, READDIRPLUS.
#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <set>

#include "tests/upstream/origin_fixture.h"
#include "tests/upstream/test_util.h"

namespace nfsgw::upstream::test {
namespace {

class DirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_path_ = fresh_dir("dirs");
    dir_ = h_.lookup_path("dirs");
  }
  ForwarderHarness h_;
  std::string dir_path_;
  nfs3::FileHandle dir_;
};

TEST_F(DirsTest, CreateModesAndResultFields) {
  nfs3::CreateArgs args;
  args.where = {dir_, "made"};
  args.mode = nfs3::CreateMode::Guarded;
  args.obj_attributes.mode = 0612;
  auto res = h_.call(&Forwarder::create, as_root(), args);
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  ASSERT_TRUE(res.obj.has_value());
  ASSERT_TRUE(res.obj_attributes.has_value());
  expect_matches_stat(*res.obj_attributes, dir_path_ + "/made");
  EXPECT_EQ(lstat_or_fail(dir_path_ + "/made").st_mode & 07777, 0612u);
  ASSERT_TRUE(res.dir_wcc.after.has_value());
  expect_matches_stat(*res.dir_wcc.after, dir_path_);

  // GUARDED on an existing name: EXIST, with the directory's wcc data.
  auto again = h_.call(&Forwarder::create, as_root(), args);
  EXPECT_EQ(again.status, nfs3::Status::Exist);
  EXPECT_TRUE(again.dir_wcc.after.has_value());

  // EXCLUSIVE: same verifier twice is the same create, succeeding both times.
  nfs3::CreateArgs ex;
  ex.where = {dir_, "exclusive"};
  ex.mode = nfs3::CreateMode::Exclusive;
  ex.verf = {1, 2, 3, 4, 5, 6, 7, 8};
  auto e1 = h_.call(&Forwarder::create, as_root(), ex);
  ASSERT_EQ(e1.status, nfs3::Status::Ok);
  auto e2 = h_.call(&Forwarder::create, as_root(), ex);
  EXPECT_EQ(e2.status, nfs3::Status::Ok);
  ASSERT_TRUE(e1.obj && e2.obj);
  EXPECT_EQ(*e1.obj, *e2.obj);
  EXPECT_TRUE(S_ISREG(lstat_or_fail(dir_path_ + "/exclusive").st_mode));
}

TEST_F(DirsTest, MkdirSymlinkMknod) {
  nfs3::MkdirArgs md;
  md.where = {dir_, "d"};
  md.attributes.mode = 0750;
  auto m = h_.call(&Forwarder::mkdir, as_root(), md);
  ASSERT_EQ(m.status, nfs3::Status::Ok);
  const struct stat dst = lstat_or_fail(dir_path_ + "/d");
  EXPECT_TRUE(S_ISDIR(dst.st_mode));
  EXPECT_EQ(dst.st_mode & 07777, 0750u);
  ASSERT_TRUE(m.obj_attributes.has_value());
  EXPECT_EQ(m.obj_attributes->fileid, dst.st_ino);

  nfs3::SymlinkArgs sl;
  sl.where = {dir_, "s"};
  sl.symlink_data = "../some/where";
  auto s = h_.call(&Forwarder::symlink, as_root(), sl);
  ASSERT_EQ(s.status, nfs3::Status::Ok);
  char target[64] = {};
  ASSERT_EQ(::readlink((dir_path_ + "/s").c_str(), target, sizeof target - 1), 13);
  EXPECT_STREQ(target, "../some/where");
  ASSERT_TRUE(s.obj.has_value());
  auto rl = h_.call(&Forwarder::readlink, as_root(), nfs3::ReadlinkArgs{*s.obj});
  ASSERT_EQ(rl.status, nfs3::Status::Ok);
  EXPECT_EQ(rl.data, "../some/where");
  ASSERT_TRUE(rl.symlink_attributes.has_value());
  expect_matches_stat(*rl.symlink_attributes, dir_path_ + "/s");

  nfs3::MknodArgs mk;
  mk.where = {dir_, "fifo"};
  mk.type = nfs3::FileType::Fifo;
  mk.pipe_attributes.mode = 0620;
  auto n = h_.call(&Forwarder::mknod, as_root(), mk);
  ASSERT_EQ(n.status, nfs3::Status::Ok);
  const struct stat fst = lstat_or_fail(dir_path_ + "/fifo");
  EXPECT_TRUE(S_ISFIFO(fst.st_mode));
  EXPECT_EQ(fst.st_mode & 07777, 0620u);
}

TEST_F(DirsTest, RemoveRmdirRenameLink) {
  ::close(::open((dir_path_ + "/victim").c_str(), O_CREAT | O_WRONLY, 0644));
  ::close(::open((dir_path_ + "/orig").c_str(), O_CREAT | O_WRONLY, 0644));
  ASSERT_EQ(::mkdir((dir_path_ + "/emptydir").c_str(), 0755), 0);

  auto rm = h_.call(&Forwarder::remove, as_root(), nfs3::RemoveArgs{{dir_, "victim"}});
  ASSERT_EQ(rm.status, nfs3::Status::Ok);
  EXPECT_NE(::access((dir_path_ + "/victim").c_str(), F_OK), 0);
  ASSERT_TRUE(rm.dir_wcc.after.has_value());
  expect_matches_stat(*rm.dir_wcc.after, dir_path_);

  auto rd = h_.call(&Forwarder::rmdir, as_root(), nfs3::RmdirArgs{{dir_, "emptydir"}});
  ASSERT_EQ(rd.status, nfs3::Status::Ok);
  EXPECT_NE(::access((dir_path_ + "/emptydir").c_str(), F_OK), 0);

  const ino_t ino = lstat_or_fail(dir_path_ + "/orig").st_ino;
  auto rn = h_.call(&Forwarder::rename, as_root(), nfs3::RenameArgs{{dir_, "orig"}, {dir_, "renamed"}});
  ASSERT_EQ(rn.status, nfs3::Status::Ok);
  EXPECT_EQ(lstat_or_fail(dir_path_ + "/renamed").st_ino, ino);
  EXPECT_TRUE(rn.fromdir_wcc.after.has_value());
  EXPECT_TRUE(rn.todir_wcc.after.has_value());

  const auto file = h_.lookup_path("dirs/renamed");
  auto ln = h_.call(&Forwarder::link, as_root(), nfs3::LinkArgs{file, {dir_, "hard"}});
  ASSERT_EQ(ln.status, nfs3::Status::Ok);
  EXPECT_EQ(lstat_or_fail(dir_path_ + "/hard").st_ino, ino);
  ASSERT_TRUE(ln.file_attributes.has_value());
  EXPECT_EQ(ln.file_attributes->nlink, 2u);
  EXPECT_TRUE(ln.linkdir_wcc.after.has_value());
}

class BigDirTest : public DirsTest {
 protected:
  static constexpr int kEntries = 2000;
  void SetUp() override {
    DirsTest::SetUp();
    for (int i = 0; i < kEntries; ++i) {
      const std::string p = dir_path_ + "/entry-" + std::to_string(i);
      ::close(::open(p.c_str(), O_CREAT | O_WRONLY, 0644));
      inodes_[std::string("entry-") + std::to_string(i)] = lstat_or_fail(p).st_ino;
    }
  }
  std::map<std::string, ino_t> inodes_;
};

TEST_F(BigDirTest, ReaddirplusPagesThroughEveryEntry) {
  std::set<std::string> seen;
  nfs3::ReaddirplusArgs args;
  args.dir = dir_;
  args.dircount = 2048;
  args.maxcount = 8192;
  int pages = 0;
  bool eof = false;
  while (!eof && pages < 1000) {
    auto res = h_.call(&Forwarder::readdirplus, as_root(), args);
    ASSERT_EQ(res.status, nfs3::Status::Ok) << "page " << pages;
    ++pages;
    for (const auto& e : res.entries) {
      if (e.name == "." || e.name == "..") continue;
      EXPECT_TRUE(seen.insert(e.name).second) << "duplicate " << e.name;
      auto it = inodes_.find(e.name);
      ASSERT_NE(it, inodes_.end()) << e.name;
      EXPECT_EQ(e.fileid, it->second) << e.name;
      ASSERT_TRUE(e.name_attributes.has_value()) << e.name;
      EXPECT_EQ(e.name_attributes->fileid, it->second) << e.name;
      EXPECT_TRUE(e.name_handle.has_value()) << e.name;
    }
    if (!res.entries.empty()) args.cookie = res.entries.back().cookie;
    args.cookieverf = res.cookieverf;
    eof = res.eof;
  }
  EXPECT_TRUE(eof);
  EXPECT_GT(pages, 10);  // really many pages, not one big reply
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kEntries));

  // A handle from the listing works on its own.
  nfs3::ReaddirplusArgs first = args;
  first.cookie = 0;
  first.cookieverf = {};
  auto res = h_.call(&Forwarder::readdirplus, as_root(), first);
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  for (const auto& e : res.entries) {
    if (e.name.rfind("entry-", 0) != 0) continue;
    auto ga = h_.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{*e.name_handle});
    ASSERT_EQ(ga.status, nfs3::Status::Ok);
    expect_matches_stat(ga.attributes, dir_path_ + "/" + e.name);
    break;
  }
}

TEST_F(BigDirTest, ReaddirPagesThroughEveryEntry) {
  std::set<std::string> seen;
  nfs3::ReaddirArgs args;
  args.dir = dir_;
  args.count = 4096;
  int pages = 0;
  bool eof = false;
  while (!eof && pages < 1000) {
    auto res = h_.call(&Forwarder::readdir, as_root(), args);
    ASSERT_EQ(res.status, nfs3::Status::Ok);
    ++pages;
    for (const auto& e : res.entries) {
      if (e.name == "." || e.name == "..") continue;
      EXPECT_TRUE(seen.insert(e.name).second) << e.name;
      auto it = inodes_.find(e.name);
      ASSERT_NE(it, inodes_.end()) << e.name;
      EXPECT_EQ(e.fileid, it->second);
    }
    if (!res.entries.empty()) args.cookie = res.entries.back().cookie;
    args.cookieverf = res.cookieverf;
    eof = res.eof;
    ASSERT_TRUE(res.dir_attributes.has_value());
  }
  EXPECT_TRUE(eof);
  EXPECT_GT(pages, 5);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kEntries));
}

}  // namespace
}  // namespace nfsgw::upstream::test
