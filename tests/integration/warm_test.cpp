// `nfsgw warm` and `nfsgw exports` end to end:
//   origin ganesha <- wan-emu relay (10 ms each way: 20 ms RTT; counts every call
//   and the bytes coming back) <- nfsgw <- the `nfsgw warm` CLI, then a second
//   client (libnfs raw) that walks or reads what was warmed.
// Acceptance (issue 9): after a warm of a 5,000-entry tree, a second client's walk
// makes no origin call; after a warm with --data, reading every file moves under
// 1% of the files' bytes across the link. Each test has a positive control: the
// warm itself must reach the origin (a relay that counts nothing cannot pass).
//
// The export squashes every caller to the anonymous ids, which is also who a warm
// walks as by default (no warm_uid/warm_gid): the permissions the warm learns
// are the second client's.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <tuple>
#include <string>
#include <vector>

#include "tests/support/file_digest.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/raw_steps.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wan_relay.h"

namespace {

using namespace integ;
using Clock = std::chrono::steady_clock;

const std::string kExport = "/warm";
const std::string kReaddirplus = nfs3_key(17);
const std::string kRead = nfs3_key(6);
constexpr std::uint32_t kNf3Dir = 2;

struct Setup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<WanRelay> relay;
  std::unique_ptr<Gateway> gateway;
  std::string skip_reason;
};

Setup& setup() {
  static Setup s;
  return s;
}

class WarmEnvironment : public ::testing::Environment {
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
      s.origin = std::make_unique<GaneshaOrigin>(kWarmOriginNfsPort, kWarmOriginMountPort);
      s.origin->start();
      s.dir = std::make_unique<TempDir>("warm");
      s.relay = std::make_unique<WanRelay>(
          std::vector<std::pair<std::uint16_t, std::uint16_t>>{{kWarmRelayNfsPort, kWarmOriginNfsPort},
                                                               {kWarmRelayMountPort, kWarmOriginMountPort}},
          kWarmRelayControlPort, s.dir->sub("relay.log"));
      bool ok = false;
      const std::string answer = s.relay->ctl({"delay", "10"}, &ok);  // one way: 20 ms RTT
      if (!ok) throw std::runtime_error("wan-emu refused the delay: " + answer);
      GatewayConfig cfg;
      cfg.port = kWarmGatewayPort;
      cfg.origin_url = "nfs://127.0.0.1" + s.origin->export_dir() + "?nfsport=" + std::to_string(kWarmRelayNfsPort) +
                       "&mountport=" + std::to_string(kWarmRelayMountPort);
      cfg.export_path = kExport;
      cfg.squash = "all";
      cfg.upstream_connections = 4;
      cfg.metadata.consistency = "ttl";
      cfg.metadata.durations = {
          {"attr_ttl", "10m"}, {"dir_ttl", "10m"}, {"negative_ttl", "10m"}, {"access_ttl", "10m"}};
      s.gateway = std::make_unique<Gateway>(cfg, s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }

  void TearDown() override {
    auto& s = setup();
    if (s.gateway && s.gateway->running()) {
      EXPECT_EQ(s.gateway->stop(), 0) << "nfsgw did not stop cleanly; log:\n" << s.gateway->log();
    }
    s.gateway.reset();
    s.relay.reset();
    s.dir.reset();
    s.origin.reset();
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new WarmEnvironment);

Gateway& gw() { return *setup().gateway; }
WanRelay& relay() { return *setup().relay; }

/// The figures of a warm's summary line ("warmed X: 5,051 entries ... in 2.5 s").
struct Summary {
  long entries = -1;
  double seconds = -1;
  long origin_calls = -1;
};

long number(const std::string& digits) {
  std::string plain;
  for (char c : digits)
    if (c != ',') plain += c;
  return std::stol(plain);
}

Summary parse_summary(const std::string& output) {
  Summary s;
  std::smatch m;
  if (std::regex_search(output, m, std::regex("warmed [^\\n]*: ([0-9,]+) entries [^\\n]* in ([0-9.]+) s")))
    s.entries = number(m[1]), s.seconds = std::stod(m[2]);
  if (std::regex_search(output, m, std::regex("origin: ([0-9,]+) metadata calls"))) s.origin_calls = number(m[1]);
  return s;
}

class Warm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!setup().skip_reason.empty()) GTEST_FAIL() << setup().skip_reason;
    ASSERT_TRUE(setup().gateway && gw().running()) << "environment did not start";
    name_ = std::string("t_") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    disk_ = setup().origin->export_dir() + "/" + name_;
    make_dirs(disk_);
  }
  void TearDown() override {
    if (HasFailure() && setup().gateway) {
      std::string log = gw().log();
      if (log.size() > 4000) log = "...\n" + log.substr(log.size() - 4000);
      std::cout << "nfsgw log (tail):\n" << log << "\n";
    }
  }

  RunResult warm(std::vector<std::string> args) {
    const auto t0 = Clock::now();
    RunResult r = gw().cli("warm", args, std::chrono::minutes(5));
    warm_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    return r;
  }

  void reset() { ASSERT_TRUE(relay().reset()) << "wan-emu did not reset its counters"; }
  ProcCounts counters() {
    auto p = relay().procs();
    EXPECT_TRUE(p.has_value()) << "no procs in the relay's stats";
    return p.value_or(ProcCounts{});
  }

  /// The test's directory through nfsgw, for a fresh client.
  Handle top(RawNfsConnection& c) {
    auto m = mount_root(kWarmGatewayPort, kExport);
    if (!m.transport_ok || m.status != 0) {
      ADD_FAILURE() << "MNT " << kExport << ": " << m.error << " status " << m.status;
      return {};
    }
    return must_lookup(c, m.root, name_);
  }

  std::string name_, disk_;
  long warm_ms_ = 0;
};

