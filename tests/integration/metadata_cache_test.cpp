// The persistent metadata cache, end to end:
//   origin ganesha <- wan-emu relay (counts every call per procedure) <- nfsgw
//   (metadata cache on) <- libnfs raw clients.
// Every test states what a client's calls cost at the origin, read from the
// relay's per-procedure counters, and each has a positive control: a step where
// the counter must move, so a relay that counts nothing cannot pass a test.
//
// One nfsgw serves four exports of the same origin folder, one per coherency
// setting (each test works in its own directory below it):
//   /warm       consistency "ttl" with 10-minute windows (metadata_cache left
//               to its default, on): what is cached stays served for the whole test;
//   /ttl        attr_ttl and dir_ttl 3 s;
//   /strict     every GETATTR, and the directory's GETATTR before a cached
//               LOOKUP, asks the origin;
//   /immutable  1 s windows, which "immutable" ignores: only `nfsgw invalidate`
//               lets a change on the origin in.
// A second nfsgw (its own port and cache dir) is started by the tests that need
// other [cache] settings, or a node that shares the first one's secret.
//
// Changes "straight on the origin" are made through the origin's own NFS service
// (a client of ganesha, not of nfsgw): ganesha keeps attributes it has handed out
// for up to a minute, so a change made on its disk behind its back would not even
// be visible from ganesha itself within the short windows used here.
//
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <latch>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/raw_steps.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wan_relay.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kGetattr = nfs3_key(1);
const std::string kLookup = nfs3_key(3);
const std::string kAccess = nfs3_key(4);
const std::string kReadlink = nfs3_key(5);
const std::string kReaddirplus = nfs3_key(17);

constexpr std::uint32_t kNf3Dir = 2;

const std::string kWarm = "/warm";
const std::string kTtl = "/ttl";
const std::string kStrict = "/strict";
const std::string kImmutable = "/immutable";
constexpr auto kTtlWindow = seconds(3);        // attr_ttl and dir_ttl of /ttl
constexpr auto kImmutableWindow = seconds(1);  // attr_ttl and dir_ttl of /immutable (ignored)

struct Setup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<WanRelay> relay;
  std::unique_ptr<Gateway> gateway;
  std::string secret_file;  // shared with the second nfsgw of some tests
  std::string skip_reason;  // set when a binary is missing: every test fails
};

Setup& setup() {
  static Setup s;
  return s;
}

std::string relay_origin_url() {
  return "nfs://127.0.0.1" + setup().origin->export_dir() + "?nfsport=" + std::to_string(kMetaRelayNfsPort) +
         "&mountport=" + std::to_string(kMetaRelayMountPort);
}

ExportSettings cache_export(const std::string& path, const std::string& consistency,
                            std::map<std::string, std::string> durations) {
  ExportSettings e;
  e.export_path = path;
  e.metadata.consistency = consistency;
  e.metadata.durations = std::move(durations);
  return e;
}

std::string secs(std::chrono::seconds s) { return std::to_string(s.count()) + "s"; }

class MetaCacheEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto& s = setup();
    if (!nfsgw_binary()) {
      s.skip_reason = "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";
      return;
    }
    if (!wan_emu_binary()) {
      s.skip_reason = "wan-emu binary not found (build target wan-emu or set WAN_EMU_BIN)";
      return;
    }
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kMetaOriginNfsPort, kMetaOriginMountPort);
      s.origin->start();
      s.dir = std::make_unique<TempDir>("metacache");
      s.secret_file = s.dir->sub("secret");
      s.relay = std::make_unique<WanRelay>(
          std::vector<std::pair<std::uint16_t, std::uint16_t>>{{kMetaRelayNfsPort, kMetaOriginNfsPort},
                                                               {kMetaRelayMountPort, kMetaOriginMountPort}},
          kMetaRelayControlPort, s.dir->sub("relay.log"));
      GatewayConfig cfg;
      cfg.port = kMetaGatewayPort;
      cfg.origin_url = relay_origin_url();
      cfg.secret_file = s.secret_file;
      // The first export: metadata_cache not written, so it is on by default.
      cfg.export_path = kWarm;
      cfg.metadata.consistency = "ttl";
      cfg.metadata.durations = {
          {"attr_ttl", "10m"}, {"dir_ttl", "10m"}, {"negative_ttl", "10m"}, {"access_ttl", "10m"}};
      cfg.extra_exports = {
          cache_export(kTtl, "ttl", {{"attr_ttl", secs(kTtlWindow)}, {"dir_ttl", secs(kTtlWindow)}}),
          cache_export(kStrict, "strict", {}),
          cache_export(kImmutable, "immutable",
                       {{"attr_ttl", secs(kImmutableWindow)}, {"dir_ttl", secs(kImmutableWindow)}}),
      };
      s.gateway = std::make_unique<Gateway>(cfg, s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }

  void TearDown() override {
    auto& s = setup();
    if (s.gateway && s.gateway->running()) {
      int code = s.gateway->stop();
      EXPECT_EQ(code, 0) << "nfsgw did not stop cleanly on SIGTERM; log:\n" << s.gateway->log();
    }
    s.gateway.reset();
    s.relay.reset();
    s.dir.reset();
    s.origin.reset();  // stops ganesha, removes its directories
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new MetaCacheEnvironment);

Gateway& gw() { return *setup().gateway; }
WanRelay& relay() { return *setup().relay; }

std::string str(const RawFattr& a) {
  return "size " + std::to_string(a.size) + " mtime " + std::to_string(a.mtime_sec) + "." +
         std::to_string(a.mtime_nsec) + " fileid " + std::to_string(a.fileid);
}

