// Errors come back through nfsgw exactly as the origin gives them: every failing
// operation is run straight against the origin and through the gateway on twin
// directory trees, and the (negative errno) results must match the expected one.
// Also: permissions are enforced for an unprivileged uid, a read-only export
// refuses writes, and forged file handles are refused with NFS3ERR_BADHANDLE.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nfsc/libnfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "tests/support/gateway_env.h"
#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginAndGatewayEnvironment);

struct Case {
  const char* what;
  int expected;  // negative errno
  std::function<int(nfs_context*, const std::string& base)> op;
};

class Errors : public ::testing::Test {
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
  }

  /// Builds the same small tree under o_ (on disk) and g_ (on disk): a file, a
  /// non-empty directory and an empty one.
  void make_tree(const std::string& base) {
    std::string d = shared_origin().export_dir() + base;
    make_dirs(d + "/full");
    make_dirs(d + "/empty");
    std::ofstream(d + "/file") << "data";
    std::ofstream(d + "/full/inner") << "x";
  }

  void run_cases(const std::vector<Case>& cases) {
    make_tree(o_);
    make_tree(g_);
    for (const auto& c : cases) {
      int o = c.op(origin_->get(), o_);
      int g = c.op(gw_->get(), g_);
      EXPECT_EQ(o, c.expected) << c.what << " straight against the origin";
      EXPECT_EQ(g, o) << c.what << " through nfsgw (origin gave " << o << ")";
    }
  }

  std::unique_ptr<NfsClient> origin_, gw_;
  std::string o_, g_;
};

constexpr std::uint32_t kNfs3ErrRofs = 30;

int create_excl(nfs_context* nfs, const std::string& path) {
  nfsfh* fh = nullptr;
  int rc = nfs_create(nfs, path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644, &fh);
  if (rc == 0) nfs_close(nfs, fh);
  return rc;
}

TEST_F(Errors, NoEntExistNotEmptyIsDirNotDirNameTooLong) {
  const std::string long_name(300, 'n');
  run_cases({
      {"lstat missing", -ENOENT, [](nfs_context* n, const std::string& b) { return lstat_of(n, b + "/missing").rc; }},
      {"unlink missing", -ENOENT, [](nfs_context* n, const std::string& b) { return nfs_unlink(n, (b + "/missing").c_str()); }},
      {"rmdir missing", -ENOENT, [](nfs_context* n, const std::string& b) { return nfs_rmdir(n, (b + "/missing").c_str()); }},
      {"rename missing", -ENOENT,
       [](nfs_context* n, const std::string& b) { return nfs_rename(n, (b + "/missing").c_str(), (b + "/x").c_str()); }},
      {"mkdir existing", -EEXIST, [](nfs_context* n, const std::string& b) { return nfs_mkdir(n, (b + "/full").c_str()); }},
      {"exclusive create existing", -EEXIST, [](nfs_context* n, const std::string& b) { return create_excl(n, b + "/file"); }},
      {"symlink over existing", -EEXIST,
       [](nfs_context* n, const std::string& b) { return nfs_symlink(n, "t", (b + "/file").c_str()); }},
      {"link over existing", -EEXIST,
       [](nfs_context* n, const std::string& b) { return nfs_link(n, (b + "/file").c_str(), (b + "/full/inner").c_str()); }},
      {"rmdir non-empty", -ENOTEMPTY, [](nfs_context* n, const std::string& b) { return nfs_rmdir(n, (b + "/full").c_str()); }},
      {"rename dir over non-empty dir", -ENOTEMPTY,
       [](nfs_context* n, const std::string& b) { return nfs_rename(n, (b + "/empty").c_str(), (b + "/full").c_str()); }},
      {"unlink a directory", -EISDIR, [](nfs_context* n, const std::string& b) { return nfs_unlink(n, (b + "/empty").c_str()); }},
      {"rename file over dir", -EISDIR,
       [](nfs_context* n, const std::string& b) { return nfs_rename(n, (b + "/file").c_str(), (b + "/empty").c_str()); }},
      {"lookup below a file", -ENOTDIR, [](nfs_context* n, const std::string& b) { return lstat_of(n, b + "/file/x").rc; }},
      {"rmdir a file", -ENOTDIR, [](nfs_context* n, const std::string& b) { return nfs_rmdir(n, (b + "/file").c_str()); }},
      {"mkdir below a file", -ENOTDIR, [](nfs_context* n, const std::string& b) { return nfs_mkdir(n, (b + "/file/d").c_str()); }},
      {"mkdir long name", -ENAMETOOLONG,
       [long_name](nfs_context* n, const std::string& b) { return nfs_mkdir(n, (b + "/" + long_name).c_str()); }},
      {"create long name", -ENAMETOOLONG,
       [long_name](nfs_context* n, const std::string& b) { return create_excl(n, b + "/" + long_name); }},
  });
  // Nothing failed half-way: the trees are still alike.
  for (const char* rel : {"/file", "/full", "/full/inner", "/empty"}) {
    EXPECT_EQ(lstat_of(gw_->get(), g_ + rel).rc, 0) << rel;
  }
}

