// Every NFSv3 procedure through nfsgw gives the same result as straight against the
// origin. Each test does an operation twice, under /o_<test> on the origin and under
// /g_<test> through the gateway, and compares the outcomes; it also checks that
// what the gateway reports about an object equals what the origin reports about the
// very same object (same inode, times, sizes), so stale or rewritten attributes show.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nfsc/libnfs.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "tests/support/gateway_env.h"
#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/process.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginAndGatewayEnvironment);

class Procedures : public ::testing::Test {
 protected:
  void SetUp() override {
    INTEG_REQUIRE_GATEWAY();
    origin_ = std::make_unique<NfsClient>(shared_origin().url());
    gw_ = std::make_unique<NfsClient>(gateway_url());
    ASSERT_EQ(origin_->mount_status(), 0) << origin_->mount_error();
    ASSERT_EQ(gw_->mount_status(), 0) << gw_->mount_error();
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    o_ = "/o_" + name;
    g_ = "/g_" + name;
    ASSERT_EQ(nfs_mkdir(*origin_, o_.c_str()), 0) << origin_->error();
    ASSERT_EQ(nfs_mkdir(*gw_, g_.c_str()), 0) << gw_->error();
  }

  nfs_context* O() { return origin_->get(); }
  nfs_context* G() { return gw_->get(); }
  std::string on_disk(const std::string& path) { return shared_origin().export_dir() + path; }

  /// The gateway's attributes of `path` equal the origin's attributes of the same
  /// object (atime excluded: reading it through either side may change it).
  void expect_same_object(const std::string& path) {
    Attrs via_gw = lstat_of(G(), path);
    Attrs via_origin = lstat_of(O(), path);
    ASSERT_EQ(via_origin.rc, 0) << path;
    EXPECT_EQ(via_gw.rc, 0) << path;
    EXPECT_EQ(via_gw.ino, via_origin.ino) << path;
    EXPECT_EQ(via_gw.mode, via_origin.mode) << path;
    EXPECT_EQ(via_gw.nlink, via_origin.nlink) << path;
    EXPECT_EQ(via_gw.uid, via_origin.uid) << path;
    EXPECT_EQ(via_gw.gid, via_origin.gid) << path;
    EXPECT_EQ(via_gw.size, via_origin.size) << path;
    EXPECT_EQ(via_gw.rdev, via_origin.rdev) << path;
    EXPECT_EQ(via_gw.mtime, via_origin.mtime) << path;
    EXPECT_EQ(via_gw.mtime_nsec, via_origin.mtime_nsec) << path;
    EXPECT_EQ(via_gw.ctime, via_origin.ctime) << path;
    EXPECT_EQ(via_gw.ctime_nsec, via_origin.ctime_nsec) << path;
  }

  /// The object made through the gateway looks like the one made on the origin.
  void expect_same_shape(const std::string& rel) {
    Attrs o = lstat_of(O(), o_ + rel);
    Attrs g = lstat_of(G(), g_ + rel);
    EXPECT_EQ(g.rc, o.rc) << rel;
    EXPECT_EQ(g.mode, o.mode) << rel;
    EXPECT_EQ(g.nlink, o.nlink) << rel;
    EXPECT_EQ(g.uid, o.uid) << rel;
    EXPECT_EQ(g.gid, o.gid) << rel;
    EXPECT_EQ(g.size, o.size) << rel;
  }

  std::unique_ptr<NfsClient> origin_, gw_;
  std::string o_, g_;
};

TEST_F(Procedures, GetattrOfRootAndFileMatchesOrigin) {
  ASSERT_EQ(write_file(O(), o_ + "/f", "hello"), 0);
  expect_same_object("/");
  expect_same_object(o_);
  expect_same_object(o_ + "/f");
  Attrs a = lstat_of(G(), o_ + "/f");
  EXPECT_EQ(a.size, 5u);
  EXPECT_TRUE(S_ISREG(a.mode));
}

