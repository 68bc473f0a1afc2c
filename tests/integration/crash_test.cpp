// Crashes and faults under load: nothing a client was told is written is lost.
//
//   - KillNineUnderMixedLoad: several raw clients create, write (FILE_SYNC, and
//     UNSTABLE followed by COMMIT), rename and remove checksummed files through
//     nfsgw while it is killed with SIGKILL, round after round. After every restart
//     nfsgw's database opens and it answers; every write a client saw acknowledged
//     (a FILE_SYNC reply, or the COMMIT after unstable writes, with the verifier the
//     writes had) is in the origin's files, byte for byte, read straight from the
//     ganesha export directory; every handle a client holds still works (no
//     NFS3ERR_STALE) through the restarted nfsgw. A call whose reply the kill took
//     is not counted as acknowledged: its bytes are not checked.
//     Rounds: $NFSGW_CRASH_ROUNDS (default 20, the figure: about 1 s a round;
//     figures in docs/benchmarks.md). CI (scripts/test.sh) runs the 20 rounds
//     against the release nfsgw (label release_bounds) and 5 against its ASan
//     build (NFSGW_CRASH_ROUNDS=5: every restart path under ASan). The two
//     cache-disk tests run against the release nfsgw only (scripts/test.sh's
//     GTEST_FILTER for the ASan lane: their 6,000-entry listings took 530 s there).
//     NFSGW_CRASH_DISK_FILES sets the files they read per pass (default 300).
//   - SigtermUnderLoad: SIGTERM while clients have calls in flight (pipelined
//     GETATTRs and writes): nfsgw exits with 0, says every call in flight finished
//     or failed (nothing left queued on its io_context), RocksDB logged its
//     "Shutdown complete" (the database was closed), every client call ends
//     (answered or cut), and the next start serves what was acknowledged.
//     scripts/test.sh runs this suite with an ASan build of nfsgw too, where a use
//     after free in the shutdown path makes nfsgw exit with an error.
//   - CacheDiskFull: the cache directory on a small tmpfs of its own, filled up:
//     calls still succeed (forwarded), the log says so once, and when space returns
//     nfsgw says so and keeps its records on disk again.
//   - ReadOnlyCacheDir: the cache directory made read-only under a running nfsgw
//     (a read-only bind mount on itself): calls still succeed, the metadata store
//     and the data block store each say so once, and once it is writable again
//     each says so once and stores again.
// The load clients are in mixed_load.h (shared with origin_faults_test.cpp: the
// origin cut and restarted under the same load).
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/mixed_load.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/small_disk.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;


struct Setup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<Gateway> gateway;
  std::string skip_reason;
};

Setup& setup() {
  static Setup s;
  return s;
}

GatewayConfig gateway_config() {
  GatewayConfig cfg;
  cfg.port = kCrashGatewayPort;
  cfg.origin_url = setup().origin->url();
  cfg.threads = 2;
  return cfg;  // metadata and data caches on (nfsgw's defaults)
}

class CrashEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto& s = setup();
    if (!nfsgw_binary()) {
      s.skip_reason = "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";
      return;
    }
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kCrashOriginNfsPort, kCrashOriginMountPort);
      s.origin->start();
      s.dir = std::make_unique<TempDir>("crash");
      s.gateway = std::make_unique<Gateway>(gateway_config(), s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      s.skip_reason = std::string("set-up failed: ") + e.what();
    }
  }
  void TearDown() override {
    auto& s = setup();
    s.gateway.reset();
    s.dir.reset();
    s.origin.reset();
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new CrashEnvironment);

#define REQUIRE_SETUP()                                                    \
  do {                                                                     \
    if (!setup().skip_reason.empty()) GTEST_FAIL() << setup().skip_reason; \
  } while (0)

Gateway& gw() { return *setup().gateway; }
const std::string& origin_dir() { return setup().origin->export_dir(); }

unsigned env_unsigned(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return static_cast<unsigned>(std::strtoul(v, nullptr, 10));
}

