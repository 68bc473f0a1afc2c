// Changes made through nfsgw, as every client of it must see them (issue 18's
// faults 2, 3 and 4), against a real ganesha origin with raw NFSv3 clients:
//  - no kill -9 brings back the state before an acknowledged change;
//  - a change through one export is seen at once through every export that shows
//    the same origin objects (the same tree read-only, an overlapping subtree);
//  - removing or replacing a hard link that nfsgw never looked up leaves no stale
//    link count on the object's other name.
// Every export has 1-hour windows, so nothing here is explained by a window
// ending: each answer checked would be the cached one if the change were missed.
// The setup is made on the origin's disk before ganesha has seen any of it.
//
// Own gateway port (30200); the origin is the binary's shared one.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/raw_steps.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

constexpr std::uint16_t kGatewayPort = 30200;
constexpr std::uint32_t kUid = 0, kGid = 0;  // the setup is root's, made on the origin's disk

/// The origin URL of a folder below the shared origin's export.
std::string origin_below(const std::string& rel) {
  std::string url = shared_origin().url();
  return url.insert(url.find('?'), "/" + rel);
}

MetadataCacheSettings hour_windows(const std::string& consistency = "ttl") {
  MetadataCacheSettings m;
  m.consistency = consistency;
  for (const char* k : {"attr_ttl", "dir_ttl", "negative_ttl", "access_ttl"}) m.durations[k] = "1h";
  return m;
}

void write_file(const std::string& path, std::size_t bytes) {
  std::ofstream(path) << std::string(bytes, 'x');
}

std::set<std::string> names_of(const RawReaddir& r) {
  std::set<std::string> out;
  for (const auto& e : r.entries) out.insert(e.name);
  return out;
}

/// One nfsgw with /rw over the origin's whole export, /ro of the same path
/// (read-only), and /sub of a folder below it; all caching for an hour.
class Changes : public ::testing::Test {
 protected:
  void SetUp() override {
    INTEG_REQUIRE_NFSGW();
    cfg.port = kGatewayPort;
    cfg.export_path = "/rw";
    cfg.origin_url = shared_origin().url();
    cfg.metadata = hour_windows();
    ExportSettings ro;
    ro.export_path = "/ro";
    ro.access = "ro";
    ro.metadata = hour_windows();
    ExportSettings sub;
    sub.export_path = "/sub";
    sub.origin_url = origin_below("shared/sub");
    sub.metadata = hour_windows();
    cfg.extra_exports = {ro, sub};
    make_dirs(shared_origin().export_dir() + "/shared/sub");
    gw = std::make_unique<Gateway>(cfg, dir.sub("gw"));
    ASSERT_NO_THROW(gw->start());
  }
  void TearDown() override {
    if (gw && gw->running()) {
      EXPECT_EQ(gw->stop(), 0) << gw->log();
    }
  }

  Handle root(const std::string& export_path) {
    auto m = mount_root(kGatewayPort, export_path);
    EXPECT_TRUE(m.transport_ok && m.status == 0) << export_path << ": " << m.error << " " << m.status << "\n"
                                                 << gw->log();
    return m.root;
  }

  TempDir dir{"coherency_changes"};
  GatewayConfig cfg;
  std::unique_ptr<Gateway> gw;
};

// Fault 3: /rw and /ro (and /sub) show the same origin objects.
TEST_F(Changes, AChangeThroughOneExportIsSeenAtOnceThroughEveryOther) {
  const std::string base = shared_origin().export_dir() + "/shared";
  write_file(base + "/grown", 5000);
  write_file(base + "/old", 10);
  write_file(base + "/sub/inner", 100);

  auto ro = connect_nfs(kGatewayPort, kUid, kGid);
  auto rw = connect_nfs(kGatewayPort, kUid, kGid);
  ASSERT_TRUE(ro && rw);
  // What /ro and /sub have cached before the changes.
  const Handle ro_dir = must_walk(*ro, root("/ro"), "shared");
  const Handle ro_grown = must_lookup(*ro, ro_dir, "grown");
  const Handle ro_old = must_lookup(*ro, ro_dir, "old");
  EXPECT_EQ(must_getattr(*ro, ro_grown, "grown through /ro").size, 5000u);
  EXPECT_EQ(must_getattr(*ro, ro_old, "old through /ro").size, 10u);
  EXPECT_EQ(ro->lookup(ro_dir, "new").status, kNfs3ErrNoent);
  EXPECT_EQ(names_of(ro->readdir_all(ro_dir)), (std::set<std::string>{".", "..", "grown", "old", "sub"}));
  const Handle sub_inner = must_lookup(*ro, root("/sub"), "inner");
  EXPECT_EQ(must_getattr(*ro, sub_inner, "inner through /sub").size, 100u);

  // The changes, through /rw.
  const Handle rw_dir = must_walk(*rw, root("/rw"), "shared");
  EXPECT_EQ(rw->write(must_lookup(*rw, rw_dir, "grown"), 5000, std::string(3000, 'y')).status, kNfs3Ok);
  EXPECT_EQ(rw->create(rw_dir, "new").status, kNfs3Ok);
  EXPECT_EQ(rw->remove(rw_dir, "old").status, kNfs3Ok);
  const Handle rw_sub = must_lookup(*rw, rw_dir, "sub");
  EXPECT_EQ(rw->write(must_lookup(*rw, rw_sub, "inner"), 100, std::string(50, 'z')).status, kNfs3Ok);

  // Seen at once through /ro and /sub.
  EXPECT_EQ(must_getattr(*ro, ro_grown, "grown through /ro after the write").size, 8000u);
  EXPECT_EQ(ro->lookup(ro_dir, "new").status, kNfs3Ok) << "a file created through /rw";
  EXPECT_EQ(ro->lookup(ro_dir, "old").status, kNfs3ErrNoent) << "a file removed through /rw";
  EXPECT_EQ(ro->getattr(ro_old).status, kNfs3ErrStale) << "a held handle of a file removed through /rw";
  EXPECT_EQ(names_of(ro->readdir_all(ro_dir)), (std::set<std::string>{".", "..", "grown", "new", "sub"}));
  EXPECT_EQ(must_getattr(*ro, sub_inner, "inner through /sub after the write").size, 150u);
}

