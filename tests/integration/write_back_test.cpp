// Write-back exports, end to end: a ganesha origin <- nfsgw <- libnfs clients.
//
// One nfsgw serves two exports of the same origin folder:
//   /back     writes = "back", write_back_delay = 1 h: nothing reaches the origin
//             unless flushed (`nfsgw flush`) or the budget fills;
//   /through  writes = "through": it must show /back's dirty data at once.
// What the origin holds is read from its disk, so a test sees exactly what the
// flush wrote there. Each test has a positive control: the origin's file is seen
// without the written bytes before the flush.
//
// Sizes follow the environment as the rest of the suite does: $NFSGW_CRASH_ROUNDS
// kill -9 rounds (default 20), $NFSGW_ORIGIN_CUT_SECONDS of writes with the origin
// down (default 60), $NFSGW_POWER_LOSS_ROUNDS simulated power losses (default 5).
// CI's sanitizer stage runs 5 rounds and a 15 s outage; the release stage the
// full figures (label release_bounds).
//
// Two more tests run a second nfsgw of the same origin (kWriteBackSecondGatewayPort),
// one at a time: its cache on a small tmpfs (the disk full while dirty: needs root),
// and under the power-loss shim (tests/support/power_loss_preload.c).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nfsc/libnfs.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/small_disk.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;
using std::chrono::milliseconds;
using std::chrono::seconds;
using nfsgw::test::wait_until;

const std::string kBack = "/back";
const std::string kThrough = "/through";

unsigned env_unsigned(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return static_cast<unsigned>(std::strtoul(v, nullptr, 10));
}

struct Setup {
  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<Gateway> gateway;
};

Setup& setup() {
  static Setup s;
  return s;
}

class WriteBackEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto& s = setup();
    if (!nfsgw_binary()) return;  // each test fails with the reason
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kWriteBackOriginNfsPort, kWriteBackOriginMountPort);
      s.origin->start();
      s.dir = std::make_unique<TempDir>("writeback");
      GatewayConfig cfg;
      cfg.port = kWriteBackGatewayPort;
      cfg.origin_url = s.origin->url();
      cfg.export_path = kBack;
      cfg.writes = "back";
      cfg.write_back_delay = "1h";
      // Inside the windows during an outage of the origin: a writer's LOOKUP,
      // GETATTR and ACCESS are answered from the cache.
      cfg.metadata.durations = {
          {"attr_ttl", "10m"}, {"dir_ttl", "10m"}, {"negative_ttl", "10m"}, {"access_ttl", "10m"}};
      cfg.origin_timeout = "2s";
      ExportSettings through;
      through.export_path = kThrough;
      through.writes = "through";
      cfg.extra_exports = {through};
      s.gateway = std::make_unique<Gateway>(cfg, s.dir->sub("gw"));
      s.gateway->start();
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
  }

  void TearDown() override {
    auto& s = setup();
    if (s.gateway && s.gateway->running()) {
      const int code = s.gateway->stop();
      EXPECT_EQ(code, 0) << "nfsgw did not stop cleanly on SIGTERM; log:\n" << s.gateway->log();
    }
    s.gateway.reset();
    s.dir.reset();
    s.origin.reset();
  }
};

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new WriteBackEnvironment);

#define REQUIRE_SETUP()                                                         \
  do {                                                                          \
    INTEG_REQUIRE_NFSGW();                                                      \
    if (!setup().gateway) GTEST_FAIL() << "the test environment did not start"; \
  } while (0)

Gateway& gw() { return *setup().gateway; }
GaneshaOrigin& origin() { return *setup().origin; }

std::string url_of(const std::string& export_path) {
  return "nfs://127.0.0.1" + export_path + "?nfsport=" + std::to_string(gw().port()) +
         "&mountport=" + std::to_string(gw().port());
}

/// The file as the origin holds it on its disk ("" when missing).
std::string at_origin(const std::string& rel) { return read_file(origin().export_dir() + "/" + rel); }