ino_t disk_ino(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

/// The origin seen directly (ganesha's own port, not through the relay, so the
/// counters show only nfsgw's calls).
class OriginClient {
 public:
  explicit OriginClient(std::uint32_t uid = 0, std::uint32_t gid = 0) {
    auto m = mount_root(kMetaOriginMountPort, setup().origin->export_dir());
    if (!m.transport_ok || m.status != 0) {
      ADD_FAILURE() << "MNT at the origin: " << m.error << " status " << m.status;
      return;
    }
    root_ = m.root;
    conn_ = connect_nfs(kMetaOriginNfsPort, uid, gid);
  }
  bool ok() const { return conn_ != nullptr && !root_.empty(); }
  RawNfsConnection& conn() { return *conn_; }
  const Handle& root() const { return root_; }
  Handle handle(const std::string& rel_path) { return must_walk(*conn_, root_, rel_path); }

  /// Appends `data` to a file through the origin's NFS service (WRITE at its end):
  /// its size and mtime change. Returns the origin's attributes afterwards.
  RawFattr append(const std::string& rel_path, const std::string& data) {
    Handle fh = handle(rel_path);
    if (fh.empty()) return {};
    RawFattr before = must_getattr(*conn_, fh, "origin " + rel_path);
    wait_past_mtime(before, milliseconds(20));  // a visibly later mtime
    auto w = conn_->write(fh, before.size, data);
    if (!w.transport_ok || w.status != kNfs3Ok) {
      ADD_FAILURE() << "WRITE at the origin " << rel_path << ": " << w.error << " status " << w.status;
      return {};
    }
    RawFattr after = must_getattr(*conn_, fh, "origin " + rel_path);
    EXPECT_EQ(after.size, before.size + data.size()) << "the origin did not take the change";
    return after;
  }

 private:
  Handle root_;
  std::unique_ptr<RawNfsConnection> conn_;
};

/// Runs `nfsgw stats` and returns the rows of one export's table:
/// procedure -> column -> value ("calls", "hits", "misses", ...). The table is
/// the text format: a line "export PATH ...", a header line starting with
/// "procedure", one row per procedure with calls. Empty when not found.
std::map<std::string, std::map<std::string, long>> stats_rows(const std::string& text, const std::string& export_path) {
  std::map<std::string, std::map<std::string, long>> rows;
  std::istringstream in(text);
  bool in_export = false;
  std::vector<std::string> header;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<std::string> tok;
    for (std::string t; ls >> t;) tok.push_back(t);
    if (tok.empty()) {
      if (in_export) break;
      continue;
    }
    if (tok[0] == "export") {
      if (in_export) break;
      in_export = tok.size() > 1 && tok[1] == export_path;
      continue;
    }
    if (!in_export) continue;
    if (tok[0] == "procedure") {
      header = tok;
      continue;
    }
    auto& row = rows[tok[0]];
    for (std::size_t i = 1; i < tok.size() && i < header.size(); ++i) {
      if (row.count(header[i])) continue;  // "origin calls": keep the first "calls"
      try {
        row[header[i]] = std::stol(tok[i]);
      } catch (const std::exception&) {
      }
    }
  }
  return rows;
}

class MetaCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!setup().skip_reason.empty()) GTEST_FAIL() << setup().skip_reason;
    ASSERT_TRUE(setup().gateway && gw().running()) << "environment did not start";
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    // A fresh directory per run (--gtest_repeat keeps the origin's files and the
    // gateway's cache from one iteration to the next).
    static std::map<std::string, int> runs;
    const int run = ++runs[name];
    dir_name_ = "d_" + name + (run > 1 ? "_" + std::to_string(run) : "");
    disk_dir_ = setup().origin->export_dir() + "/" + dir_name_;
    make_dirs(disk_dir_);
  }

  void TearDown() override {
    if (HasFailure() && setup().gateway) {
      std::string log = gw().log();
      if (log.size() > 3000) {
        auto from = log.find('\n', log.size() - 3000);
        log = "...\n" + log.substr(from == std::string::npos ? log.size() - 3000 : from + 1);
      }
      std::cout << "nfsgw log (tail):\n" << log << "\n";
    }
  }

  /// MNT of an export at a gateway: its root handle (empty on failure).
  Handle root_of(const std::string& export_path, std::uint16_t port = kMetaGatewayPort) {
    auto m = mount_root(port, export_path);
    if (!m.transport_ok || m.status != 0) {
      ADD_FAILURE() << "MNT " << export_path << " at port " << port << ": " << m.error << " status " << m.status;
      return {};
    }
    return m.root;
  }

  /// This test's directory through `export_path` (LOOKUP from the export root).
  Handle test_dir(RawNfsConnection& c, const std::string& export_path) {
    Handle root = root_of(export_path);
    if (root.empty()) return {};
    return must_lookup(c, root, dir_name_);
  }

  void write_disk(const std::string& rel, const std::string& content) {
    write_text_file(disk_dir_ + "/" + rel, content);
  }

  void reset_counters() { ASSERT_TRUE(relay().reset()) << "wan-emu did not reset its counters"; }

  ProcCounts counters() {
    auto p = relay().procs();
    EXPECT_TRUE(p.has_value()) << "no procs in the relay's stats";
    return p.value_or(ProcCounts{});
  }

  std::string dir_name_, disk_dir_;
};

/// What one client's walk of a tree saw.
struct Walk {
  std::string error;  // the first problem, empty when the walk went through
  std::size_t dirs = 0, files = 0;
  std::map<std::string, std::uint64_t> fileids;  // relative path -> fileid (GETATTR)
  std::map<std::string, Handle> handles;         // relative path -> handle
  long ms = 0;
};