TEST_F(Procedures, SetattrChmodChownUtimesTruncate) {
  for (const auto& base : {o_, g_}) ASSERT_EQ(write_file(base == o_ ? O() : G(), base + "/f", "0123456789"), 0);
  for (auto [ctx, base] : {std::pair{O(), o_}, std::pair{G(), g_}}) {
    std::string f = base + "/f";
    EXPECT_EQ(nfs_chmod(ctx, f.c_str(), 0640), 0);
    EXPECT_EQ(nfs_chown(ctx, f.c_str(), 1234, 5678), 0);
    timeval times[2] = {{1000000000, 0}, {1200000000, 0}};
    EXPECT_EQ(nfs_utimes(ctx, f.c_str(), times), 0);
    EXPECT_EQ(nfs_truncate(ctx, f.c_str(), 4), 0);
    EXPECT_EQ(nfs_truncate(ctx, f.c_str(), 70000), 0);  // grows with zeros
  }
  expect_same_shape("/f");
  Attrs g = lstat_of(G(), g_ + "/f");
  EXPECT_EQ(g.mode & 07777, 0640u);
  EXPECT_EQ(g.uid, 1234u);
  EXPECT_EQ(g.gid, 5678u);
  EXPECT_EQ(g.size, 70000u);
  // utimes set mtime to 1.2e9, but truncate after it moved mtime again; set and check last.
  timeval times[2] = {{1000000000, 0}, {1200000000, 0}};
  ASSERT_EQ(nfs_utimes(G(), (g_ + "/f").c_str(), times), 0);
  EXPECT_EQ(lstat_of(G(), g_ + "/f").mtime, 1200000000u);
  expect_same_object(g_ + "/f");
  struct stat local {};
  ASSERT_EQ(::stat(on_disk(g_ + "/f").c_str(), &local), 0);
  EXPECT_EQ(local.st_uid, 1234u);
  EXPECT_EQ(local.st_mtime, 1200000000);
}

TEST_F(Procedures, LookupAndAccess) {
  for (auto [ctx, base] : {std::pair{O(), o_}, std::pair{G(), g_}}) {
    ASSERT_EQ(write_file(ctx, base + "/readable", "x"), 0);
    ASSERT_EQ(nfs_mkdir(ctx, (base + "/sub").c_str()), 0);
    ASSERT_EQ(write_file(ctx, base + "/sub/deep", "yy"), 0);
  }
  expect_same_shape("/readable");
  expect_same_shape("/sub");
  expect_same_shape("/sub/deep");
  expect_same_object(g_ + "/sub/deep");
  for (const char* rel : {"/readable", "/sub", "/sub/deep"}) {
    EXPECT_EQ(nfs_access(G(), (g_ + rel).c_str(), R_OK | W_OK), nfs_access(O(), (o_ + rel).c_str(), R_OK | W_OK))
        << rel;
    EXPECT_EQ(nfs_access2(G(), (g_ + rel).c_str()), nfs_access2(O(), (o_ + rel).c_str())) << rel;
  }
  EXPECT_EQ(nfs_access2(G(), (g_ + "/readable").c_str()) & (R_OK | W_OK), R_OK | W_OK);
}

TEST_F(Procedures, SymlinkAndReadlink) {
  for (auto [ctx, base] : {std::pair{O(), o_}, std::pair{G(), g_}}) {
    ASSERT_EQ(nfs_symlink(ctx, "some/target/path", (base + "/link").c_str()), 0);
  }
  expect_same_shape("/link");
  expect_same_object(g_ + "/link");
  char* o_target = nullptr;
  char* g_target = nullptr;
  ASSERT_EQ(nfs_readlink2(O(), (o_ + "/link").c_str(), &o_target), 0);
  ASSERT_EQ(nfs_readlink2(G(), (g_ + "/link").c_str(), &g_target), 0);
  EXPECT_STREQ(g_target, o_target);
  EXPECT_STREQ(g_target, "some/target/path");
  free(o_target);
  free(g_target);
  char buf[256] = {};
  ASSERT_EQ(::readlink(on_disk(g_ + "/link").c_str(), buf, sizeof buf - 1), 16);
  EXPECT_STREQ(buf, "some/target/path");
}

TEST_F(Procedures, WriteReadAndCommit) {
  std::string data;
  for (int i = 0; i < 300000; ++i) data += static_cast<char>('a' + (i * 7) % 26);
  for (auto [ctx, base] : {std::pair{O(), o_}, std::pair{G(), g_}}) {
    nfsfh* fh = nullptr;
    ASSERT_EQ(nfs_open2(ctx, (base + "/data").c_str(), O_RDWR | O_CREAT, 0600, &fh), 0);
    // Out-of-order writes, then COMMIT.
    ASSERT_EQ(nfs_pwrite(ctx, fh, 200000, data.size() - 200000, data.data() + 200000), int(data.size() - 200000));
    ASSERT_EQ(nfs_pwrite(ctx, fh, 0, 200000, data.data()), 200000);
    EXPECT_EQ(nfs_fsync(ctx, fh), 0);
    std::string back(1000, '\0');
    EXPECT_EQ(nfs_pread(ctx, fh, 123456, back.size(), back.data()), 1000);
    EXPECT_EQ(back, data.substr(123456, 1000));
    EXPECT_EQ(nfs_pread(ctx, fh, data.size(), 10, back.data()), 0);  // at EOF
    EXPECT_EQ(nfs_close(ctx, fh), 0);
  }
  expect_same_shape("/data");
  expect_same_object(g_ + "/data");
  EXPECT_EQ(read_file(on_disk(g_ + "/data")), data);
  int rc = 0;
  EXPECT_EQ(read_file(G(), o_ + "/data", &rc), data);  // written by the origin, read through nfsgw
  EXPECT_EQ(rc, 0);
}