/// `n` bytes that differ with `seed` and position.
std::string pattern(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

/// Writes `data` at `offset` of an existing file through `nfs`; 0 or negative errno.
int pwrite_at(nfs_context* nfs, const std::string& path, std::uint64_t offset, const std::string& data) {
  struct nfsfh* fh = nullptr;
  if (int rc = nfs_open(nfs, path.c_str(), O_WRONLY, &fh); rc != 0) return rc;
  std::size_t done = 0;
  int rc = 0;
  while (done < data.size()) {
    const int n = nfs_pwrite(nfs, fh, offset + done, data.size() - done, data.data() + done);
    if (n <= 0) {
      rc = n < 0 ? n : -EIO;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (rc == 0) rc = nfs_fsync(nfs, fh);
  const int closed = nfs_close(nfs, fh);
  return rc != 0 ? rc : closed;
}

/// Reads `n` bytes at `offset` of `path` through `nfs`; `rc` gets 0 or negative errno.
std::string pread_at(nfs_context* nfs, const std::string& path, std::uint64_t offset, std::size_t n, int* rc) {
  struct nfsfh* fh = nullptr;
  *rc = nfs_open(nfs, path.c_str(), O_RDONLY, &fh);
  if (*rc != 0) return {};
  std::string out(n, '\0');
  std::size_t done = 0;
  while (done < n) {
    const int got = nfs_pread(nfs, fh, offset + done, n - done, out.data() + done);
    if (got <= 0) {
      *rc = got < 0 ? got : *rc;
      break;
    }
    done += static_cast<std::size_t>(got);
  }
  out.resize(done);
  nfs_close(nfs, fh);
  return out;
}

/// `nfsgw flush` of the whole gateway; its output when it fails.
::testing::AssertionResult flushed(std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
  const RunResult r = gw().cli("flush", {}, timeout);
  if (r.exit_code == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "nfsgw flush exited " << r.exit_code << ":\n" << r.output;
}

TEST(WriteBack, AWriteIsSeenThroughEveryExportAtOnceAndReachesTheOriginWhenFlushed) {
  REQUIRE_SETUP();
  NfsClient back(url_of(kBack)), through(url_of(kThrough));
  ASSERT_EQ(back.mount_status(), 0) << back.mount_error();
  ASSERT_EQ(through.mount_status(), 0) << through.mount_error();
  const std::string data = pattern(3 << 20, 1);
  ASSERT_EQ(write_file(back, "/wb-seen", data), 0) << back.error();
  // The CREATE went to the origin; the bytes did not (positive control).
  ASSERT_TRUE(std::filesystem::exists(origin().export_dir() + "/wb-seen"));
  EXPECT_EQ(at_origin("wb-seen").size(), 0u);
  int rc = 0;
  EXPECT_EQ(read_file(through, "/wb-seen", &rc), data);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(lstat_of(through, "/wb-seen").size, data.size());
  EXPECT_EQ(read_file(back, "/wb-seen", &rc), data);

  ASSERT_TRUE(flushed());
  EXPECT_EQ(at_origin("wb-seen"), data);
  EXPECT_EQ(read_file(through, "/wb-seen", &rc), data);
}

TEST(WriteBack, AcknowledgedWritesSurviveKillNineAndReachTheOrigin) {
  REQUIRE_SETUP();
  // Rounds of writes (new files and overwrites of old ones), each ended by kill -9;
  // after every restart nfsgw serves what was acknowledged, and after a flush the
  // origin holds it.
  std::map<std::string, std::string> expected;
  std::mt19937 rng(20);
  const int kRounds = static_cast<int>(env_unsigned("NFSGW_CRASH_ROUNDS", 20));
  for (int round = 0; round < kRounds; ++round) {
    {
      NfsClient back(url_of(kBack));
      ASSERT_EQ(back.mount_status(), 0) << back.mount_error();
      for (int i = 0; i < 3; ++i) {
        const std::string name = "kill-" + std::to_string(rng() % 12);
        std::string& file = expected[name];
        if (file.empty() || rng() % 2 == 0) {
          file = pattern(1000 + rng() % 300000, rng());
          ASSERT_EQ(write_file(back, "/" + name, file), 0) << back.error();
        } else {
          const std::uint64_t at = rng() % file.size();
          const std::string more = pattern(1 + rng() % 100000, rng());
          ASSERT_EQ(pwrite_at(back, "/" + name, at, more), 0) << back.error();
          if (file.size() < at + more.size()) file.resize(at + more.size());
          file.replace(at, more.size(), more);
        }
      }
    }
    ASSERT_EQ(gw().kill9(), 137);
    gw().start();
    NfsClient check(url_of(kThrough));
    ASSERT_EQ(check.mount_status(), 0) << check.mount_error();
    for (const auto& [name, data] : expected) {
      int rc = 0;
      ASSERT_EQ(read_file(check, "/" + name, &rc), data) << name << " after round " << round << "\n" << gw().log();
    }
  }
  bool some_differ = false;  // positive control: the origin lacked the bytes before the flush
  for (const auto& [name, data] : expected) some_differ = some_differ || at_origin(name) != data;
  EXPECT_TRUE(some_differ);
  ASSERT_TRUE(flushed());
  for (const auto& [name, data] : expected) EXPECT_EQ(at_origin(name), data) << name;
}

// A tar unpack's SETATTR of the times, answered from the dirty file, then kill -9
// before any flush: the restarted nfsgw still shows those times (every export),
// and the flush sets them at the origin after the data. Before the fix the times
// lived in memory only and came back as the flush's own mtime.
TEST(WriteBack, TimesSetOnADirtyFileSurviveKillNineAndReachTheOrigin) {
  REQUIRE_SETUP();
  const std::string data = pattern(200000, 7);
  constexpr std::uint64_t kMtime = 1200000000, kAtime = 1000000000;
  {
    NfsClient back(url_of(kBack));
    ASSERT_EQ(back.mount_status(), 0) << back.mount_error();
    ASSERT_EQ(write_file(back, "/wb-times", data), 0) << back.error();
    timeval times[2] = {{static_cast<time_t>(kAtime), 0}, {static_cast<time_t>(kMtime), 0}};
    ASSERT_EQ(nfs_utimes(back, "/wb-times", times), 0) << back.error();
    EXPECT_EQ(lstat_of(back, "/wb-times").mtime, kMtime);
  }
  // Positive control: the origin has neither the bytes nor the times yet.
  struct stat at{};
  ASSERT_EQ(::stat((origin().export_dir() + "/wb-times").c_str(), &at), 0);
  EXPECT_NE(static_cast<std::uint64_t>(at.st_mtime), kMtime);
  EXPECT_EQ(at.st_size, 0);
  ASSERT_EQ(gw().kill9(), 137);
  gw().start();
  NfsClient through(url_of(kThrough));
  ASSERT_EQ(through.mount_status(), 0) << through.mount_error();
  const Attrs after = lstat_of(through, "/wb-times");
  EXPECT_EQ(after.mtime, kMtime) << gw().log();
  EXPECT_EQ(after.size, data.size());
  ASSERT_TRUE(flushed());
  ASSERT_EQ(::stat((origin().export_dir() + "/wb-times").c_str(), &at), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(at.st_mtime), kMtime);
  EXPECT_EQ(static_cast<std::uint64_t>(at.st_atime), kAtime);
  EXPECT_EQ(at_origin("wb-times"), data);
}

TEST(WriteBack, WritersGoOnWhileTheOriginIsDownAndEverythingReachesItAfter) {
  REQUIRE_SETUP();
  const std::string name = "outage";
  std::string expected = pattern(200000, 7);
  {
    NfsClient back(url_of(kBack));
    ASSERT_EQ(back.mount_status(), 0) << back.mount_error();
    ASSERT_EQ(write_file(back, "/" + name, expected), 0) << back.error();
    ASSERT_TRUE(flushed());
  }
  ASSERT_EQ(at_origin(name), expected);
  {
    // The writer was at work before the outage: what its calls ask besides WRITE
    // (LOOKUP, ACCESS, GETATTR) is in the cache's windows.
    NfsClient back(url_of(kBack));
    ASSERT_EQ(back.mount_status(), 0) << back.mount_error();
    ASSERT_EQ(pwrite_at(back, "/" + name, 0, expected.substr(0, 10)), 0) << back.error();
  }

  origin().kill9();
  NfsClient back(url_of(kBack), -1, -1, 60000);
  ASSERT_EQ(back.mount_status(), 0) << back.mount_error();
  // 60 s of writes ($NFSGW_ORIGIN_CUT_SECONDS), paced (one every 200 ms, 5 a
  // second at most).
  const unsigned cut_s = env_unsigned("NFSGW_ORIGIN_CUT_SECONDS", 60);
  const auto until = std::chrono::steady_clock::now() + seconds(cut_s);
  nfsgw::test::Pacer pace(milliseconds(200));
  std::mt19937 rng(8);
  int writes = 0;
  while (std::chrono::steady_clock::now() < until && writes < static_cast<int>(cut_s * 5)) {
    pace.next();
    const std::uint64_t at = rng() % expected.size();
    const std::string more = pattern(1 + rng() % 20000, rng());
    ASSERT_EQ(pwrite_at(back, "/" + name, at, more), 0) << "write " << writes << " with the origin down: "
                                                         << back.error() << "\n" << gw().log();
    if (expected.size() < at + more.size()) expected.resize(at + more.size());
    expected.replace(at, more.size(), more);
    ++writes;
    // What was just written is dirty: read back with the origin down (the rest of
    // the file, clean, is the origin's to give).
    int rc = 0;
    if (writes % 20 == 0) {
      ASSERT_EQ(pread_at(back, "/" + name, at, more.size(), &rc), more) << "read with the origin down";
      EXPECT_EQ(rc, 0);
    }
  }
  EXPECT_GT(writes, 0);
  origin().start_again();
  ASSERT_TRUE(flushed());
  EXPECT_EQ(at_origin(name), expected);
  int rc = 0;
  EXPECT_EQ(read_file(back, "/" + name, &rc), expected);
}


// ---- a second nfsgw of the same origin --------------------------------------------

GatewayConfig second_config() {
  GatewayConfig cfg;
  cfg.port = kWriteBackSecondGatewayPort;
  cfg.origin_url = origin().url();
  cfg.export_path = kBack;
  cfg.writes = "back";
  cfg.write_back_delay = "1h";
  cfg.metadata.durations = {
      {"attr_ttl", "10m"}, {"dir_ttl", "10m"}, {"negative_ttl", "10m"}, {"access_ttl", "10m"}};
  cfg.origin_timeout = "2s";
  return cfg;
}

/// A raw NFSv3 connection to `port` and the root handle of its /back export.
struct RawBack {
  RawNfsConnection c;
  Handle root;
  std::string error;
  RawBack(std::uint16_t port, int timeout_ms) {
    c.timeout_ms = timeout_ms;
    const RawMount m = mount_root(port, kBack);
    if (!m.transport_ok || m.status != kNfs3Ok) {
      error = "MNT: " + std::to_string(m.status) + " " + m.error;
      return;
    }
    root = m.root;
    if (!c.connect(port, kNfsProgram, 3)) error = "connect: " + c.error();
  }
  bool ok() const { return error.empty(); }
};

/// Counter `name` of the write_back section of `nfsgw stats --json`; nullopt (with
/// the output in `why`) when it is not there.
std::optional<std::uint64_t> write_back_counter(const Gateway& g, const std::string& name, std::string* why = nullptr) {
  const RunResult r = g.cli("stats", {"--json"});
  const auto at = r.output.find("\"write_back\"");
  std::smatch m;
  const std::string tail = at == std::string::npos ? "" : r.output.substr(at);
  if (r.exit_code != 0 || !std::regex_search(tail, m, std::regex("\"" + name + "\":([0-9]+)"))) {
    if (why) *why = "nfsgw stats --json exited " + std::to_string(r.exit_code) + ":\n" + r.output;
    return std::nullopt;
  }
  return std::stoull(m[1].str());
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

constexpr std::uint32_t kJukebox = 10008;

// The cache directory (data cache, metadata store and dirty log) on a 32 MiB tmpfs,
// dirty_max_gb far above it: writes fill the disk before the budget. Every WRITE
// acknowledged (FILE_SYNC, or UNSTABLE and COMMITted with its verifier) must reach
// the origin with `nfsgw flush`; the ones that cannot be made durable are answered
// NFS3ERR_JUKEBOX (the client retries; nothing acknowledged is lost), never NOSPC or
// IO; the log says why.
TEST(WriteBack, ADiskFullWhileDirtyLosesNoAcknowledgedWriteAndSaysWhy) {
  REQUIRE_SETUP();
  if (::geteuid() != 0) GTEST_FAIL() << "needs root to mount a tmpfs for the cache directory";
  constexpr unsigned kDiskMib = 32;
  TempDir work("wb-disk");
  SmallDisk disk(work.sub("gw/cache"), kDiskMib);
  ASSERT_TRUE(disk.mounted()) << disk.error();
  GatewayConfig cfg = second_config();
  cfg.dirty_max_gb = 1;
  cfg.memory_mb = 16;
  Gateway g(cfg, work.sub("gw"));
  ASSERT_NO_THROW(g.start());
  RawBack b(g.port(), 60000);
  ASSERT_TRUE(b.ok()) << b.error;

  constexpr unsigned kFiles = 4;
  constexpr std::size_t kChunk = 256 << 10;
  std::vector<Handle> fh;
  std::vector<std::string> acked(kFiles);  // each file's acknowledged bytes (appended)
  for (unsigned f = 0; f < kFiles; ++f) {
    auto cr = b.c.create(b.root, "full-" + std::to_string(f));
    ASSERT_TRUE(cr.transport_ok && cr.status == kNfs3Ok) << cr.status << " " << cr.error;
    fh.push_back(cr.handle);
  }
  // A first write each (its attributes and ACCESS answer then come from nfsgw's
  // caches), then the origin goes: nothing can be flushed to make room (a log that
  // cannot be written makes the flusher urgent; with the origin up it keeps the
  // disk from filling at all, which is what a writer wants but not what this test
  // is about).
  for (unsigned f = 0; f < kFiles; ++f) {
    const std::string data = pattern(kChunk, 1000 + f);
    const RawWrite w = b.c.write(fh[f], 0, data, kFileSync);
    ASSERT_TRUE(w.transport_ok && w.status == kNfs3Ok) << w.status << " " << w.error << "\n" << g.log();
    acked[f] += data;
  }
  origin().kill9();
  // FILE_SYNC writes and UNSTABLE ones with a COMMIT by turns, until two are
  // refused (each after nfsgw's bounded wait); bounded by twice the disk's size.
  std::mt19937 rng(31);
  unsigned writes = 0, refused = 0;
  std::set<std::uint32_t> refusals;
  for (unsigned i = 0; i < 2 * kDiskMib * (1 << 20) / kChunk && refused < 2; ++i) {
    const unsigned f = i % kFiles;
    const std::string data = pattern(kChunk, rng());
    const std::uint64_t at = acked[f].size();
    bool ok = false;
    if (i % 2 == 0) {
      const RawWrite w = b.c.write(fh[f], at, data, kFileSync);
      ASSERT_TRUE(w.transport_ok) << "write " << i << ": " << w.error << "\n" << g.log();
      ok = w.status == kNfs3Ok;
      if (ok) {
        EXPECT_EQ(w.committed, kFileSync);
        ASSERT_EQ(w.count, kChunk);
      } else {
        refusals.insert(w.status);
      }
    } else {
      const RawWrite w = b.c.write(fh[f], at, data, kUnstable);
      ASSERT_TRUE(w.transport_ok) << "write " << i << ": " << w.error << "\n" << g.log();
      ok = w.status == kNfs3Ok;
      if (ok) {
        ASSERT_EQ(w.count, kChunk);
        const RawCommit cm = b.c.commit(fh[f]);
        ASSERT_TRUE(cm.transport_ok) << "commit " << i << ": " << cm.error << "\n" << g.log();
        ok = cm.status == kNfs3Ok && cm.verf == w.verf;
        if (cm.status != kNfs3Ok) refusals.insert(cm.status);
      } else {
        refusals.insert(w.status);
      }
    }
    if (ok) {
      acked[f] += data;
      ++writes;
    } else {
      ++refused;
    }
  }
  std::uint64_t acked_bytes = 0;
  for (const auto& a : acked) acked_bytes += a.size();
  std::cout << "[write_back] disk full: " << writes << " writes (" << (acked_bytes >> 20) << " MiB) acknowledged on a "
            << kDiskMib << " MiB cache disk, then " << refused << " refused\n";
  ASSERT_EQ(refused, 2u) << "the disk never filled";
  EXPECT_EQ(refusals, std::set<std::uint32_t>{kJukebox}) << "a write that cannot be made durable must be answered "
                                                            "JUKEBOX (retried), not an error that loses it";
  // A clear log line naming the cause.
  const std::string log = g.log();
  EXPECT_GE(count_of(log, "the dirty log cannot be written"), 1u) << log;
  EXPECT_GE(count_of(log, "No space left on device"), 1u) << log;
  std::string why;
  const auto errors = write_back_counter(g, "log_errors", &why);
  ASSERT_TRUE(errors) << why;
  EXPECT_GT(*errors, 0u);
  // Positive control: the origin lacks the acknowledged bytes before the flush.
  bool some_missing = false;
  for (unsigned f = 0; f < kFiles; ++f) some_missing = some_missing || at_origin("full-" + std::to_string(f)) != acked[f];
  EXPECT_TRUE(some_missing);

  // Every acknowledged byte reaches the origin once it is back (a refused UNSTABLE
  // write's COMMIT failed: its bytes may follow the acknowledged ones there).
  origin().start_again();
  const RunResult fl = g.cli("flush", {}, seconds(120));
  EXPECT_EQ(fl.exit_code, 0) << fl.output << "\n" << g.log();
  for (unsigned f = 0; f < kFiles; ++f)
    EXPECT_EQ(at_origin("full-" + std::to_string(f)).substr(0, acked[f].size()), acked[f]) << "file " << f;
  // Flushed, the log's bytes are clean: the disk must take writes again (the log
  // holds nothing it needs), at once and after a restart.
  const auto accepts_a_write = [&](const char* when) {
    RawBack c(g.port(), 60000);
    if (!c.ok()) return ::testing::AssertionFailure() << when << ": " << c.error;
    const std::string data = pattern(kChunk, 99);
    RawWrite w;
    for (int i = 0; i < 3; ++i) {  // each refusal takes nfsgw's bounded wait (10 s)
      w = c.c.write(fh[0], acked[0].size(), data, kFileSync);
      if (w.transport_ok && w.status == kNfs3Ok) {
        acked[0] += data;
        return ::testing::AssertionSuccess();
      }
    }
    return ::testing::AssertionFailure() << when << ": a FILE_SYNC WRITE answered " << w.status << " " << w.error
                                         << " three times; the cache disk holds "
                                         << run({"du", "-sk", g.cache_dir() + "/dirty", g.cache_dir() + "/data",
                                                 g.cache_dir() + "/db"},
                                                seconds(10))
                                                .output;
  };
  EXPECT_TRUE(accepts_a_write("after the flush")) << g.log();
  EXPECT_EQ(g.stop(), 0) << g.log();
  ASSERT_NO_THROW(g.start()) << g.log();
  EXPECT_TRUE(accepts_a_write("after a restart")) << g.log();
  ASSERT_EQ(g.cli("flush", {}, seconds(120)).exit_code, 0) << g.log();
  EXPECT_EQ(at_origin("full-0").substr(0, acked[0].size()), acked[0]);
  std::cout << "[write_back] disk full: nfsgw's lines about the dirty log:\n";
  std::istringstream lines(g.log());
  for (std::string line; std::getline(lines, line);)
    if (line.find("dirty log") != std::string::npos) std::cout << "  " << line.substr(0, 400) << "\n";
  EXPECT_EQ(g.stop(), 0) << g.log();
}

// UNSTABLE writes flushed by `nfsgw flush`; the origin killed while the flusher's
// WRITEs are under way (some bytes on its disk, not all; so before its COMMIT), the
// file's bytes on its disk then overwritten with zeros (what a restarted origin
// that lost its uncommitted data shows), and the origin started again. The flusher
// must see the verifier change and send everything again: every byte is at the
// origin after the flush, and the verifier_changes counter moved (a positive
// control of the counter). A try whose kill came too late (the file complete on
// the origin's disk) is made again with a new file, three tries at most.
TEST(WriteBack, AFlushThatMeetsAnOriginRestartSendsEverythingAgain) {
  REQUIRE_SETUP();
  constexpr std::size_t kChunk = 1 << 20, kFileBytes = 48 << 20;
  std::string why;
  const auto changes_before = write_back_counter(gw(), "verifier_changes", &why);
  ASSERT_TRUE(changes_before) << why;
  bool met = false;
  for (int attempt = 0; attempt < 3 && !met; ++attempt) {
    const std::string name = "restart-" + std::to_string(attempt);
    const std::string data = pattern(kFileBytes, 100 + attempt);
    {
      RawBack b(gw().port(), 60000);
      ASSERT_TRUE(b.ok()) << b.error;
      auto cr = b.c.create(b.root, name);
      ASSERT_TRUE(cr.transport_ok && cr.status == kNfs3Ok) << cr.status << " " << cr.error;
      std::uint64_t verf = 0;
      for (std::size_t at = 0; at < kFileBytes; at += kChunk) {
        const RawWrite w = b.c.write(cr.handle, at, data.substr(at, kChunk), kUnstable);
        ASSERT_TRUE(w.transport_ok && w.status == kNfs3Ok) << w.status << " " << w.error;
        ASSERT_EQ(w.count, kChunk);
        EXPECT_EQ(w.committed, kUnstable);
        if (at == 0) verf = w.verf;
        EXPECT_EQ(w.verf, verf);
      }
      const RawCommit cm = b.c.commit(cr.handle);
      ASSERT_TRUE(cm.transport_ok && cm.status == kNfs3Ok) << cm.status << " " << cm.error;
      ASSERT_EQ(cm.verf, verf);
    }
    const std::string path = origin().export_dir() + "/" + name;
    ASSERT_EQ(at_origin(name).size(), 0u);  // positive control: nothing flushed yet

    Process flush({*nfsgw_binary(), "flush", "--config", gw().config_path()}, setup().dir->sub("flush.log"));
    // The kill, once part of the file is on the origin's disk (a third at least:
    // some WRITEs answered) and not all of it.
    bool killed = false;
    // Polled every millisecond at most: the window (a third of the file on disk,
    // not all of it) lasts a fraction of a second on loopback.
    (void)wait_until(
        [&] {
          struct stat st {};
          const std::uint64_t size = ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
          if (size >= kFileBytes / 3 && size < kFileBytes) {
            origin().kill9();
            killed = true;
            return true;
          }
          return size >= kFileBytes || !flush.running();
        },
        seconds(60), "a third of the file on the origin's disk", milliseconds(1));
    if (killed) {
      // What the killed origin had not committed is gone: zeros in its place.
      std::error_code ec;
      const auto size = std::filesystem::file_size(path, ec);
      ASSERT_FALSE(ec) << ec.message();
      {
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        const std::string zeros(size, '\0');
        f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
        ASSERT_TRUE(f.good());
      }
      ASSERT_NE(at_origin(name), data);
      origin().start_again();
    }
    const auto code = flush.wait(seconds(180));
    ASSERT_TRUE(code.has_value()) << "nfsgw flush did not return within 180 s\n" << gw().log();
    ASSERT_EQ(*code, 0) << flush.log() << "\n" << gw().log();
    EXPECT_EQ(at_origin(name), data) << "attempt " << attempt << (killed ? " (origin killed mid-flush)" : "");
    const auto changes = write_back_counter(gw(), "verifier_changes", &why);
    ASSERT_TRUE(changes) << why;
    met = killed && *changes > *changes_before;
    std::cout << "[write_back] origin restart mid-flush, try " << attempt << ": "
              << (killed ? "killed with part of the file on its disk" : "the flush was over first")
              << ", verifier changes seen " << (*changes - *changes_before) << "\n";
    if (killed && !met) {
      // All of its WRITEs were made again to the new origin before any was
      // answered: nothing to notice, and the bytes are right (checked above).
      std::cout << "[write_back]   no WRITE was answered before the kill\n";
    }
  }
  EXPECT_TRUE(met) << "the flusher never saw the origin's verifier change in 3 tries";
  EXPECT_GE(count_of(gw().log(), "the origin's write verifier changed during the flush"), 1u);
}

// ---- a simulated power loss -----------------------------------------------------------
//
// nfsgw runs under tests/support/power_loss_preload.c, which records, for every file
// of the dirty log's directory (<cache dir>/dirty), the bytes an fsync/fdatasync
// made durable, and whether its creation or removal was made durable by an fsync of
// the directory. A round: two raw clients write (FILE_SYNC, and UNSTABLE batches
// with a COMMIT) while the flusher runs (write_back_delay 1 s: Clean records and
// segment removals happen meanwhile); nfsgw is killed with -9 at a random moment;
// then the test "loses power": each log file is cut to its durable size (or, in
// other rounds, keeps a random prefix of its unsynced tail, or all of it with a
// run of zeros inside: what a page cache written out in any order may leave),
// files whose creation was not durable go, files whose removal was not durable come
// back (with their durable bytes). nfsgw restarts, `nfsgw flush`, and the origin's
// disk must hold every write acknowledged as FILE_SYNC or COMMITted with an
// unchanged verifier (or a later write of the same bytes that was not
// acknowledged).
//
// What it does not simulate: torn or reordered sectors inside the synced part,
// lying disks, metadata of the file system itself (sizes are taken as durable with
// fdatasync, as POSIX has it), the data cache's block files and RocksDB's own files
// (a cache: after kill -9 they keep what the page cache held; they are not cut), and
// the directory's own creation (see the FINDING line: nfsgw does not fsync the cache
// directory after creating dirty/; the simulation takes the directory as durable).
// A change of the log's way of writing that the shim does not model (rename,
// O_DSYNC, O_DIRECT, sync_file_range) fails the test.

#ifndef NFSGW_POWER_LOSS_PRELOAD
#define NFSGW_POWER_LOSS_PRELOAD ""
#endif

struct PowerLossRecord {
  bool dir_durable = true;
  struct File {
    std::string name;
    std::uint64_t durable = 0;
    bool name_durable = false;
    bool live = true;
  };
  std::vector<File> files;
  std::vector<std::string> unmodelled;
};

std::optional<PowerLossRecord> read_record(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  PowerLossRecord r;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "dir") {
      int d = 1;
      ls >> d;
      r.dir_durable = d != 0;
    } else if (kind == "file") {
      PowerLossRecord::File f;
      int nd = 0;
      std::string state;
      ls >> f.name >> f.durable >> nd >> state;
      f.name_durable = nd != 0;
      f.live = state == "live";
      r.files.push_back(f);
    } else if (kind == "unmodelled") {
      std::string rest;
      std::getline(ls, rest);
      r.unmodelled.push_back(rest);
    }
  }
  return r;
}

enum class Tail { Lost, TornPrefix, Hole };

struct PowerLossOutcome {
  std::string error;  // empty when applied
  std::uint64_t bytes_cut = 0, bytes_zeroed = 0, files_removed = 0, files_back = 0;
};

/// The power loss: the dirty log's directory `dir` as the record says a machine
/// would find it after restarting.
PowerLossOutcome lose_power(const std::string& dir, const std::string& record_path, Tail tail, std::mt19937& rng) {
  namespace fs = std::filesystem;
  PowerLossOutcome out;
  const auto rec = read_record(record_path);
  if (!rec) {
    out.error = "no power-loss record at " + record_path + " (was the shim loaded?)";
    return out;
  }
  for (const auto& u : rec->unmodelled) out.error += "the dirty log did what the shim does not model:" + u + "\n";
  if (!out.error.empty()) return out;
  const std::string keep_dir = record_path + ".keep";
  std::set<std::string> listed;
  std::error_code ec;
  for (const auto& f : rec->files) {
    listed.insert(f.name);
    const std::string path = dir + "/" + f.name;
    if (!f.name_durable) {  // its creation never reached the disk
      if (fs::remove(path, ec)) ++out.files_removed;
      continue;
    }
    if (!fs::exists(path)) {  // removed, but the removal was not durable
      fs::create_hard_link(keep_dir + "/" + f.name, path, ec);
      if (ec) {
        out.error = f.name + " is gone, and no copy was kept: " + ec.message();
        return out;
      }
      ++out.files_back;
    }
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec) {
      out.error = path + ": " + ec.message();
      return out;
    }
    std::uint64_t keep = std::min(size, f.durable);
    std::uint64_t hole_at = 0, hole = 0;
    if (size > f.durable) {
      const std::uint64_t unsynced = size - f.durable;
      switch (tail) {
        case Tail::Lost: break;
        case Tail::TornPrefix: keep = f.durable + rng() % (unsynced + 1); break;
        case Tail::Hole:
          keep = size;
          hole_at = f.durable + rng() % unsynced;
          hole = 1 + rng() % std::min<std::uint64_t>(size - hole_at, 8192);
          break;
      }
    }
    out.bytes_cut += size - keep;
    if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
      out.error = "truncate " + path + ": " + std::strerror(errno);
      return out;
    }
    if (hole > 0) {
      std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(hole_at));
      const std::string zeros(hole, '\0');
      file.write(zeros.data(), static_cast<std::streamsize>(hole));
      out.bytes_zeroed += hole;
    }
  }
  // Files the record never saw were created after its last update: not durable.
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (!listed.contains(e.path().filename().string()) && fs::remove(e.path(), ec)) ++out.files_removed;
  fs::remove_all(keep_dir, ec);
  fs::remove(record_path, ec);
  return out;
}

