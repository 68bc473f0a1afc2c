// Write-back exports, end to end: a ganesha origin <- nfsgw <- libnfs clients.
//
// One nfsgw serves two exports of the same origin folder:
//   /back     writes = "back", write_back_delay = 1 h: nothing reaches the origin
//             unless flushed (`nfsgw flush`) or the budget fills;
//   /through  writes = "through": it must show /back's dirty data at once.
// What the origin holds is read from its disk, so a test sees exactly what the
// flush wrote there. Each test has a positive control: the origin's file is seen
// without the written bytes before the flush.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nfsc/libnfs.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;
using std::chrono::milliseconds;
using std::chrono::seconds;
using nfsgw::test::wait_until;

const std::string kBack = "/back";
const std::string kThrough = "/through";

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
  constexpr int kRounds = 20;
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
  // 60 s of writes, paced (one every 200 ms, 300 at most).
  const auto until = std::chrono::steady_clock::now() + seconds(60);
  nfsgw::test::Pacer pace(milliseconds(200));
  std::mt19937 rng(8);
  int writes = 0;
  while (std::chrono::steady_clock::now() < until && writes < 300) {
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

}  // namespace