/// A client's walk of the tree at `top` (a directory handle): for every directory
/// ACCESS then READDIRPLUS (the whole listing), as a kernel client does before
/// it lists; then GETATTR of every entry, 32 in flight. Bounded: at most
/// `max_entries` entries.
Walk walk_tree(RawNfsConnection& c, const Handle& top, std::size_t max_entries = 200000) {
  Walk w;
  auto t0 = Clock::now();
  std::vector<std::pair<std::string, Handle>> dirs = {{"", top}};
  std::vector<std::string> paths;
  std::vector<Handle> handles;
  std::vector<std::uint64_t> expect_ids;
  for (std::size_t i = 0; i < dirs.size() && w.error.empty(); ++i) {
    const auto [path, dh] = dirs[i];
    auto a = c.access(dh, kAccessRead | kAccessLookup | kAccessExecute);
    if (!a.transport_ok || a.status != kNfs3Ok) {
      w.error = "ACCESS /" + path + ": " + (a.transport_ok ? "status " + std::to_string(a.status) : a.error);
      break;
    }
    auto l = c.readdirplus_all(dh);
    if (!l.transport_ok || l.status != kNfs3Ok) {
      w.error = "READDIRPLUS /" + path + ": " + (l.transport_ok ? "status " + std::to_string(l.status) : l.error);
      break;
    }
    for (const auto& e : l.entries) {
      if (e.name == "." || e.name == "..") continue;
      std::string rel = path.empty() ? e.name : path + "/" + e.name;
      Handle h = e.handle;
      if (h.empty()) {
        auto r = c.lookup(dh, e.name);  // a server may leave a handle out
        if (!r.transport_ok || r.status != kNfs3Ok) {
          w.error = "LOOKUP " + rel + " failed";
          break;
        }
        h = r.handle;
      }
      const bool is_dir = e.attr && e.attr->type == kNf3Dir;
      if (is_dir) {
        ++w.dirs;
        dirs.push_back({rel, h});
      } else {
        ++w.files;
      }
      paths.push_back(rel);
      handles.push_back(h);
      expect_ids.push_back(e.fileid);
      w.handles[rel] = h;
      if (paths.size() > max_entries) {
        w.error = "more than " + std::to_string(max_entries) + " entries";
        break;
      }
    }
  }
  if (w.error.empty()) {
    auto attrs = c.getattr_pipelined(handles, 32);
    for (std::size_t i = 0; i < attrs.size(); ++i) {
      const auto& a = attrs[i];
      if (!a.transport_ok || a.status != kNfs3Ok) {
        w.error = "GETATTR " + paths[i] + ": " + (a.transport_ok ? "status " + std::to_string(a.status) : a.error);
        break;
      }
      if (a.fileid != expect_ids[i]) {
        w.error = "GETATTR " + paths[i] + ": fileid " + std::to_string(a.fileid) + ", the listing said " +
                  std::to_string(expect_ids[i]);
        break;
      }
      w.fileids[paths[i]] = a.fileid;
    }
  }
  w.ms = std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
  return w;
}

// A second walk of a 5,000-entry tree (50 directories of 100 files) inside the
// window costs the origin nothing; nor does a third after nfsgw is killed with
// SIGKILL and restarted on the same cache dir (entries carry absolute expiry
// times). Positive control: the first walk, from a cold cache, reaches the origin.
TEST_F(MetaCache, WarmWalkOf5000EntriesCostsNoOriginCallEvenAfterKill9) {
  constexpr int kDirs = 50, kFiles = 100;
  for (int d = 0; d < kDirs; ++d) {
    std::string sub = "dir" + std::to_string(d);
    make_dirs(disk_dir_ + "/" + sub);
    for (int f = 0; f < kFiles; ++f) write_disk(sub + "/f" + std::to_string(f), std::to_string(d * 1000 + f));
  }
  auto c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  Handle root = root_of(kWarm);
  ASSERT_FALSE(root.empty());
  ASSERT_TRUE(c->access(root).status == kNfs3Ok);

  reset_counters();
  Handle top = must_lookup(*c, root, dir_name_);
  ASSERT_FALSE(top.empty());
  Walk first = walk_tree(*c, top);
  ASSERT_TRUE(first.error.empty()) << first.error;
  EXPECT_EQ(first.dirs, static_cast<std::size_t>(kDirs));
  EXPECT_EQ(first.files, static_cast<std::size_t>(kDirs * kFiles));
  EXPECT_EQ(first.fileids["dir7/f42"], disk_ino(disk_dir_ + "/dir7/f42"));
  auto cold = counters();
  EXPECT_GE(calls_of(cold, kReaddirplus), kDirs + 1) << "positive control: the cold walk lists at the origin; "
                                                      << describe(cold);
  EXPECT_GT(nfs3_calls(cold), 0) << describe(cold);

  reset_counters();
  ASSERT_FALSE(must_lookup(*c, root, dir_name_).empty());
  Walk warm = walk_tree(*c, top);
  ASSERT_TRUE(warm.error.empty()) << warm.error;
  EXPECT_TRUE(warm.fileids == first.fileids) << "the warm walk saw other entries than the cold one";
  auto warm_calls = counters();
  EXPECT_EQ(nfs3_calls(warm_calls), 0) << "the warm walk reached the origin: " << describe(warm_calls);

  // A crash: nothing flushed, nothing closed. Then the same config and cache dir.
  c.reset();
  EXPECT_EQ(gw().kill9(), 128 + SIGKILL);
  try {
    gw().start();
  } catch (const std::exception& e) {
    FAIL() << "nfsgw did not restart after kill -9 on the same cache dir: " << e.what();
  }
  reset_counters();
  Handle root2 = root_of(kWarm);
  EXPECT_EQ(root2, root) << "the export root handle changed across the restart";
  c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->access(root2).status == kNfs3Ok);
  Handle top2 = must_lookup(*c, root2, dir_name_);
  EXPECT_EQ(top2, top);
  Walk after = walk_tree(*c, top2);
  ASSERT_TRUE(after.error.empty()) << after.error;
  EXPECT_TRUE(after.fileids == first.fileids) << "the walk after the restart saw other entries";
  EXPECT_TRUE(after.handles == first.handles) << "handles changed across the restart";
  auto restarted = counters();
  // Only NFSv3 calls are clients' calls: nfsgw's own MNT of the origin's root at
  // start-up (MOUNT, 100005) is not.
  EXPECT_EQ(nfs3_calls(restarted), 0) << "the walk after kill -9 and restart reached the origin: "
                                      << describe(restarted);
  std::cout << "[ measure  ] walk of " << first.files + first.dirs << " entries: cold " << first.ms << " ms, warm "
            << warm.ms << " ms, after kill -9 + restart " << after.ms << " ms\n";
}