/// A client's walk as `ls -lR` then opening each file would make it: per directory
/// ACCESS and READDIRPLUS (every page); per entry LOOKUP, GETATTR and ACCESS.
/// Returns the first problem, "" when every call succeeded; `entries` counts them.
std::string client_walk(RawNfsConnection& c, const Handle& top, std::size_t& entries,
                        std::map<std::string, std::uint64_t>* fileids = nullptr) {
  std::vector<std::pair<std::string, Handle>> dirs = {{"", top}};
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    if (dirs.size() > 10000) return "too many directories";
    const auto [path, dh] = dirs[i];
    auto a = c.access(dh, kAccessRead | kAccessLookup | kAccessExecute);
    if (!a.transport_ok || a.status != kNfs3Ok) return "ACCESS /" + path;
    auto l = c.readdirplus_all(dh);
    if (!l.transport_ok || l.status != kNfs3Ok) return "READDIRPLUS /" + path;
    for (const auto& e : l.entries) {
      if (e.name == "." || e.name == "..") continue;
      const std::string rel = path.empty() ? e.name : path + "/" + e.name;
      auto lk = c.lookup(dh, e.name);
      if (!lk.transport_ok || lk.status != kNfs3Ok) return "LOOKUP " + rel;
      auto g = c.getattr(lk.handle);
      if (!g.transport_ok || g.status != kNfs3Ok) return "GETATTR " + rel;
      auto fa = c.access(lk.handle, kAccessRead);
      if (!fa.transport_ok || fa.status != kNfs3Ok) return "ACCESS " + rel;
      ++entries;
      if (fileids) (*fileids)[rel] = g.attr.fileid;
      if (g.attr.type == kNf3Dir) dirs.push_back({rel, lk.handle});
    }
  }
  return "";
}