// uid 1000 may not look into a root-owned 0700 directory, either way.
TEST_F(Errors, PermissionDeniedForUnprivilegedUid) {
  for (const auto& base : {o_, g_}) {
    std::string d = shared_origin().export_dir() + base;
    make_dirs(d + "/private");
    std::ofstream(d + "/private/secret") << "s";
    ASSERT_EQ(::chown((d + "/private").c_str(), 0, 0), 0);
    ASSERT_EQ(::chmod((d + "/private").c_str(), 0700), 0);
  }
  NfsClient o_user(shared_origin().url(), 1000, 1000);
  NfsClient g_user(gateway_url(), 1000, 1000);
  ASSERT_EQ(o_user.mount_status(), 0) << o_user.mount_error();
  ASSERT_EQ(g_user.mount_status(), 0) << g_user.mount_error();
  std::vector<Case> cases = {
      {"lstat inside", -EACCES, [](nfs_context* n, const std::string& b) { return lstat_of(n, b + "/private/secret").rc; }},
      {"opendir", -EACCES,
       [](nfs_context* n, const std::string& b) {
         int rc = 0;
         list_dir(n, b + "/private", &rc);
         return rc;
       }},
      {"create inside", -EACCES, [](nfs_context* n, const std::string& b) { return write_file(n, b + "/private/new", "x"); }},
      {"chmod", -EPERM, [](nfs_context* n, const std::string& b) { return nfs_chmod(n, (b + "/private").c_str(), 0777); }},
  };
  for (const auto& c : cases) {
    int o = c.op(o_user.get(), o_);
    int g = c.op(g_user.get(), g_);
    EXPECT_EQ(o, c.expected) << c.what << " straight";
    EXPECT_EQ(g, o) << c.what << " through nfsgw";
  }
  // Root still can (the denial is about the uid, not the object).
  EXPECT_EQ(lstat_of(gw_->get(), g_ + "/private/secret").rc, 0);
  EXPECT_EQ(::access((shared_origin().export_dir() + g_ + "/private/new").c_str(), F_OK), -1);
}