// consistency "ttl": a change made on the origin is not seen inside attr_ttl (the
// cached attributes are answered, no origin GETATTR) and is seen once the window
// has ended (one GETATTR revalidates: the positive control).
TEST_F(MetaCache, TtlOriginChangeSeenAfterAttrTtlNotBefore) {
  write_disk("f", "v1");
  OriginClient origin;
  ASSERT_TRUE(origin.ok());
  auto c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  Handle dir = test_dir(*c, kTtl);
  ASSERT_FALSE(dir.empty());
  const auto cached_at = Clock::now();  // the window starts at the fetch, not before
  Handle f = must_lookup(*c, dir, "f");
  ASSERT_FALSE(f.empty());
  RawFattr old_attr = must_getattr(*c, f, "f");
  const auto refreshed_at = Clock::now();  // the window started by then at the latest
  ASSERT_EQ(old_attr.size, 2u);

  RawFattr changed = origin.append(dir_name_ + "/f", "-changed on the origin");
  ASSERT_NE(changed.size, old_attr.size);

  reset_counters();
  RawFattr inside = must_getattr(*c, f, "f inside the window");
  auto inside_calls = counters();
  const auto elapsed = Clock::now() - cached_at;
  if (elapsed < kTtlWindow) {
    EXPECT_EQ(inside, old_attr) << "a change on the origin was seen inside attr_ttl: " << str(inside);
    EXPECT_EQ(calls_of(inside_calls, kGetattr), 0) << "GETATTR inside attr_ttl asked the origin; "
                                                   << describe(inside_calls);
  } else {
    ADD_FAILURE() << "inconclusive: the machine took "
                  << std::chrono::duration_cast<milliseconds>(elapsed).count() << " ms, longer than attr_ttl";
  }

  nfsgw::test::wait_past(refreshed_at + kTtlWindow + milliseconds(700));
  reset_counters();
  RawFattr after = must_getattr(*c, f, "f after the window");
  auto after_calls = counters();
  EXPECT_EQ(after.size, changed.size) << "the change was not seen after attr_ttl: " << str(after);
  EXPECT_EQ(after.mtime_sec, changed.mtime_sec);
  EXPECT_EQ(after.mtime_nsec, changed.mtime_nsec);
  EXPECT_GE(calls_of(after_calls, kGetattr), 1) << "positive control: the ended window asks the origin; "
                                                << describe(after_calls);
  // ...and the fresh answer opens a new window.
  reset_counters();
  EXPECT_EQ(must_getattr(*c, f, "f again"), after);
  auto again = counters();
  EXPECT_EQ(calls_of(again, kGetattr), 0) << describe(again);
}

// consistency "strict": every GETATTR asks the origin, so a change on the origin
// is seen on the very next call; a cached LOOKUP is answered after one GETATTR of
// its directory shows the directory unchanged, and a name created on the origin
// is found at once even after it was looked up and missing.
TEST_F(MetaCache, StrictSeesOriginChangeOnTheNextCall) {
  write_disk("f", "v1");
  OriginClient origin;
  ASSERT_TRUE(origin.ok());
  auto c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  Handle dir = test_dir(*c, kStrict);
  ASSERT_FALSE(dir.empty());
  ASSERT_EQ(c->access(dir).status, kNfs3Ok);
  Handle f = must_lookup(*c, dir, "f");
  ASSERT_FALSE(f.empty());
  RawFattr old_attr = must_getattr(*c, f, "f");
  ASSERT_EQ(c->lookup(dir, "g").status, kNfs3ErrNoent);

  reset_counters();
  EXPECT_EQ(must_getattr(*c, f, "f"), old_attr);
  EXPECT_EQ(must_getattr(*c, f, "f"), old_attr);
  auto two = counters();
  EXPECT_EQ(calls_of(two, kGetattr), 2) << "under strict every GETATTR asks the origin; " << describe(two);

  RawFattr changed = origin.append(dir_name_ + "/f", "-changed on the origin");
  RawFattr next = must_getattr(*c, f, "f after the change");
  EXPECT_EQ(next.size, changed.size) << "strict: the next GETATTR must see the origin's change; " << str(next);
  EXPECT_EQ(next.mtime_sec, changed.mtime_sec);
  EXPECT_EQ(next.mtime_nsec, changed.mtime_nsec);

  reset_counters();
  auto again = c->lookup(dir, "f");
  ASSERT_EQ(again.status, kNfs3Ok);
  EXPECT_EQ(again.handle, f);
  auto lookup_calls = counters();
  EXPECT_GE(calls_of(lookup_calls, kGetattr), 1) << "strict: the directory's GETATTR precedes a cached LOOKUP; "
                                                 << describe(lookup_calls);
  EXPECT_EQ(calls_of(lookup_calls, kLookup), 0)
      << "the directory is unchanged: its cached LOOKUP should be reused; " << describe(lookup_calls);

  // A name created on the origin changes the directory: found on the next LOOKUP.
  auto g = origin.conn().create(origin.handle(dir_name_), "g");
  ASSERT_EQ(g.status, kNfs3Ok) << g.error;
  auto found = c->lookup(dir, "g");
  EXPECT_EQ(found.status, kNfs3Ok) << "strict: a name created on the origin was not found";
  EXPECT_EQ(found.fileid, disk_ino(disk_dir_ + "/g"));
}