TEST(Crash, KillNineUnderMixedLoadLosesNothingAcknowledged) {
  REQUIRE_SETUP();
  const unsigned rounds = env_unsigned("NFSGW_CRASH_ROUNDS", 20);
  constexpr unsigned kClients = 4;
  LoadTotals totals;
  std::vector<std::unique_ptr<LoadClient>> clients;
  for (unsigned i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<LoadClient>(i, totals, origin_dir()));
    ASSERT_TRUE(clients.back()->prepare(gw().port())) << clients.back()->failures();
  }
  std::mt19937 rng(7);
  std::vector<double> restart_ms;
  std::uint64_t killed_mid_call = 0;
  const auto test_deadline = Clock::now() + std::chrono::minutes(10);
  for (unsigned round = 0; round < rounds && Clock::now() < test_deadline; ++round) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> load;
    const auto lost_before = totals.lost_replies.load();
    for (auto& c : clients)
      load.emplace_back([&, c = c.get()] { c->run(gw().port(), stop, 5000); });
    nfsgw::test::pass_time(milliseconds(300 + rng() % 700), "the kill falls at a random point of the load");
    const int code = gw().kill9();
    EXPECT_EQ(code, 128 + SIGKILL) << "round " << round;
    stop = true;
    for (auto& t : load) t.join();
    killed_mid_call += totals.lost_replies.load() - lost_before;

    const auto t0 = Clock::now();
    ASSERT_NO_THROW(gw().start()) << "round " << round << ": nfsgw did not come back (its database?)";
    auto m = mount_root(gw().port(), "/export");
    restart_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    ASSERT_TRUE(m.transport_ok && m.status == kNfs3Ok) << "round " << round << ": " << m.error << "\n" << gw().log();
    for (auto& c : clients) c->verify(gw().port());
    for (auto& c : clients) ASSERT_EQ(c->failures(), "") << "after round " << round << "\n" << gw().log();
  }
  // The positive controls: the load did acknowledge writes, and kills did cut calls.
  EXPECT_GT(totals.acked_writes.load(), 50u);
  EXPECT_GT(totals.commits.load(), 5u);
  EXPECT_GT(totals.renames.load(), 0u);
  EXPECT_GT(totals.removes.load(), 0u);
  std::sort(restart_ms.begin(), restart_ms.end());
  const double median = restart_ms.empty() ? 0 : restart_ms[restart_ms.size() / 2];
  std::cout << "[crash] " << restart_ms.size() << " kill -9 rounds, " << totals.calls << " calls, "
            << totals.acked_writes << " writes acknowledged (" << totals.commits << " COMMITs), " << totals.creates
            << " creates, " << totals.renames << " renames, " << totals.removes << " removes, " << killed_mid_call
            << " calls cut (transport failures), " << totals.verifier_resends << " verifier resends; restart to first MNT: median "
            << median << " ms, max " << (restart_ms.empty() ? 0 : restart_ms.back()) << " ms\n";
  EXPECT_EQ(gw().log().find("disk failed"), std::string::npos) << gw().log();
}