TEST_F(Procedures, CreateMkdirMknodLinkRenameRemove) {
  for (auto [ctx, base] : {std::pair{O(), o_}, std::pair{G(), g_}}) {
    nfsfh* fh = nullptr;
    ASSERT_EQ(nfs_creat(ctx, (base + "/created").c_str(), 0604, &fh), 0);
    nfs_close(ctx, fh);
    ASSERT_EQ(nfs_mkdir2(ctx, (base + "/dir").c_str(), 0750), 0);
    ASSERT_EQ(nfs_mknod(ctx, (base + "/fifo").c_str(), S_IFIFO | 0640, 0), 0);
    ASSERT_EQ(nfs_link(ctx, (base + "/created").c_str(), (base + "/dir/hardlink").c_str()), 0);
  }
  for (const char* rel : {"/created", "/dir", "/fifo", "/dir/hardlink"}) expect_same_shape(rel);
  EXPECT_EQ(lstat_of(G(), g_ + "/created").nlink, 2u);
  EXPECT_TRUE(S_ISFIFO(lstat_of(G(), g_ + "/fifo").mode));
  EXPECT_EQ(lstat_of(G(), g_ + "/dir").mode & 07777, 0750u);
  EXPECT_EQ(lstat_of(G(), g_ + "/dir/hardlink").ino, lstat_of(G(), g_ + "/created").ino);
  expect_same_object(g_ + "/fifo");
  expect_same_object(g_ + "/dir");

  for (auto [ctx, base] : {std::pair{O(), o_}, std::pair{G(), g_}}) {
    EXPECT_EQ(nfs_rename(ctx, (base + "/created").c_str(), (base + "/dir/renamed").c_str()), 0);
    EXPECT_EQ(nfs_unlink(ctx, (base + "/dir/hardlink").c_str()), 0);
    EXPECT_EQ(nfs_unlink(ctx, (base + "/fifo").c_str()), 0);
  }
  expect_same_shape("/dir/renamed");
  expect_same_shape("/created");  // both ENOENT
  EXPECT_EQ(lstat_of(G(), g_ + "/created").rc, -ENOENT);
  EXPECT_EQ(lstat_of(G(), g_ + "/dir/renamed").nlink, 1u);
  EXPECT_EQ(lstat_of(O(), g_ + "/fifo").rc, -ENOENT);

  for (auto [ctx, base] : {std::pair{O(), o_}, std::pair{G(), g_}}) {
    EXPECT_EQ(nfs_unlink(ctx, (base + "/dir/renamed").c_str()), 0);
    EXPECT_EQ(nfs_rmdir(ctx, (base + "/dir").c_str()), 0);
  }
  EXPECT_EQ(lstat_of(O(), g_ + "/dir").rc, -ENOENT);
  int rc = 0;
  EXPECT_TRUE(list_dir(G(), g_, &rc).size() == 2u);  // only . and ..
}