// consistency "immutable": a change on the origin is never seen, even long after
// the export's windows, until `nfsgw invalidate` drops the entry (one path, then a
// tree with --recursive).
TEST_F(MetaCache, ImmutableIgnoresOriginChangesUntilInvalidate) {
  write_disk("f", "v1");
  make_dirs(disk_dir_ + "/sub");
  write_disk("sub/g", "v1");
  OriginClient origin;
  ASSERT_TRUE(origin.ok());
  auto c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  Handle dir = test_dir(*c, kImmutable);
  ASSERT_FALSE(dir.empty());
  Handle f = must_lookup(*c, dir, "f");
  Handle g = must_walk(*c, dir, "sub/g");
  ASSERT_FALSE(f.empty());
  ASSERT_FALSE(g.empty());
  RawFattr old_f = must_getattr(*c, f, "f");
  RawFattr old_g = must_getattr(*c, g, "sub/g");

  RawFattr new_f = origin.append(dir_name_ + "/f", "-changed");
  RawFattr new_g = origin.append(dir_name_ + "/sub/g", "-changed too");
  nfsgw::test::wait_past(Clock::now() + kImmutableWindow * 2 + milliseconds(500));  // long after the windows

  reset_counters();
  EXPECT_EQ(must_getattr(*c, f, "f"), old_f) << "immutable: an origin change came through";
  EXPECT_EQ(must_getattr(*c, g, "sub/g"), old_g) << "immutable: an origin change came through";
  auto none = counters();
  EXPECT_EQ(calls_of(none, kGetattr), 0) << "immutable entries were revalidated; " << describe(none);

  auto inv = gw().cli("invalidate", {kImmutable + "/" + dir_name_ + "/f"});
  ASSERT_EQ(inv.exit_code, 0) << "nfsgw invalidate: " << inv.output;
  reset_counters();
  RawFattr f_after = must_getattr(*c, f, "f after invalidate");
  EXPECT_EQ(f_after.size, new_f.size) << "invalidate did not let the change in: " << str(f_after);
  EXPECT_EQ(f_after.mtime_nsec, new_f.mtime_nsec);
  EXPECT_EQ(must_getattr(*c, g, "sub/g"), old_g) << "invalidating f dropped sub/g too";
  auto one = counters();
  EXPECT_GE(calls_of(one, kGetattr), 1) << "positive control: the invalidated entry is fetched; " << describe(one);

  auto rec = gw().cli("invalidate", {kImmutable + "/" + dir_name_, "--recursive"});
  ASSERT_EQ(rec.exit_code, 0) << "nfsgw invalidate --recursive: " << rec.output;
  RawFattr g_after = must_getattr(*c, g, "sub/g after invalidate --recursive");
  EXPECT_EQ(g_after.size, new_g.size) << "invalidate --recursive did not reach sub/g: " << str(g_after);
}

// A missing name looked up twice costs one origin LOOKUP: the second answer is the
// cached "no such name" (negative_ttl).
TEST_F(MetaCache, MissingNameLookedUpTwiceCostsOneOriginLookup) {
  write_disk("present", "x");
  auto c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  Handle dir = test_dir(*c, kWarm);
  ASSERT_FALSE(dir.empty());
  ASSERT_EQ(c->access(dir).status, kNfs3Ok);

  reset_counters();
  auto first = c->lookup(dir, "absent");
  ASSERT_TRUE(first.transport_ok) << first.error;
  EXPECT_EQ(first.status, kNfs3ErrNoent);
  auto once = counters();
  EXPECT_EQ(calls_of(once, kLookup), 1) << "positive control: the first LOOKUP asks the origin; " << describe(once);
  auto second = c->lookup(dir, "absent");
  ASSERT_TRUE(second.transport_ok) << second.error;
  EXPECT_EQ(second.status, kNfs3ErrNoent);
  auto twice = counters();
  EXPECT_EQ(calls_of(twice, kLookup), 1) << "the second LOOKUP of a missing name reached the origin; "
                                         << describe(twice);
  // The existing name still resolves.
  EXPECT_EQ(c->lookup(dir, "present").status, kNfs3Ok);
}

// 100 GETATTRs of one cold handle at once cost one origin GETATTR, whether they
// come pipelined on one connection or from four connections together. The handles
// come from a second nfsgw sharing the first one's secret and export path (nodes
// sharing the secret issue the same handles), so the first nfsgw has never seen
// them: nothing of them is cached.
TEST_F(MetaCache, ConcurrentGetattrsOfAColdHandleCostOneOriginCall) {
  write_disk("f1", "one");
  write_disk("f2", "two!");
  Handle h1, h2;
  {
    TempDir dir("metacache-node2");
    GatewayConfig cfg;
    cfg.port = kMetaSecondGatewayPort;
    cfg.origin_url = setup().origin->url();  // straight to the origin: not counted
    cfg.export_path = kWarm;
    cfg.secret_file = setup().secret_file;
    cfg.metadata.enabled = false;
    Gateway node2(cfg, dir.sub("gw"));
    try {
      node2.start();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    auto c2 = connect_nfs(kMetaSecondGatewayPort);
    ASSERT_TRUE(c2);
    Handle root2 = root_of(kWarm, kMetaSecondGatewayPort);
    ASSERT_FALSE(root2.empty());
    Handle d = must_lookup(*c2, root2, dir_name_);
    ASSERT_FALSE(d.empty());
    h1 = must_lookup(*c2, d, "f1");
    h2 = must_lookup(*c2, d, "f2");
    ASSERT_FALSE(h1.empty() || h2.empty());
    EXPECT_EQ(node2.stop(), 0);
  }
  const auto ino1 = disk_ino(disk_dir_ + "/f1"), ino2 = disk_ino(disk_dir_ + "/f2");

  // One connection, 100 in flight.
  auto c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  reset_counters();
  auto attrs = c->getattr_pipelined(std::vector<Handle>(100, h1), 100);
  for (const auto& a : attrs) {
    ASSERT_TRUE(a.transport_ok) << a.error;
    ASSERT_EQ(a.status, kNfs3Ok) << "the node-shared handle was refused";
    EXPECT_EQ(a.fileid, ino1);
    EXPECT_EQ(a.size, 3u);
  }
  auto pipelined = counters();
  EXPECT_EQ(calls_of(pipelined, kGetattr), 1) << "100 pipelined GETATTRs of a cold handle; " << describe(pipelined);

  // Four connections, 25 in flight each, released together.
  constexpr int kConns = 4, kEach = 25;
  std::vector<std::unique_ptr<RawNfsConnection>> conns;
  for (int i = 0; i < kConns; ++i) {
    conns.push_back(connect_nfs(kMetaGatewayPort));
    ASSERT_TRUE(conns.back());
  }
  reset_counters();
  std::latch go(kConns + 1);
  std::vector<std::vector<RawAttr>> results(kConns);
  std::vector<std::thread> threads;
  for (int i = 0; i < kConns; ++i) {
    threads.emplace_back([&, i] {
      go.arrive_and_wait();
      results[static_cast<std::size_t>(i)] =
          conns[static_cast<std::size_t>(i)]->getattr_pipelined(std::vector<Handle>(kEach, h2), kEach);
    });
  }
  go.arrive_and_wait();
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    ASSERT_EQ(r.size(), static_cast<std::size_t>(kEach));
    for (const auto& a : r) {
      ASSERT_TRUE(a.transport_ok) << a.error;
      ASSERT_EQ(a.status, kNfs3Ok);
      EXPECT_EQ(a.fileid, ino2);
    }
  }
  auto spread = counters();
  EXPECT_EQ(calls_of(spread, kGetattr), 1) << kConns << " connections x " << kEach
                                           << " GETATTRs of a cold handle; " << describe(spread);
}