// Fault 4: the object behind a name nfsgw never looked up.
TEST_F(Changes, RemovingOrReplacingAnUnknownHardLinkLeavesNoStaleLinkCount) {
  const std::string base = shared_origin().export_dir() + "/links";
  make_dirs(base + "/s");
  write_file(base + "/f", 10);
  write_file(base + "/f2", 10);
  write_file(base + "/other", 20);
  ASSERT_EQ(::link((base + "/f").c_str(), (base + "/s/g").c_str()), 0);
  ASSERT_EQ(::link((base + "/f2").c_str(), (base + "/s/g2").c_str()), 0);

  auto c = connect_nfs(kGatewayPort, kUid, kGid);
  ASSERT_TRUE(c);
  const Handle d = must_walk(*c, root("/rw"), "links");
  const Handle s = must_lookup(*c, d, "s");
  const Handle f = must_lookup(*c, d, "f");
  const Handle f2 = must_lookup(*c, d, "f2");
  ASSERT_EQ(must_getattr(*c, f, "f").nlink, 2u);
  ASSERT_EQ(must_getattr(*c, f2, "f2").nlink, 2u);

  // s/g and s/g2 are never looked up through nfsgw before they go.
  ASSERT_EQ(c->remove(s, "g").status, kNfs3Ok);
  EXPECT_EQ(must_getattr(*c, f, "f after its other name was removed").nlink, 1u);
  ASSERT_EQ(c->rename(d, "other", s, "g2").status, kNfs3Ok);
  EXPECT_EQ(must_getattr(*c, f2, "f2 after its other name was renamed over").nlink, 1u);
  // Through another export of the same tree, too.
  EXPECT_EQ(must_getattr(*c, must_walk(*c, root("/ro"), "links/f2"), "f2 through /ro").nlink, 1u);
}

// Fault 2: kill -9 as soon as the replies are in.
TEST_F(Changes, NoKillBringsBackTheStateBeforeAnAcknowledgedChange) {
  make_dirs(shared_origin().export_dir() + "/killed");
  // The failure this guards against was seen in 1 to 4 rounds of 10 to 20, with
  // one change a round; three changes a round make each round a better trap.
  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::string n = std::to_string(round);
    Handle gone, grown;
    {
      auto c = connect_nfs(kGatewayPort, kUid, kGid);
      ASSERT_TRUE(c);
      const Handle d = must_walk(*c, root("/rw"), "killed");
      // Cached before the changes: a file, a missing name, a file's size.
      ASSERT_EQ(c->create(d, "gone" + n).status, kNfs3Ok);
      ASSERT_EQ(c->create(d, "grown" + n).status, kNfs3Ok);
      gone = must_lookup(*c, d, "gone" + n);
      grown = must_lookup(*c, d, "grown" + n);
      ASSERT_EQ(must_getattr(*c, gone, "gone").size, 0u);
      ASSERT_EQ(must_getattr(*c, grown, "grown").size, 0u);
      ASSERT_EQ(c->lookup(d, "new" + n).status, kNfs3ErrNoent);
      // The changes; the gateway dies as soon as the last one is acknowledged.
      ASSERT_EQ(c->remove(d, "gone" + n).status, kNfs3Ok);
      ASSERT_EQ(c->create(d, "new" + n).status, kNfs3Ok);
      ASSERT_EQ(c->write(grown, 0, std::string(100, 'w')).status, kNfs3Ok);
      gw->kill9();
    }
    ASSERT_NO_THROW(gw->start());
    auto c = connect_nfs(kGatewayPort, kUid, kGid);
    ASSERT_TRUE(c);
    const Handle d = must_walk(*c, root("/rw"), "killed");
    EXPECT_EQ(c->lookup(d, "gone" + n).status, kNfs3ErrNoent) << "a removed file is back";
    EXPECT_EQ(c->getattr(gone).status, kNfs3ErrStale) << "a removed file's handle answers";
    EXPECT_EQ(c->lookup(d, "new" + n).status, kNfs3Ok) << "a created file is missing";
    EXPECT_EQ(must_getattr(*c, grown, "grown after the restart").size, 100u) << "a write is undone";
    if (HasFailure()) break;
  }
}

}  // namespace