// A second nfsgw exporting the same origin read-only: reads pass, writes get EROFS.
TEST_F(Errors, ReadOnlyExportRefusesWritesButServesReads) {
  INTEG_REQUIRE_NFSGW();
  make_tree(g_);
  TempDir dir("ro");
  GatewayConfig cfg;
  cfg.port = kSecondGatewayPort;
  cfg.origin_url = shared_origin().url();
  cfg.access = "ro";
  Gateway ro(cfg, dir.sub("gw"));
  ASSERT_NO_THROW(ro.start());
  NfsClient c(ro.url());
  ASSERT_EQ(c.mount_status(), 0) << c.mount_error() << "\n" << ro.log();
  int rc = -1;
  EXPECT_EQ(read_file(c.get(), g_ + "/file", &rc), "data");
  EXPECT_EQ(rc, 0);
  int lrc = -1;
  EXPECT_EQ(list_dir(c.get(), g_ + "/full", &lrc).size(), 3u);
  EXPECT_EQ(lrc, 0);
  EXPECT_EQ(write_file(c.get(), g_ + "/new", "x"), -EROFS);
  EXPECT_EQ(nfs_mkdir(c.get(), (g_ + "/newdir").c_str()), -EROFS);
  EXPECT_EQ(nfs_chmod(c.get(), (g_ + "/file").c_str(), 0600), -EROFS);
  EXPECT_EQ(nfs_unlink(c.get(), (g_ + "/file").c_str()), -EROFS);
  EXPECT_EQ(nfs_rename(c.get(), (g_ + "/file").c_str(), (g_ + "/moved").c_str()), -EROFS);
  EXPECT_EQ(nfs_symlink(c.get(), "t", (g_ + "/sym").c_str()), -EROFS);
  // The WRITE procedure itself, sent raw: libnfs's nfs_open(O_WRONLY) checks
  // ACCESS first, which the read-only export masks, so through libnfs's file API
  // the WRITE would never be sent at all.
  {
    auto root = mount_root(ro.port(), "/export");
    ASSERT_TRUE(root.transport_ok && root.status == 0) << root.error << "\n" << ro.log();
    RawNfsConnection raw;
    ASSERT_TRUE(raw.connect(ro.port(), kNfsProgram, 3)) << raw.error();
    auto dir = raw.lookup(root.root, g_.substr(1));
    ASSERT_EQ(dir.status, kNfs3Ok) << dir.error;
    auto file = raw.lookup(dir.handle, "file");
    ASSERT_EQ(file.status, kNfs3Ok) << file.error;
    auto w = raw.write(file.handle, 0, "abc");
    ASSERT_TRUE(w.transport_ok) << w.error;
    EXPECT_EQ(w.status, kNfs3ErrRofs) << "WRITE on a read-only export";
    EXPECT_EQ(w.count, 0u);
  }
  // Nothing changed on the origin's disk.
  std::string d = shared_origin().export_dir() + g_;
  EXPECT_EQ(::access((d + "/new").c_str(), F_OK), -1);
  EXPECT_EQ(::access((d + "/newdir").c_str(), F_OK), -1);
  EXPECT_EQ(::access((d + "/file").c_str(), F_OK), 0);
  EXPECT_EQ(integ::read_file(d + "/file"), "data");
  EXPECT_EQ(ro.stop(), 0) << ro.log();
}

// Handles are nfsgw's own and authenticated: any change to one, or random bytes,
// must be refused with NFS3ERR_BADHANDLE, never passed on or crash the gateway.
TEST_F(Errors, ForgedHandlesGetBadHandle) {
  INTEG_REQUIRE_NFSGW();
  make_tree(g_);
  auto root = mount_root(gateway_mount_port(), gateway_export_path());
  ASSERT_TRUE(root.transport_ok && root.status == 0) << root.error;
  RawNfsConnection conn;
  ASSERT_TRUE(conn.connect(gateway_port(), kNfsProgram, 3)) << conn.error();
  auto dir = conn.lookup(root.root, g_.substr(1));
  ASSERT_EQ(dir.status, 0u) << dir.error;
  auto file = conn.lookup(dir.handle, "file");
  ASSERT_EQ(file.status, 0u) << file.error;
  auto good = conn.getattr(file.handle);
  ASSERT_TRUE(good.transport_ok) << good.error;
  ASSERT_EQ(good.status, 0u);
  ASSERT_FALSE(file.handle.empty());

  std::vector<std::size_t> positions = {0, file.handle.size() / 2, file.handle.size() - 1};
  for (std::size_t pos : positions) {
    Handle forged = file.handle;
    forged[pos] ^= 0x5a;
    auto r = conn.getattr(forged);
    ASSERT_TRUE(r.transport_ok) << "byte " << pos << ": " << r.error;
    EXPECT_EQ(r.status, kNfs3BadHandle) << "flipped byte " << pos << " of " << file.handle.size();
  }
  std::mt19937 rng(12345);
  for (int i = 0; i < 4; ++i) {
    Handle random(64);
    for (auto& b : random) b = static_cast<std::uint8_t>(rng());
    auto r = conn.getattr(random);
    ASSERT_TRUE(r.transport_ok) << r.error;
    EXPECT_EQ(r.status, kNfs3BadHandle) << "random handle " << i;
  }
  Handle empty;
  auto r = conn.getattr(empty);
  ASSERT_TRUE(r.transport_ok) << r.error;
  EXPECT_EQ(r.status, kNfs3BadHandle) << "empty handle";
  // The genuine handle still works afterwards.
  auto again = conn.getattr(file.handle);
  EXPECT_EQ(again.status, 0u);
  EXPECT_EQ(again.fileid, good.fileid);
}