/// Starts `g` with the shim watching `dirty_dir`, recording to `record`.
void start_under_shim(Gateway& g, const std::string& dirty_dir, const std::string& record) {
  struct Saved {
    const char* name;
    std::optional<std::string> value;
  };
  std::vector<Saved> saved;
  auto set = [&](const char* name, const std::string& value) {
    const char* old = std::getenv(name);
    saved.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    ::setenv(name, value.c_str(), 1);
  };
  set("LD_PRELOAD", NFSGW_POWER_LOSS_PRELOAD);
  set("NFSGW_POWER_LOSS_DIR", dirty_dir);
  set("NFSGW_POWER_LOSS_RECORD", record);
  if (nfsgw_sanitized()) {
    // The shim comes before ASan's runtime in the list of libraries.
    const char* old = std::getenv("ASAN_OPTIONS");
    set("ASAN_OPTIONS", (old && *old ? std::string(old) + ":" : std::string()) + "verify_asan_link_order=0");
  }
  try {
    g.start();
  } catch (...) {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it)
      it->value ? (void)::setenv(it->name, it->value->c_str(), 1) : (void)::unsetenv(it->name);
    throw;
  }
  for (auto it = saved.rbegin(); it != saved.rend(); ++it)
    it->value ? (void)::setenv(it->name, it->value->c_str(), 1) : (void)::unsetenv(it->name);
}