// 3,000 entries need many READDIR/READDIRPLUS pages; names, sizes and inode numbers
// must come through unchanged and nothing may be lost or repeated at page seams.
TEST_F(Procedures, ReaddirAndReaddirplusAcrossManyPages) {
  constexpr int kEntries = 3000;
  std::string dir = on_disk(o_ + "/big");
  make_dirs(dir);
  for (int i = 0; i < kEntries; ++i) {
    std::ofstream(dir + "/entry_with_a_longish_name_" + std::to_string(i)) << std::string(i % 37, 'z');
  }
  int orc = 0, grc = 0;
  auto via_origin = list_dir(O(), o_ + "/big", &orc);
  auto via_gw = list_dir(G(), o_ + "/big", &grc);
  ASSERT_EQ(orc, 0);
  ASSERT_EQ(grc, 0) << gw_->error();
  ASSERT_EQ(via_origin.size(), kEntries + 2u);  // plus . and ..
  ASSERT_EQ(via_gw.size(), via_origin.size());
  for (std::size_t i = 0; i < via_origin.size(); ++i) {
    if (via_origin[i].name == "..") {
      EXPECT_EQ(via_gw[i].name, "..");
      continue;  // the parent of an export root may be presented differently
    }
    EXPECT_EQ(via_gw[i], via_origin[i]);
  }

  // Plain READDIR (libnfs's high-level API always uses READDIRPLUS), small pages.
  auto o_root = mount_root(shared_origin().mount_port(), shared_origin().export_dir());
  auto g_root = mount_root(gateway_mount_port(), gateway_export_path());
  ASSERT_TRUE(o_root.transport_ok && o_root.status == 0) << o_root.error;
  ASSERT_TRUE(g_root.transport_ok && g_root.status == 0) << g_root.error;
  RawNfsConnection o_conn, g_conn;
  ASSERT_TRUE(o_conn.connect(shared_origin().nfs_port(), kNfsProgram, 3)) << o_conn.error();
  ASSERT_TRUE(g_conn.connect(gateway_port(), kNfsProgram, 3)) << g_conn.error();
  auto o_dir = o_conn.lookup(o_root.root, o_.substr(1));
  auto g_dir = g_conn.lookup(g_root.root, o_.substr(1));
  ASSERT_EQ(g_dir.status, 0u) << g_dir.error;
  auto o_big = o_conn.lookup(o_dir.handle, "big");
  auto g_big = g_conn.lookup(g_dir.handle, "big");
  ASSERT_EQ(g_big.status, 0u) << g_big.error;
  EXPECT_EQ(g_big.fileid, o_big.fileid);
  auto o_list = o_conn.readdir_all(o_big.handle, 4096);
  auto g_list = g_conn.readdir_all(g_big.handle, 4096);
  ASSERT_TRUE(o_list.transport_ok && o_list.status == 0) << o_list.error;
  ASSERT_TRUE(g_list.transport_ok) << g_list.error;
  ASSERT_EQ(g_list.status, 0u);
  EXPECT_GT(g_list.pages, 10u);
  auto key = [](const RawDirEntry& a, const RawDirEntry& b) { return a.name < b.name; };
  std::sort(o_list.entries.begin(), o_list.entries.end(), key);
  std::sort(g_list.entries.begin(), g_list.entries.end(), key);
  ASSERT_EQ(g_list.entries.size(), o_list.entries.size());
  EXPECT_EQ(o_list.entries.size(), kEntries + 2u);
  for (std::size_t i = 0; i < o_list.entries.size(); ++i) {
    EXPECT_EQ(g_list.entries[i].name, o_list.entries[i].name);
    if (o_list.entries[i].name != "..") {
      EXPECT_EQ(g_list.entries[i].fileid, o_list.entries[i].fileid);
    }
  }
}

TEST_F(Procedures, FsstatFsinfoPathconf) {
  nfs_statvfs_64 o{}, g{};
  ASSERT_EQ(nfs_statvfs64(O(), "/", &o), 0);
  ASSERT_EQ(nfs_statvfs64(G(), "/", &g), 0) << gw_->error();
  EXPECT_EQ(g.f_bsize, o.f_bsize);
  EXPECT_EQ(g.f_frsize, o.f_frsize);
  EXPECT_EQ(g.f_blocks, o.f_blocks);
  EXPECT_EQ(g.f_files, o.f_files);
  EXPECT_EQ(g.f_namemax, o.f_namemax);
  EXPECT_LE(g.f_bavail, g.f_blocks);
  EXPECT_GT(g.f_blocks, 0u);

  auto o_root = mount_root(shared_origin().mount_port(), shared_origin().export_dir());
  auto g_root = mount_root(gateway_mount_port(), gateway_export_path());
  ASSERT_TRUE(g_root.transport_ok && g_root.status == 0) << g_root.error;
  RawNfsConnection o_conn, g_conn;
  ASSERT_TRUE(o_conn.connect(shared_origin().nfs_port(), kNfsProgram, 3));
  ASSERT_TRUE(g_conn.connect(gateway_port(), kNfsProgram, 3));
  auto opc = o_conn.pathconf(o_root.root);
  auto gpc = g_conn.pathconf(g_root.root);
  ASSERT_TRUE(gpc.transport_ok) << gpc.error;
  EXPECT_EQ(gpc.status, opc.status);
  EXPECT_EQ(gpc.linkmax, opc.linkmax);
  EXPECT_EQ(gpc.name_max, opc.name_max);
  EXPECT_EQ(gpc.no_trunc, opc.no_trunc);
  EXPECT_EQ(gpc.case_insensitive, opc.case_insensitive);
  EXPECT_EQ(gpc.case_preserving, opc.case_preserving);
  // FSINFO transfer sizes are the gateway's own choice; they must be usable and the
  // file system's limits must be the origin's.
  auto ofi = o_conn.fsinfo(o_root.root);
  auto gfi = g_conn.fsinfo(g_root.root);
  ASSERT_TRUE(gfi.transport_ok) << gfi.error;
  ASSERT_EQ(gfi.status, 0u);
  EXPECT_GE(gfi.rtmax, 4096u);
  EXPECT_GE(gfi.wtmax, 4096u);
  EXPECT_LE(gfi.rtpref, gfi.rtmax);
  EXPECT_LE(gfi.wtpref, gfi.wtmax);
  EXPECT_EQ(gfi.maxfilesize, ofi.maxfilesize);
  EXPECT_GT(nfs_get_readmax(G()), 0u);
  EXPECT_GT(nfs_get_writemax(G()), 0u);
}

}  // namespace