ino_t disk_ino(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// Acceptance: a warm of a 5,000-entry tree (50 directories of 100 files), then a
// second client's walk of it (LOOKUP, GETATTR and ACCESS of every entry, every
// listing) makes 0 origin calls.
TEST_F(Warm, AfterAWarmOf5000EntriesAWalkByAnotherClientMakesNoOriginCall) {
  constexpr int kDirs = 50, kFiles = 100;
  for (int d = 0; d < kDirs; ++d) {
    const std::string sub = disk_ + "/dir" + std::to_string(d);
    make_dirs(sub);
    for (int f = 0; f < kFiles; ++f) write_text_file(sub + "/f" + std::to_string(f), std::to_string(d * 1000 + f));
  }
  reset();
  const RunResult r = warm({kExport + "/" + name_});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Summary s = parse_summary(r.output);
  EXPECT_EQ(s.entries, 1 + kDirs + kDirs * kFiles) << r.output;
  const ProcCounts warmed = counters();
  EXPECT_GE(calls_of(warmed, kReaddirplus), kDirs + 1) << "positive control: the warm lists at the origin; "
                                                       << describe(warmed);
  EXPECT_GT(s.origin_calls, 0) << r.output;

  reset();
  auto c = connect_nfs(kWarmGatewayPort, 4321, 4321);  // squashed to the anonymous ids, as the warm was
  ASSERT_TRUE(c);
  const Handle t = top(*c);
  ASSERT_FALSE(t.empty());
  std::size_t entries = 0;
  std::map<std::string, std::uint64_t> ids;
  const auto t0 = Clock::now();
  const std::string problem = client_walk(*c, t, entries, &ids);
  const auto walk_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  ASSERT_EQ(problem, "");
  EXPECT_EQ(entries, static_cast<std::size_t>(kDirs + kDirs * kFiles));
  EXPECT_EQ(ids["dir7/f42"], disk_ino(disk_ + "/dir7/f42"));
  const ProcCounts after = counters();
  EXPECT_EQ(nfs3_calls(after), 0) << "the walk after the warm reached the origin: " << describe(after);

  std::cout << "[ measure  ] warm of " << s.entries << " entries at 20 ms RTT: " << warm_ms_ << " ms (CLI), "
            << s.seconds << " s (walk), " << static_cast<long>(s.entries / std::max(s.seconds, 0.001))
            << " entries/s, " << s.origin_calls << " origin calls; then a client walk of " << entries << " entries in "
            << walk_ms << " ms with 0 origin calls\n";
}

// Acceptance: a warm with --data, then a second client reading every file:
// under 1% of the files' bytes cross the link (the relay counts every byte the
// origin sends).
TEST_F(Warm, AfterAWarmWithDataReadingEveryFileMovesUnderOnePercentOfItsBytes) {
  constexpr int kBig = 24, kSmall = 200;
  constexpr std::uint64_t kBigSize = (1u << 20) + 4321, kSmallSize = 6000;
  std::uint64_t total = 0;
  make_dirs(disk_ + "/big");
  make_dirs(disk_ + "/small");
  for (int i = 0; i < kBig; ++i) {
    write_random_file(disk_ + "/big/b" + std::to_string(i), kBigSize, 100 + i);
    total += kBigSize;
  }
  for (int i = 0; i < kSmall; ++i) {
    write_random_file(disk_ + "/small/s" + std::to_string(i), kSmallSize, 1000 + i);
    total += kSmallSize;
  }
  reset();
  const RunResult r = warm({kExport + "/" + name_, "--data"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto warm_down = relay().down_bytes();
  ASSERT_TRUE(warm_down);
  EXPECT_GE(*warm_down, total) << "positive control: the warm read every byte at the origin";
  EXPECT_GE(calls_of(counters(), kRead), kBig + kSmall) << "positive control";

  reset();
  auto c = connect_nfs(kWarmGatewayPort, 4321, 4321);
  ASSERT_TRUE(c);
  const Handle t = top(*c);
  ASSERT_FALSE(t.empty());
  std::uint64_t read = 0;
  for (const auto& [sub, count, size, seed0] :
       {std::tuple{std::string("big"), kBig, kBigSize, 100}, std::tuple{std::string("small"), kSmall, kSmallSize, 1000}}) {
    const Handle d = must_lookup(*c, t, sub);
    for (int i = 0; i < count; ++i) {
      const std::string name = (sub == "big" ? "b" : "s") + std::to_string(i);
      const Handle fh = must_lookup(*c, d, name);
      ASSERT_FALSE(fh.empty()) << name;
      const std::string got = read_digest(*c, fh, size);
      EXPECT_EQ(got, sha256_file(disk_ + "/" + sub + "/" + name)) << name << ": wrong bytes after the warm";
      read += size;
    }
  }
  EXPECT_EQ(read, total);
  const auto down = relay().down_bytes();
  ASSERT_TRUE(down);
  const ProcCounts after = counters();
  EXPECT_LT(static_cast<double>(*down), 0.01 * static_cast<double>(total))
      << *down << " of " << total << " bytes crossed the link after the warm; " << describe(after);
  EXPECT_EQ(calls_of(after, kRead), 0) << describe(after);
  std::cout << "[ measure  ] warm --data of " << total << " bytes in " << (kBig + kSmall) << " files at 20 ms RTT: "
            << warm_ms_ << " ms; then reading them all moved " << *down << " bytes (" << nfs3_calls(after)
            << " origin calls)\n";
}

// A manifest warms the paths it lists (a client's reads of them cost nothing),
// not the rest (a file left out still reaches the origin: the positive control);
// a listed path that does not exist is named and the exit is 1.
TEST_F(Warm, ManifestWarmsTheListedPathsAndNamesTheMissingOne) {
  make_dirs(disk_ + "/jobs");
  for (int i = 0; i < 10; ++i) write_text_file(disk_ + "/jobs/in" + std::to_string(i), "input " + std::to_string(i));
  write_text_file(disk_ + "/jobs/left_out", "not in the manifest");
  const std::string list = setup().dir->sub("manifest-" + name_ + ".txt");
  {
    std::string text = "# inputs of job 7\n";
    for (int i = 0; i < 10; ++i) text += "jobs/in" + std::to_string(i) + "\n";
    text += kExport + "/" + name_ + "/jobs/missing\n";
    write_text_file(list, text);
  }
  reset();
  const RunResult r = warm({kExport + "/" + name_, "--manifest", list, "--data"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("failed: " + kExport + "/" + name_ + "/jobs/missing: NOENT at LOOKUP 'missing'"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1 path failed"), std::string::npos) << r.output;

  reset();
  auto c = connect_nfs(kWarmGatewayPort, 4321, 4321);
  ASSERT_TRUE(c);
  const Handle t = top(*c);
  const Handle jobs = must_lookup(*c, t, "jobs");
  for (int i = 0; i < 10; ++i) {
    const Handle fh = must_lookup(*c, jobs, "in" + std::to_string(i));
    auto rd = c->read(fh, 0, 4096);
    ASSERT_TRUE(rd.transport_ok && rd.status == kNfs3Ok);
  }
  EXPECT_EQ(nfs3_calls(counters()), 0) << describe(counters());
  const Handle out = must_lookup(*c, jobs, "left_out");
  auto rd = c->read(out, 0, 4096);
  ASSERT_TRUE(rd.transport_ok && rd.status == kNfs3Ok);
  EXPECT_GT(nfs3_calls(counters()), 0) << "positive control: a file left out of the manifest is not warmed";
}

// `nfsgw exports` shows the export as it runs: its origin, the connections up,
// its windows and the warm's ids; a warm of an unknown path says so.
TEST_F(Warm, ExportsShowsTheOriginConnectionsAndWindows) {
  const RunResult r = gw().cli("exports");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("export " + kExport + "\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("origin        " + gw().config().origin_url), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("up: 4 of 4 connections up, mounted"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ttl, access_check origin, attr_ttl 10m, dir_ttl 10m"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("squash all (anonymous 65534:65534)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("warm as       uid 65534 gid 65534"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cache (shared by every export)"), std::string::npos) << r.output;

  const RunResult bad = warm({"/nowhere"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("'/nowhere' is not under any export"), std::string::npos) << bad.output;
}

// Not a test: the figures of docs/benchmarks.md ("Priming"). A fresh 5,000-entry
// tree (50 directories of 100 files) per run, warmed from a cold cache with 4, 8,
// 16, 32, 64 and 128 calls in flight, two runs each. Run it by hand:
//   flock /tmp/nfsgw-integ.lock build/tests/integration/nfsgw_integration_tests_warm
//     --gtest_also_run_disabled_tests --gtest_filter='*Measure*'   (one command line)
TEST_F(Warm, DISABLED_MeasureWarmTimeByParallel) {
  constexpr int kDirs = 50, kFiles = 100;
  int tree = 0;
  for (const char* parallel : {"4", "8", "16", "32", "64", "128"}) {
    for (int run = 0; run < 2; ++run) {
      const std::string sub = "tree" + std::to_string(tree++);
      for (int d = 0; d < kDirs; ++d) {
        const std::string dir = disk_ + "/" + sub + "/dir" + std::to_string(d);
        make_dirs(dir);
        for (int f = 0; f < kFiles; ++f) write_text_file(dir + "/f" + std::to_string(f), "x");
      }
      reset();
      const RunResult r = warm({kExport + "/" + name_ + "/" + sub, "--parallel", parallel});
      ASSERT_EQ(r.exit_code, 0) << r.output;
      const Summary s = parse_summary(r.output);
      const ProcCounts c = counters();
      std::cout << "[ measure  ] parallel " << parallel << " run " << run << ": " << s.entries << " entries in "
                << s.seconds << " s, " << static_cast<long>(s.entries / std::max(s.seconds, 0.001))
                << " entries/s, origin calls " << nfs3_calls(c) << " (relay), " << s.origin_calls << " (nfsgw)"
                << std::endl;
    }
  }
}

}  // namespace