/// The names a READDIRPLUS listing holds (without "." and "..").
std::vector<std::string> names_of(const RawReaddirPlus& l) {
  std::vector<std::string> out;
  for (const auto& e : l.entries) {
    if (e.name != "." && e.name != "..") out.push_back(e.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file created, renamed and removed through nfsgw by client A is seen at once,
// by LOOKUP and READDIRPLUS, by client B of the same nfsgw, inside the window (the
// cache follows every change that goes through it). Positive control: B's repeated
// listing and lookups before the changes are answered from the cache.
TEST_F(MetaCache, ChangesThroughNfsgwAreSeenAtOnceByAnotherClient) {
  write_disk("keep", "k");
  auto a = connect_nfs(kMetaGatewayPort);
  auto b = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(a && b);
  Handle dir_a = test_dir(*a, kWarm);
  Handle dir = test_dir(*b, kWarm);
  ASSERT_FALSE(dir.empty());
  ASSERT_EQ(dir_a, dir);
  using Names = std::vector<std::string>;

  auto b_view = [&](const char* when) {
    auto l = b->readdirplus_all(dir);
    EXPECT_EQ(l.status, kNfs3Ok) << when << ": " << l.error;
    auto n = b->lookup(dir, "new");
    auto m = b->lookup(dir, "moved");
    EXPECT_TRUE(n.transport_ok && m.transport_ok) << when;
    return std::make_tuple(names_of(l), n, m);
  };

  ASSERT_EQ(b->access(dir).status, kNfs3Ok);
  auto [names0, n0, m0] = b_view("warming");
  EXPECT_EQ(names0, Names{"keep"});
  EXPECT_EQ(n0.status, kNfs3ErrNoent);
  EXPECT_EQ(m0.status, kNfs3ErrNoent);
  reset_counters();
  auto [names1, n1, m1] = b_view("warm");
  EXPECT_EQ(names1, Names{"keep"});
  auto warm = counters();
  EXPECT_EQ(calls_of(warm, kReaddirplus) + calls_of(warm, kLookup), 0)
      << "positive control: B's repeated listing and lookups should come from the cache; " << describe(warm);

  auto created = a->create(dir, "new");
  ASSERT_EQ(created.status, kNfs3Ok) << created.error;
  ASSERT_TRUE(created.attr.has_value());
  const auto id = created.attr->fileid;
  {
    auto [names, n, m] = b_view("after CREATE");
    EXPECT_EQ(names, (Names{"keep", "new"})) << "B's listing missed A's CREATE";
    EXPECT_EQ(n.status, kNfs3Ok) << "B's LOOKUP missed A's CREATE";
    EXPECT_EQ(n.fileid, id);
    EXPECT_EQ(m.status, kNfs3ErrNoent);
  }

  ASSERT_EQ(a->rename(dir, "new", dir, "moved").status, kNfs3Ok);
  {
    auto [names, n, m] = b_view("after RENAME");
    EXPECT_EQ(names, (Names{"keep", "moved"})) << "B's listing missed A's RENAME";
    EXPECT_EQ(n.status, kNfs3ErrNoent) << "B still finds the old name after A's RENAME";
    EXPECT_EQ(m.status, kNfs3Ok) << "B does not find the new name after A's RENAME";
    EXPECT_EQ(m.fileid, id);
  }

  ASSERT_EQ(a->remove(dir, "moved").status, kNfs3Ok);
  {
    auto [names, n, m] = b_view("after REMOVE");
    EXPECT_EQ(names, Names{"keep"}) << "B's listing missed A's REMOVE";
    EXPECT_EQ(n.status, kNfs3ErrNoent);
    EXPECT_EQ(m.status, kNfs3ErrNoent) << "B still finds a removed name";
  }
  EXPECT_EQ(disk_ino(disk_dir_ + "/moved"), 0u);
}

// A warm cache never answers a caller the origin would refuse: root warms a
// directory (mode 0700, owner root) with a file and a symlink (ACCESS, LOOKUP,
// READDIRPLUS, READLINK, a missing name); then uid 1000 gets through nfsgw exactly
// the statuses the origin gives uid 1000 (NFS3ERR_ACCES for LOOKUP and
// READDIRPLUS), and the same ACCESS bits. Positive control: root's repeated calls
// are answered from the cache.
TEST_F(MetaCache, WarmCacheKeepsTheOriginsPermissions) {
  const std::string priv = disk_dir_ + "/priv";
  make_dirs(priv);
  write_text_file(priv + "/file", "secret");
  ASSERT_EQ(::symlink("file", (priv + "/link").c_str()), 0);
  ASSERT_EQ(::chown(priv.c_str(), 0, 0), 0);
  ASSERT_EQ(::chmod(priv.c_str(), 0700), 0);

  auto root_c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(root_c);
  Handle dir = test_dir(*root_c, kWarm);
  ASSERT_FALSE(dir.empty());
  ASSERT_EQ(root_c->access(dir).status, kNfs3Ok);
  Handle p = must_lookup(*root_c, dir, "priv");
  ASSERT_FALSE(p.empty());
  ASSERT_EQ(root_c->access(p).status, kNfs3Ok);
  Handle link = must_lookup(*root_c, p, "link");
  ASSERT_FALSE(link.empty());
  // nfsgw answers a cached link target to a credential whose READ permission on
  // the link is known from an ACCESS answer: root asks it once, as a client may.
  ASSERT_EQ(root_c->access(link).status, kNfs3Ok);
  auto root_calls = [&] {
    EXPECT_EQ(root_c->lookup(p, "file").status, kNfs3Ok);
    EXPECT_EQ(root_c->lookup(p, "nothere").status, kNfs3ErrNoent);
    auto l = root_c->readdirplus_all(p);
    EXPECT_EQ(l.status, kNfs3Ok);
    EXPECT_EQ(names_of(l), (std::vector<std::string>{"file", "link"}));
    auto r = root_c->readlink(link);
    EXPECT_EQ(r.status, kNfs3Ok);
    EXPECT_EQ(r.target, "file");
  };
  root_calls();
  reset_counters();
  root_calls();
  auto warm = counters();
  EXPECT_EQ(calls_of(warm, kLookup) + calls_of(warm, kReaddirplus) + calls_of(warm, kReadlink), 0)
      << "positive control: root's repeated calls should come from the cache; " << describe(warm);

  // The origin's own answers to uid 1000, with the origin's handles.
  OriginClient as_root;
  ASSERT_TRUE(as_root.ok());
  Handle op = as_root.handle(dir_name_ + "/priv");
  Handle olink = must_lookup(as_root.conn(), op, "link");
  ASSERT_FALSE(op.empty() || olink.empty());
  auto o = connect_nfs(kMetaOriginNfsPort, 1000, 1000);
  ASSERT_TRUE(o);
  const auto o_lookup = o->lookup(op, "file");
  const auto o_missing = o->lookup(op, "nothere");
  const auto o_list = o->readdirplus_all(op);
  const auto o_link = o->readlink(olink);
  const auto o_access = o->access(op);
  ASSERT_TRUE(o_lookup.transport_ok && o_missing.transport_ok && o_list.transport_ok && o_link.transport_ok &&
              o_access.transport_ok);
  std::cout << "[ measure  ] origin to uid 1000: LOOKUP " << o_lookup.status << ", missing name " << o_missing.status
            << ", READDIRPLUS " << o_list.status << ", READLINK " << o_link.status << ", ACCESS " << o_access.status
            << " granted 0x" << std::hex << o_access.granted << std::dec << "\n";
  // The set-up is meaningful only if the origin refuses uid 1000.
  ASSERT_EQ(o_lookup.status, kNfs3ErrAcces) << "the origin lets uid 1000 into a 0700 root directory";
  ASSERT_EQ(o_list.status, kNfs3ErrAcces);

  auto u = connect_nfs(kMetaGatewayPort, 1000, 1000);
  ASSERT_TRUE(u);
  for (int round = 1; round <= 2; ++round) {
    SCOPED_TRACE("uid 1000, round " + std::to_string(round));
    auto g_lookup = u->lookup(p, "file");
    auto g_missing = u->lookup(p, "nothere");
    auto g_list = u->readdirplus_all(p);
    auto g_link = u->readlink(link);
    auto g_access = u->access(p);
    ASSERT_TRUE(g_lookup.transport_ok && g_missing.transport_ok && g_list.transport_ok && g_link.transport_ok &&
                g_access.transport_ok);
    EXPECT_EQ(g_lookup.status, o_lookup.status) << "LOOKUP in the 0700 directory";
    EXPECT_TRUE(g_lookup.handle.empty()) << "a handle leaked to uid 1000";
    EXPECT_EQ(g_missing.status, o_missing.status) << "LOOKUP of a missing name in the 0700 directory";
    EXPECT_EQ(g_list.status, o_list.status) << "READDIRPLUS of the 0700 directory";
    EXPECT_TRUE(g_list.entries.empty()) << "names leaked to uid 1000";
    EXPECT_EQ(g_link.status, o_link.status) << "READLINK of the link in the 0700 directory";
    if (g_link.status == kNfs3Ok) {
      EXPECT_EQ(g_link.target, o_link.target);
    }
    EXPECT_EQ(g_access.status, o_access.status);
    EXPECT_EQ(g_access.granted, o_access.granted) << "ACCESS bits for uid 1000";
  }
}

/// "evicted: N from memory" in `nfsgw stats`; nullopt when the line is missing.
std::optional<long> memory_evictions(const std::string& stats) {
  static const std::regex re(R"(evicted:\s*(\d+)\s+from memory)");
  std::smatch m;
  if (!std::regex_search(stats, m, re)) return std::nullopt;
  return std::stol(m[1]);
}

// Eviction never stales a handle: a second nfsgw with [cache] memory_mb = 16 and
// metadata_max_gb = 1 (the smallest) is filled with directories of 1,000 files
// until its stats report evictions from memory (at most 100,000 files); the
// handles taken before (the export root, the test directory, an early file, every
// entry of the first directory) still answer GETATTR, and LOOKUP gives the same
// handle again: no NFS3ERR_STALE or BADHANDLE. Positive control: evictions happened.
TEST_F(MetaCache, EvictionNeverStalesAHandle) {
  TempDir tmp("metacache-small");
  GatewayConfig cfg;
  cfg.port = kMetaSecondGatewayPort;
  cfg.origin_url = setup().origin->url();  // straight to the origin: nothing here is counted
  cfg.export_path = "/small";
  cfg.memory_mb = 16;
  cfg.metadata_max_gb = 1;
  cfg.metadata.durations = {{"attr_ttl", "10m"}, {"dir_ttl", "10m"}, {"access_ttl", "10m"}};
  Gateway small(cfg, tmp.sub("gw"));
  try {
    small.start();
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  write_disk("early", "e");
  auto c = connect_nfs(kMetaSecondGatewayPort);
  ASSERT_TRUE(c);
  Handle root = root_of("/small", kMetaSecondGatewayPort);
  ASSERT_FALSE(root.empty());
  Handle dir = must_lookup(*c, root, dir_name_);
  ASSERT_FALSE(dir.empty());
  Handle early = must_lookup(*c, dir, "early");
  ASSERT_FALSE(early.empty());
  const RawFattr root_attr = must_getattr(*c, root, "root");
  const RawFattr early_attr = must_getattr(*c, early, "early");

  constexpr int kPerDir = 1000, kMaxDirs = 100, kRound = 10;
  const auto fill_deadline = Clock::now() + std::chrono::minutes(6);
  std::vector<Handle> first_dir_handles;
  int dirs = 0;
  std::optional<long> evicted;
  std::string stats;
  bool extra_round_done = false;
  while (dirs < kMaxDirs && Clock::now() < fill_deadline) {
    for (int r = 0; r < kRound; ++r, ++dirs) {
      const std::string sub = "fill" + std::to_string(dirs);
      make_dirs(disk_dir_ + "/" + sub);
      for (int f = 0; f < kPerDir; ++f) write_disk(sub + "/entry-with-a-longish-name-" + std::to_string(f), "x");
      Handle sh = must_lookup(*c, dir, sub);
      ASSERT_FALSE(sh.empty());
      Walk w = walk_tree(*c, sh);
      ASSERT_TRUE(w.error.empty()) << sub << ": " << w.error;
      ASSERT_EQ(w.files, static_cast<std::size_t>(kPerDir));
      if (dirs == 0) {
        for (const auto& [name, h] : w.handles) first_dir_handles.push_back(h);
      }
    }
    auto s = small.cli("stats");
    stats = s.output;
    evicted = memory_evictions(stats);
    if (evicted && *evicted > 0) {
      if (extra_round_done) break;
      extra_round_done = true;  // one more round after the first evictions
    }
  }
  std::cout << "[ measure  ] filled " << dirs * kPerDir << " files; nfsgw stats:\n" << stats << "\n";
  EXPECT_TRUE(evicted.has_value()) << "no \"evicted: N from memory\" in nfsgw stats:\n" << stats;
  EXPECT_GT(evicted.value_or(0), 0) << "positive control: the fill did not evict anything from memory";

  auto check = [&](const Handle& h, const char* what, std::optional<RawFattr> expect) {
    auto a = c->getattr(h);
    ASSERT_TRUE(a.transport_ok) << what << ": " << a.error;
    EXPECT_NE(a.status, kNfs3ErrStale) << what << ": an old handle went STALE";
    EXPECT_NE(a.status, kNfs3BadHandle) << what << ": an old handle became BADHANDLE";
    EXPECT_EQ(a.status, kNfs3Ok) << what;
    if (expect) {
      EXPECT_EQ(a.fileid, expect->fileid) << what;
    }
  };
  check(root, "the export root", root_attr);
  check(dir, "the test directory", std::nullopt);
  check(early, "the early file", early_attr);
  auto again = c->lookup(dir, "early");
  EXPECT_EQ(again.status, kNfs3Ok);
  EXPECT_EQ(again.handle, early) << "LOOKUP gave another handle for the early file";
  auto olds = c->getattr_pipelined(first_dir_handles, 32);
  long bad = 0;
  for (const auto& a : olds) bad += (!a.transport_ok || a.status != kNfs3Ok) ? 1 : 0;
  EXPECT_EQ(bad, 0) << bad << " of " << olds.size() << " handles of the first directory no longer answer";
  EXPECT_EQ(small.stop(), 0) << small.log();
}

// `nfsgw stats` prints per-procedure counters of each export: after a warm walk
// its READDIRPLUS and GETATTR rows show hits, grown by at least the walk's calls.
TEST_F(MetaCache, StatsShowHitsAfterAWarmWalk) {
  constexpr int kFiles = 20;
  for (int i = 0; i < kFiles; ++i) write_disk("s" + std::to_string(i), "x");
  auto c = connect_nfs(kMetaGatewayPort);
  ASSERT_TRUE(c);
  Handle dir = test_dir(*c, kWarm);
  ASSERT_FALSE(dir.empty());
  Walk cold = walk_tree(*c, dir);
  ASSERT_TRUE(cold.error.empty()) << cold.error;

  auto before = gw().cli("stats");
  ASSERT_EQ(before.exit_code, 0) << "nfsgw stats: " << before.output;
  Walk warm = walk_tree(*c, dir);
  ASSERT_TRUE(warm.error.empty()) << warm.error;
  auto after = gw().cli("stats");
  ASSERT_EQ(after.exit_code, 0) << "nfsgw stats: " << after.output;
  std::cout << "nfsgw stats after the warm walk:\n" << after.output;

  auto rows_before = stats_rows(before.output, kWarm);
  auto rows_after = stats_rows(after.output, kWarm);
  ASSERT_FALSE(rows_after.empty()) << "no per-procedure rows for export " << kWarm << " in:\n" << after.output;
  for (const auto& [proc, min_hits] : std::map<std::string, long>{{"GETATTR", kFiles}, {"READDIRPLUS", 1}}) {
    ASSERT_TRUE(rows_after.count(proc)) << "no " << proc << " row in:\n" << after.output;
    ASSERT_TRUE(rows_after[proc].count("hits")) << "no hits column for " << proc << " in:\n" << after.output;
    const long hits = rows_after[proc]["hits"];
    const long hits_before = rows_before.count(proc) ? rows_before[proc]["hits"] : 0;
    EXPECT_GT(hits, 0) << proc;
    EXPECT_GE(hits - hits_before, min_hits) << proc << " hits grew by " << hits - hits_before
                                            << " over a warm walk; stats:\n" << after.output;
  }
}

}  // namespace