constexpr std::size_t kSlotBytes = 32 << 10;
constexpr unsigned kSlots = 16;

/// What a writer knows of one slot of one file: the last write acknowledged, and
/// the writes made after it that were not (any of which may be what survived).
struct Slot {
  std::string acked;
  std::vector<std::string> maybe;
};
struct PlFile {
  std::string name;
  Handle fh;
  std::vector<Slot> slots = std::vector<Slot>(kSlots);
};

struct WriterCounts {
  std::atomic<std::uint64_t> file_sync{0}, committed{0}, unacked{0};
};

/// Writes to `files` until a call gets no answer (nfsgw killed) or 20,000 calls.
/// Any answer but OK (or a COMMIT's changed verifier) goes to `error`.
void write_until_killed(std::uint16_t port, std::vector<PlFile>& files, unsigned seed, WriterCounts& counts,
                        std::string& error) {
  RawNfsConnection c;
  c.timeout_ms = 10000;
  if (!c.connect(port, kNfsProgram, 3)) return;  // killed before it began
  std::mt19937 rng(seed);
  unsigned version = 0;
  auto next_data = [&] { return pattern(kSlotBytes, seed * 100000 + ++version); };
  for (int calls = 0; calls < 20000;) {
    PlFile& f = files[rng() % files.size()];
    if (rng() % 2 == 0) {
      Slot& s = f.slots[rng() % kSlots];
      const std::uint64_t at = static_cast<std::uint64_t>(&s - f.slots.data()) * kSlotBytes;
      const std::string data = next_data();
      s.maybe.push_back(data);
      ++calls;
      const RawWrite w = c.write(f.fh, at, data, kFileSync);
      if (!w.transport_ok) return;
      if (w.status != kNfs3Ok || w.committed != kFileSync || w.count != kSlotBytes) {
        error = "FILE_SYNC WRITE answered " + std::to_string(w.status) + " committed " + std::to_string(w.committed);
        return;
      }
      s.acked = data;
      s.maybe.clear();
      ++counts.file_sync;
    } else {
      std::vector<std::pair<Slot*, std::string>> batch;
      std::uint64_t verf = 0;
      bool same = true;
      for (int i = 0; i < 3; ++i) {
        Slot& s = f.slots[rng() % kSlots];
        const std::uint64_t at = static_cast<std::uint64_t>(&s - f.slots.data()) * kSlotBytes;
        const std::string data = next_data();
        s.maybe.push_back(data);
        ++calls;
        const RawWrite w = c.write(f.fh, at, data, kUnstable);
        if (!w.transport_ok) return;
        if (w.status != kNfs3Ok || w.count != kSlotBytes) {
          error = "UNSTABLE WRITE answered " + std::to_string(w.status) + " count " + std::to_string(w.count);
          return;
        }
        if (i == 0) verf = w.verf;
        same = same && w.verf == verf;
        batch.emplace_back(&s, data);
      }
      ++calls;
      const RawCommit cm = c.commit(f.fh);
      if (!cm.transport_ok) return;
      if (cm.status != kNfs3Ok) {
        error = "COMMIT answered " + std::to_string(cm.status);
        return;
      }
      if (!same || cm.verf != verf) {
        // Within one run of nfsgw the verifier must not change.
        error = "the write verifier changed within one run of nfsgw";
        return;
      }
      for (auto& [s, data] : batch) {
        s->acked = data;
        s->maybe.clear();
      }
      counts.committed += batch.size();
    }
  }
}