/// Calls of prog:vers:proc the relay saw going up (towards the origin), from the
/// JSON of `wan-emu --ctl ... stats`; -1 when the output cannot be read.
long relay_calls(const std::string& stats_json, const std::string& key) {
  auto at = stats_json.find("\"" + key + "\":{\"calls\":");
  if (at == std::string::npos) return stats_json.find("\"procs\"") == std::string::npos ? -1 : 0;
  return std::stol(stats_json.substr(at + key.size() + 12));
}

// Forged handles are refused by nfsgw itself: with the wan-emu relay between a
// second nfsgw and the origin counting RPCs, no NFS call for them reaches the origin.
TEST_F(Errors, ForgedHandlesNeverReachTheOrigin) {
  INTEG_REQUIRE_NFSGW();
  auto relay_bin = wan_emu_binary();
  if (!relay_bin) GTEST_FAIL() << "wan-emu binary not found (build target wan-emu or set WAN_EMU_BIN)";
  make_tree(g_);
  TempDir dir("relay");
  const std::string control = "127.0.0.1:" + std::to_string(kRelayControlPort);
  Process relay({*relay_bin, "--pair", "127.0.0.1:" + std::to_string(kRelayNfsPort) + "=127.0.0.1:" +
                                           std::to_string(kOriginNfsPort),
                 "--pair", "127.0.0.1:" + std::to_string(kRelayMountPort) + "=127.0.0.1:" + std::to_string(kOriginMountPort),
                 "--control", control},
                dir.sub("relay.log"));
  ASSERT_TRUE(wait_for_port(kRelayControlPort, 10000, &relay)) << relay.log();
  GatewayConfig cfg;
  cfg.port = kSecondGatewayPort;
  cfg.origin_url = "nfs://127.0.0.1" + shared_origin().export_dir() + "?nfsport=" + std::to_string(kRelayNfsPort) +
                   "&mountport=" + std::to_string(kRelayMountPort);
  // No metadata cache: every genuine call goes to the origin (the control below);
  // forged handles are refused by the handle translator, before any cache.
  cfg.metadata.enabled = false;
  Gateway gw(cfg, dir.sub("gw"));
  ASSERT_NO_THROW(gw.start());
  auto root = mount_root(gw.port(), "/export");
  ASSERT_TRUE(root.transport_ok && root.status == 0) << root.error << "\n" << gw.log();
  RawNfsConnection conn;
  ASSERT_TRUE(conn.connect(gw.port(), kNfsProgram, 3));
  auto d = conn.lookup(root.root, g_.substr(1));
  ASSERT_EQ(d.status, 0u);
  auto f = conn.lookup(d.handle, "file");
  ASSERT_EQ(f.status, 0u);

  auto reset = run({*relay_bin, "--ctl", control, "reset"}, std::chrono::seconds(10));
  ASSERT_EQ(reset.exit_code, 0) << reset.output;
  // Positive control: one genuine GETATTR, which (metadata cache off) must reach
  // the origin and be counted, so that a count of 0 below means something.
  auto genuine = conn.getattr(f.handle);
  ASSERT_TRUE(genuine.transport_ok) << genuine.error;
  ASSERT_EQ(genuine.status, kNfs3Ok);
  for (std::size_t pos = 0; pos < f.handle.size(); pos += 3) {
    Handle forged = f.handle;
    forged[pos] ^= 0x01;
    auto r = conn.getattr(forged);
    EXPECT_EQ(r.status, kNfs3BadHandle) << "flipped byte " << pos;
    auto l = conn.lookup(forged, "file");
    EXPECT_EQ(l.status, kNfs3BadHandle) << "LOOKUP in a forged directory handle, byte " << pos;
  }
  auto stats = run({*relay_bin, "--ctl", control, "stats"}, std::chrono::seconds(10));
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_EQ(relay_calls(stats.output, "100003:3:1"), 1)
      << "the genuine GETATTR is the only one that reaches the origin:\n" << stats.output;
  EXPECT_EQ(relay_calls(stats.output, "100003:3:3"), 0) << "LOOKUP reached the origin:\n" << stats.output;
  EXPECT_EQ(gw.stop(), 0) << gw.log();
  relay.stop();
}

}  // namespace