TEST(Crash, SigtermWithCallsInFlightExitsCleanly) {
  REQUIRE_SETUP();
  LoadTotals totals;
  constexpr unsigned kWriters = 3, kPipelines = 3;
  std::vector<std::unique_ptr<LoadClient>> writers;
  for (unsigned i = 0; i < kWriters; ++i) {
    writers.push_back(std::make_unique<LoadClient>(100 + i, totals, origin_dir()));
    ASSERT_TRUE(writers.back()->prepare(gw().port())) << writers.back()->failures();
  }
  auto m = mount_root(gw().port(), "/export");
  ASSERT_TRUE(m.transport_ok && m.status == kNfs3Ok) << m.error;
  const std::vector<Handle> batch(256, m.root);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> pipelined_ok{0}, pipelined_cut{0}, pipelined_bad{0};
  std::vector<std::thread> load;
  for (auto& c : writers) load.emplace_back([&, c = c.get()] { c->run(gw().port(), stop, 100000); });
  for (unsigned i = 0; i < kPipelines; ++i) {
    load.emplace_back([&] {
      RawNfsConnection conn;
      conn.timeout_ms = 10000;
      if (!conn.connect(gw().port(), kNfsProgram, 3)) return;
      for (int n = 0; n < 10000 && !stop; ++n) {
        bool cut = false;
        for (const auto& r : conn.getattr_pipelined(batch, 128)) {
          if (!r.transport_ok) cut = true, ++pipelined_cut;
          else if (r.status == kNfs3Ok) ++pipelined_ok;
          else ++pipelined_bad;
        }
        if (cut) return;
      }
    });
  }
  // Under way: calls answered on every connection.
  (void)nfsgw::test::wait_until([&] { return pipelined_ok >= 2000 && totals.acked_writes >= 20; }, seconds(20),
                                "calls answered on every connection");
  ASSERT_GE(pipelined_ok.load(), 2000u);
  const auto log_before = gw().log().size();
  const auto t0 = Clock::now();
  const int code = gw().stop();  // SIGTERM; SIGKILL only after 15 s
  const double stop_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  stop = true;
  for (auto& t : load) t.join();
  const std::string log = gw().log().substr(log_before);
  EXPECT_EQ(code, 0) << "nfsgw did not exit cleanly on SIGTERM under load (" << stop_ms << " ms):\n" << log;
  // It ran what the stop left queued until the io_context had no work at all.
  EXPECT_NE(log.find("nfsgw stopped: every call in flight finished or failed"), std::string::npos) << log;
  EXPECT_EQ(log.find("AddressSanitizer"), std::string::npos) << log;
  EXPECT_EQ(pipelined_bad.load(), 0u);
  // The database was closed, not just left behind by the exit.
  const std::string db_log = read_whole(gw().cache_dir() + "/db/LOG");
  EXPECT_NE(db_log.find("Shutdown complete"), std::string::npos) << db_log.substr(db_log.size() > 3000 ? db_log.size() - 3000 : 0);
  std::cout << "[crash] SIGTERM under load: exit " << code << " after " << stop_ms << " ms; " << pipelined_ok
            << " pipelined GETATTRs answered, " << pipelined_cut << " cut; " << totals.acked_writes
            << " writes acknowledged, " << totals.lost_replies << " calls cut\n";

  // The database was closed properly: the next start opens it and serves every
  // acknowledged write, and the handles held.
  ASSERT_NO_THROW(gw().start());
  for (auto& c : writers) {
    c->drop_connection();
    c->verify(gw().port());
    EXPECT_EQ(c->failures(), "");
  }
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

/// LOOKUP, GETATTR and READ of every file of `dir` on the origin through nfsgw,
/// each compared with the origin's bytes. Returns the first problem, or "".
std::string read_all_through(std::uint16_t port, const std::string& dir, unsigned files) {
  auto m = mount_root(port, "/export");
  if (!m.transport_ok || m.status != kNfs3Ok) return "MNT failed: " + m.error;
  RawNfsConnection c;
  c.timeout_ms = 20000;
  if (!c.connect(port, kNfsProgram, 3)) return "connect failed: " + c.error();
  auto d = c.lookup(m.root, dir);
  if (!d.transport_ok || d.status != kNfs3Ok) return "LOOKUP " + dir + ": " + std::to_string(d.status) + d.error;
  for (unsigned i = 0; i < files; ++i) {
    const std::string name = "file" + std::to_string(i);
    auto f = c.lookup(d.handle, name);
    if (!f.transport_ok || f.status != kNfs3Ok) return "LOOKUP " + name + ": " + std::to_string(f.status) + f.error;
    auto a = c.getattr(f.handle);
    if (!a.transport_ok || a.status != kNfs3Ok) return "GETATTR " + name + ": " + std::to_string(a.status) + a.error;
    auto r = c.read(f.handle, 0, 65536);
    if (!r.transport_ok || r.status != kNfs3Ok) return "READ " + name + ": " + std::to_string(r.status) + r.error;
    if (std::string(r.data.begin(), r.data.end()) != read_whole(origin_dir() + "/" + dir + "/" + name))
      return "READ " + name + ": not the origin's bytes";
  }
  return "";
}

constexpr unsigned kBigFiles = 6000;

/// READDIRPLUS of `path` (below the export root) through nfsgw: "" when every call
/// succeeded and saw `entries` (besides "." and "..").
std::string list_through(std::uint16_t port, const std::string& path, unsigned entries) {
  auto m = mount_root(port, "/export");
  if (!m.transport_ok || m.status != kNfs3Ok) return "MNT failed: " + m.error;
  RawNfsConnection c;
  c.timeout_ms = 30000;
  if (!c.connect(port, kNfsProgram, 3)) return "connect failed: " + c.error();
  Handle at = m.root;
  std::istringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    auto d = c.lookup(at, part);
    if (!d.transport_ok || d.status != kNfs3Ok) return "LOOKUP " + part + ": " + std::to_string(d.status) + d.error;
    at = d.handle;
  }
  {
    auto l = c.readdirplus_all(at, 4096, 16384);  // small pages: many listing records
    if (!l.transport_ok || l.status != kNfs3Ok) return "READDIRPLUS: " + std::to_string(l.status) + l.error;
    if (l.entries.size() != entries + 2) return "READDIRPLUS saw " + std::to_string(l.entries.size()) + " entries";
  }
  return "";
}