/// Each slot of each file at the origin: its acknowledged bytes or a later write's.
/// The origin's bytes become what is acknowledged. Returns the problems.
std::string check_at_origin(std::vector<PlFile>& files) {
  std::string problems;
  for (auto& f : files) {
    const std::string disk = at_origin(f.name);
    for (unsigned i = 0; i < kSlots; ++i) {
      Slot& s = f.slots[i];
      const std::string got = disk.size() >= (i + 1) * kSlotBytes ? disk.substr(i * kSlotBytes, kSlotBytes) : "";
      const bool fine = got == s.acked || std::find(s.maybe.begin(), s.maybe.end(), got) != s.maybe.end();
      if (!fine && problems.size() < 2000)
        problems += f.name + " slot " + std::to_string(i) + ": not its acknowledged bytes" +
                    (got.empty() ? " (missing)" : "") + "\n";
      if (fine) {
        s.acked = got;
        s.maybe.clear();
      }
    }
  }
  return problems;
}

TEST(WriteBack, AcknowledgedWritesSurviveSimulatedPowerLosses) {
  REQUIRE_SETUP();
  const std::string shim = NFSGW_POWER_LOSS_PRELOAD;
  ASSERT_FALSE(shim.empty()) << "built without the power-loss shim";
  ASSERT_TRUE(std::filesystem::exists(shim)) << shim;
  const unsigned rounds = env_unsigned("NFSGW_POWER_LOSS_ROUNDS", 5);
  TempDir work("wb-power");
  GatewayConfig cfg = second_config();
  cfg.write_back_delay = "1s";  // the flusher cleans, and segments go, while clients write
  Gateway g(cfg, work.sub("gw"));
  const std::string dirty = g.cache_dir() + "/dirty";
  const std::string record = work.sub("power-loss-record");
  ASSERT_NO_THROW(start_under_shim(g, dirty, record));

  // nfsgw made its directory itself: whether its creation is durable.
  {
    const auto rec = read_record(record);
    ASSERT_TRUE(rec) << "the shim wrote no record: " << record;
    if (!rec->dir_durable)
      std::cout << "[write_back] FINDING: nfsgw created " << dirty << " without an fsync of " << g.cache_dir()
                << " after it: a power loss soon after the first start could lose the directory and every write "
                   "acknowledged in it. The simulation below takes the directory as durable.\n";
  }

  // Two writers with three files each, every slot written once and flushed: the base.
  constexpr unsigned kWriters = 2, kFilesEach = 3;
  std::vector<std::vector<PlFile>> files(kWriters);
  {
    RawBack b(g.port(), 30000);
    ASSERT_TRUE(b.ok()) << b.error;
    for (unsigned w = 0; w < kWriters; ++w)
      for (unsigned i = 0; i < kFilesEach; ++i) {
        PlFile f;
        f.name = "power-" + std::to_string(w) + "-" + std::to_string(i);
        auto cr = b.c.create(b.root, f.name);
        ASSERT_TRUE(cr.transport_ok && cr.status == kNfs3Ok) << cr.status << " " << cr.error;
        f.fh = cr.handle;
        for (unsigned s = 0; s < kSlots; ++s) {
          f.slots[s].acked = pattern(kSlotBytes, 1000 + w * 100 + i * 20 + s);
          const RawWrite wr = b.c.write(f.fh, s * kSlotBytes, f.slots[s].acked, kFileSync);
          ASSERT_TRUE(wr.transport_ok && wr.status == kNfs3Ok) << wr.status << " " << wr.error;
        }
        files[w].push_back(std::move(f));
      }
  }
  ASSERT_EQ(g.cli("flush", {}, seconds(120)).exit_code, 0) << g.log();
  for (auto& fs : files) ASSERT_EQ(check_at_origin(fs), "");

  std::mt19937 rng(2020);
  WriterCounts counts;
  PowerLossOutcome total;
  std::uint64_t torn_reported = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(8);
  for (unsigned round = 0; round < rounds && std::chrono::steady_clock::now() < deadline; ++round) {
    const Tail tail = round % 3 == 0 ? Tail::Lost : round % 3 == 1 ? Tail::TornPrefix : Tail::Hole;
    std::vector<std::string> errors(kWriters);
    std::vector<std::thread> writers;
    for (unsigned w = 0; w < kWriters; ++w)
      writers.emplace_back([&, w] { write_until_killed(g.port(), files[w], round * 10 + w + 1, counts, errors[w]); });
    nfsgw::test::pass_time(milliseconds(400 + rng() % 2600), "the kill lands at a random moment of the load");
    ASSERT_EQ(g.kill9(), 137);
    for (auto& t : writers) t.join();
    for (const auto& e : errors) EXPECT_EQ(e, "") << "round " << round;
    const PowerLossOutcome out = lose_power(dirty, record, tail, rng);
    ASSERT_EQ(out.error, "") << "round " << round;
    total.bytes_cut += out.bytes_cut;
    total.bytes_zeroed += out.bytes_zeroed;
    total.files_removed += out.files_removed;
    total.files_back += out.files_back;
    const std::size_t starts_before = count_of(g.log(), "torn bytes cut)");
    ASSERT_NO_THROW(start_under_shim(g, dirty, record)) << "round " << round;
    {
      // nfsgw's own account of what it found: "(N torn bytes cut)" in its start line.
      const std::string log = g.log();
      std::smatch m;
      std::string::const_iterator from = log.begin();
      std::size_t seen = 0;
      const std::regex re("\\(([0-9]+) torn bytes cut\\)");
      while (std::regex_search(from, log.end(), m, re)) {
        if (++seen > starts_before) torn_reported += std::stoull(m[1].str());
        from = m[0].second;
      }
    }
    const RunResult fl = g.cli("flush", {}, seconds(120));
    ASSERT_EQ(fl.exit_code, 0) << "round " << round << ": " << fl.output << "\n" << g.log();
    for (auto& fs : files) EXPECT_EQ(check_at_origin(fs), "") << "round " << round << "\n" << g.log();
    std::cout << "[write_back] power loss " << round << " ("
              << (tail == Tail::Lost ? "unsynced tails lost" : tail == Tail::TornPrefix ? "torn tails" : "holes")
              << "): " << out.bytes_cut << " bytes cut, " << out.bytes_zeroed << " zeroed, " << out.files_removed
              << " files removed, " << out.files_back << " back\n";
  }
  std::cout << "[write_back] power losses: " << counts.file_sync << " FILE_SYNC and " << counts.committed
            << " COMMITted writes acknowledged; " << total.bytes_cut << " unsynced bytes cut, " << torn_reported
            << " torn bytes cut by nfsgw on restart\n";
  // Positive controls: writes were acknowledged in the rounds, and the losses took
  // bytes away (unsynced tails existed when nfsgw was killed).
  EXPECT_GT(counts.file_sync + counts.committed, 0u);
  EXPECT_GT(total.bytes_cut + total.bytes_zeroed, 0u);
  EXPECT_EQ(g.stop(), 0) << g.log();
}

}  // namespace