/// Lines of RocksDB's own logs under `cache_dir` that mention an error.
std::string rocksdb_errors(const std::string& cache_dir) {
  std::string out;
  for (const char* log : {"/db/LOG", "/data/index/LOG"}) {
    std::istringstream lines(read_whole(cache_dir + log));
    for (std::string line; std::getline(lines, line);)
      if (line.find("rror") != std::string::npos && out.size() < 4000) out += std::string(log) + ": " + line + "\n";
  }
  return out;
}

TEST(Crash, FullCacheDiskKeepsServingSaysSoOnceAndRecovers) {
  REQUIRE_SETUP();
  if (::geteuid() != 0) GTEST_FAIL() << "needs root to mount a tmpfs for the cache directory";
  const unsigned kFiles = env_unsigned("NFSGW_CRASH_DISK_FILES", 300);
  const std::string dir = "smalldisk";
  make_dirs(origin_dir() + "/" + dir + "/big");
  for (unsigned i = 0; i < kBigFiles; ++i)
    write_text_file(origin_dir() + "/" + dir + "/big/a-rather-long-name-for-a-file-" + std::to_string(i), "");
  for (unsigned i = 0; i < kFiles; ++i)
    write_text_file(origin_dir() + "/" + dir + "/file" + std::to_string(i),
                    chunk_bytes(7, i, 0, 1).substr(0, 3000 + i * 37));
  TempDir work("smalldisk");
  SmallDisk disk(work.sub("gw/cache"), 48);
  ASSERT_TRUE(disk.mounted()) << disk.error();
  GatewayConfig cfg = gateway_config();
  cfg.port = kCrashSmallDiskGatewayPort;
  cfg.memory_mb = 16;
  Gateway small(cfg, work.sub("gw"));
  ASSERT_NO_THROW(small.start());
  EXPECT_EQ(read_all_through(small.port(), dir, 20), "");  // the disk works: a positive control

  ASSERT_TRUE(disk.fill());
  // Every call succeeds with the origin's bytes while the cache disk is full; the
  // metadata cache's writes fail and it says so, once. RocksDB preallocates its
  // log (about 2 MiB here): listings of the big directory write past that. Bounded:
  // at most 6 passes (a few suffice; the ASan build is slow).
  const std::string failed = "metadata cache disk failed";
  const auto said = [&] { return count_of(small.log(), failed); };
  int passes = 0;
  for (; passes < 6 && said() == 0; ++passes) {
    const int pass = passes;
    EXPECT_EQ(read_all_through(small.port(), dir, kFiles), "") << "pass " << pass;
    EXPECT_EQ(list_through(small.port(), dir + "/big", kBigFiles), "") << "pass " << pass;
    (void)nfsgw::test::wait_until([&] { return said() > 0; }, seconds(1), "the failure logged", milliseconds(50));
  }
  EXPECT_EQ(said(), 1u) << small.log();
  // Degraded, it still answers everything.
  EXPECT_EQ(read_all_through(small.port(), dir, kFiles), "");
  EXPECT_EQ(list_through(small.port(), dir + "/big", kBigFiles), "");
  EXPECT_EQ(said(), 1u);
  auto stats = small.cli("stats");
  EXPECT_NE(stats.output.find("DEGRADED"), std::string::npos) << stats.output;
  // The store tries the disk every 10 s: with the disk still full it must stay
  // degraded, not "recover" into a few writes that fit RocksDB's preallocated log
  // and fail again (it did: said 4 times under ASan, and stats lost DEGRADED).
  // Reads go on meanwhile, so a store that wrongly recovered would write and fail.
  const auto past_a_retry = Clock::now() + seconds(12);
  nfsgw::test::Pacer pace(milliseconds(500));  // passes spread over the retry period
  for (int pass = 0; pass < 20 && Clock::now() < past_a_retry; ++pass) {
    EXPECT_EQ(read_all_through(small.port(), dir, kFiles), "");
    EXPECT_EQ(list_through(small.port(), dir + "/big", kBigFiles), "");
    pace.next();
  }
  nfsgw::test::wait_past(past_a_retry);  // a retry has certainly come
  EXPECT_EQ(said(), 1u) << small.log();
  EXPECT_EQ(count_of(small.log(), "metadata cache disk works again"), 0u) << small.log();
  stats = small.cli("stats");
  EXPECT_NE(stats.output.find("DEGRADED"), std::string::npos) << stats.output;

  // Space returns: within the retry period nfsgw says so and persists again.
  disk.free_space();
  const std::string again = "metadata cache disk works again";
  (void)nfsgw::test::wait_until([&] { return count_of(small.log(), again) > 0; }, seconds(40), "the recovery logged",
                                milliseconds(100));
  EXPECT_EQ(count_of(small.log(), again), 1u) << small.log();
  EXPECT_EQ(read_all_through(small.port(), dir, kFiles), "");
  stats = small.cli("stats");
  EXPECT_EQ(stats.output.find("DEGRADED"), std::string::npos) << stats.output;
  EXPECT_EQ(said(), 1u) << small.log();
  std::cout << "[crash] full cache disk: the metadata store failed after " << passes
            << " pass(es) of reads and listings; log lines about the cache disk:\n";
  std::istringstream lines(small.log());
  for (std::string line; std::getline(lines, line);)
    if (line.find("disk") != std::string::npos || line.find("store error") != std::string::npos)
      std::cout << "  " << line << "\n";
  std::cout << "[crash] RocksDB's logs:\n" << rocksdb_errors(small.cache_dir());
  EXPECT_EQ(small.stop(), 0) << small.log() << rocksdb_errors(small.cache_dir());
}

/// `dir` made read-only for the life of the object: a read-only bind mount of it on
/// itself. New files and opens for writing below it fail with EROFS, as on a disk
/// remounted read-only. Files nfsgw already holds open for writing (RocksDB's
/// current WAL and LOG) stay writable through their descriptors: the kernel
/// refuses to make a mount read-only while files on it are open for writing, so
/// this is as read-only as a running nfsgw's disk can be made; RocksDB's next flush
/// (a new table file) is what fails.
class ReadOnlyCacheDir {
 public:
  explicit ReadOnlyCacheDir(const std::string& dir) : dir_(dir) {}
  ~ReadOnlyCacheDir() { writable(); }
  /// Empty on success, else what mount said.
  std::string read_only() {
    auto b = run({"mount", "--bind", dir_, dir_}, seconds(20));
    if (b.exit_code != 0) return "mount --bind: " + b.output;
    mounted_ = true;
    auto r = run({"mount", "-o", "remount,bind,ro", dir_}, seconds(20));
    if (r.exit_code != 0) return "remount,bind,ro: " + r.output;
    return "";
  }
  /// Lazily: descriptors nfsgw opened through the read-only mount keep it alive.
  void writable() {
    if (mounted_) run({"umount", "-l", dir_}, seconds(20));
    mounted_ = false;
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

TEST(Crash, ReadOnlyCacheDirKeepsServingSaysSoOnceAndRecovers) {
  REQUIRE_SETUP();
  if (::geteuid() != 0) GTEST_FAIL() << "needs root for a read-only bind mount of the cache directory";
  const unsigned kFiles = env_unsigned("NFSGW_CRASH_DISK_FILES", 300);
  ASSERT_GT(kFiles, 20u) << "NFSGW_CRASH_DISK_FILES: the first 20 files are the positive control";
  const std::string dir = "rodisk";
  make_dirs(origin_dir() + "/" + dir + "/big");
  for (unsigned i = 0; i < kBigFiles; ++i)
    write_text_file(origin_dir() + "/" + dir + "/big/a-rather-long-name-for-a-file-" + std::to_string(i), "");
  for (unsigned i = 0; i < kFiles; ++i)
    write_text_file(origin_dir() + "/" + dir + "/file" + std::to_string(i),
                    chunk_bytes(8, i, 0, 1).substr(0, 3000 + i * 37));
  TempDir work("rodisk");
  GatewayConfig cfg = gateway_config();
  cfg.port = kCrashSmallDiskGatewayPort;
  cfg.memory_mb = 16;
  Gateway gw2(cfg, work.sub("gw"));
  ASSERT_NO_THROW(gw2.start());
  EXPECT_EQ(read_all_through(gw2.port(), dir, 20), "");  // a positive control: blocks stored

  ReadOnlyCacheDir ro(gw2.cache_dir());
  ASSERT_EQ(ro.read_only(), "");
  const auto t_ro = Clock::now();
  const std::string meta_failed = "metadata cache disk failed", data_failed = "block store error";
  const auto said = [&](const std::string& what) { return count_of(gw2.log(), what); };
  // Every call is answered with the origin's bytes; the data cache cannot store a
  // block (new block files) and says so at once; the metadata store fails at
  // RocksDB's next flush, which the listings bring about. Bounded: 6 passes.
  int passes = 0;
  for (; passes < 6 && (said(meta_failed) == 0 || said(data_failed) == 0); ++passes) {
    const int pass = passes;
    EXPECT_EQ(read_all_through(gw2.port(), dir, kFiles), "") << "pass " << pass;
    EXPECT_EQ(list_through(gw2.port(), dir + "/big", kBigFiles), "") << "pass " << pass;
    (void)nfsgw::test::wait_until([&] { return said(meta_failed) > 0; }, seconds(1), "the failure logged",
                                  milliseconds(50));
  }
  const double to_fail_s = std::chrono::duration<double>(Clock::now() - t_ro).count();
  EXPECT_EQ(said(meta_failed), 1u) << gw2.log();
  EXPECT_EQ(said(data_failed), 1u) << gw2.log();
  EXPECT_NE(gw2.log().find("Read-only file system"), std::string::npos) << "the log names the cause\n" << gw2.log();
  // Read-only, it still answers everything, and says nothing more.
  EXPECT_EQ(read_all_through(gw2.port(), dir, kFiles), "");
  EXPECT_EQ(list_through(gw2.port(), dir + "/big", kBigFiles), "");
  EXPECT_EQ(said(meta_failed), 1u);
  EXPECT_EQ(said(data_failed), 1u);
  auto stats = gw2.cli("stats");
  EXPECT_NE(stats.output.find("DEGRADED"), std::string::npos) << stats.output;

  // Writable again: the metadata store's next retry (every 10 s) and the data
  // cache's next stored block say so, once each.
  ro.writable();
  const auto t_rw = Clock::now();
  const std::string meta_again = "metadata cache disk works again", data_again = "block store works again";
  double meta_back_s = -1, data_back_s = -1;
  unsigned round = 0;
  const auto both_back = [&] {
    if (data_back_s < 0) {
      // Files the read-only disk kept out of the cache (the first 20 are cached):
      // each READ is a block to store.
      RawNfsConnection c;
      auto m = mount_root(gw2.port(), "/export");
      if (m.transport_ok && c.connect(gw2.port(), kNfsProgram, 3)) {
        auto d = c.lookup(m.root, dir);
        auto f = c.lookup(d.handle, "file" + std::to_string(20 + round % (kFiles - 20)));
        c.read(f.handle, 0, 65536);
      }
    }
    if (meta_back_s < 0 && said(meta_again) > 0)
      meta_back_s = std::chrono::duration<double>(Clock::now() - t_rw).count();
    if (data_back_s < 0 && said(data_again) > 0)
      data_back_s = std::chrono::duration<double>(Clock::now() - t_rw).count();
    ++round;
    return meta_back_s >= 0 && data_back_s >= 0;
  };
  (void)nfsgw::test::wait_until(both_back, seconds(40), "both stores back", milliseconds(100));
  EXPECT_EQ(said(meta_again), 1u) << gw2.log();
  EXPECT_EQ(said(data_again), 1u) << gw2.log();
  EXPECT_EQ(read_all_through(gw2.port(), dir, kFiles), "");
  stats = gw2.cli("stats");
  EXPECT_EQ(stats.output.find("DEGRADED"), std::string::npos) << stats.output;
  EXPECT_EQ(said(meta_failed), 1u) << gw2.log();
  EXPECT_EQ(said(data_failed), 1u) << gw2.log();
  std::cout << "[crash] read-only cache dir: both stores failed after " << passes << " pass(es), " << to_fail_s
            << " s; writable again: metadata store back after " << meta_back_s << " s, block store after "
            << data_back_s << " s; log lines about the cache disk:\n";
  std::istringstream lines(gw2.log());
  for (std::string line; std::getline(lines, line);)
    if (line.find("disk") != std::string::npos || line.find("store") != std::string::npos)
      std::cout << "  " << line.substr(0, 400) << "\n";
  std::cout << "[crash] RocksDB's logs:\n" << rocksdb_errors(gw2.cache_dir());
  EXPECT_EQ(gw2.stop(), 0) << gw2.log() << rocksdb_errors(gw2.cache_dir());
}

}  // namespace
