// The Prometheus endpoint with real parts: a ganesha origin on loopback, nfsgw
// with `[server] metrics_listen`, libnfs raw clients for the load and curl for the
// scrapes. Each family must move as the load says it should: a cold walk raises
// misses and origin calls, a warm walk raises hits and not origin calls, a missing
// name an error by status, reads the data cache's counts and sizes, and a
// retransmitted xid the duplicate request cache's counters (also in `nfsgw stats`).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/rpc_wire.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;

constexpr unsigned kDirs = 8, kFilesPerDir = 40;  // 320 files, 328 entries with the dirs

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

std::string metrics_url() { return "http://127.0.0.1:" + std::to_string(kMetricsEndpointPort) + "/metrics"; }

class MetricsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto& s = setup();
    if (!nfsgw_binary()) {
      s.skip_reason = "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";
      return;
    }
    try {
      s.origin = std::make_unique<GaneshaOrigin>(kMetricsOriginNfsPort, kMetricsOriginMountPort);
      s.origin->start();
      const std::string root = s.origin->export_dir();
      for (unsigned d = 0; d < kDirs; ++d) {
        const std::string dir = root + "/tree/d" + std::to_string(d);
        std::filesystem::create_directories(dir);
        for (unsigned f = 0; f < kFilesPerDir; ++f)
          std::ofstream(dir + "/f" + std::to_string(f)) << "file " << d << "/" << f << "\n";
      }
      std::ofstream(root + "/big") << std::string(300 * 1024, 'b');
      std::filesystem::create_directories(root + "/drc");
      s.dir = std::make_unique<TempDir>("metrics");
      GatewayConfig cfg;
      cfg.port = kMetricsGatewayPort;
      cfg.origin_url = s.origin->url();
      // Windows longer than the test: a warm walk must not need the origin.
      cfg.metadata.durations = {{"attr_ttl", "10m"}, {"dir_ttl", "10m"}, {"negative_ttl", "10m"},
                                {"access_ttl", "10m"}};
      cfg.server_extra = {{"metrics_listen", "\"127.0.0.1:" + std::to_string(kMetricsEndpointPort) + "\""}};
      s.gateway = std::make_unique<Gateway>(cfg, s.dir->sub("gw"));
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

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new MetricsEnvironment);

#define REQUIRE_SETUP()                                                    \
  do {                                                                     \
    if (!setup().skip_reason.empty()) GTEST_FAIL() << setup().skip_reason; \
  } while (0)

Gateway& gw() { return *setup().gateway; }

/// One scrape: every sample line, "name{labels}" -> value.
struct Scrape {
  std::map<std::string, double> samples;
  std::string text;

  /// The sum of the samples of `name` whose labels contain every `parts` string
  /// (such as "proc=\"LOOKUP\""); 0 when none.
  double sum(const std::string& name, const std::vector<std::string>& parts = {}) const {
    double total = 0;
    for (const auto& [series, value] : samples) {
      const auto brace = series.find('{');
      if (series.substr(0, brace) != name) continue;
      bool all = true;
      for (const auto& p : parts) all = all && series.find(p) != std::string::npos;
      if (all) total += value;
    }
    return total;
  }
  bool has(const std::string& name) const {
    for (const auto& [series, value] : samples)
      if (series.substr(0, series.find('{')) == name) return true;
    return false;
  }
};

/// GET /metrics with curl (bounded), parsed.
Scrape scrape() {
  const RunResult r = run({"curl", "-sS", "--fail", "--max-time", "10", metrics_url()}, std::chrono::seconds(15));
  Scrape s;
  s.text = r.output;
  EXPECT_EQ(r.exit_code, 0) << "curl: " << r.output;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    s.samples[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
  }
  return s;
}

/// What a walk did: calls sent and how many of them failed.
struct WalkResult {
  unsigned calls = 0, failures = 0;
};

/// LOOKUP + GETATTR + ACCESS of every file under /tree, and READDIRPLUS of its dirs,
/// over one connection.
WalkResult walk(RawNfsConnection& c, const Handle& root) {
  WalkResult w;
  auto ok = [&w](const RawStatus& s) {
    ++w.calls;
    if (s.status != 0) ++w.failures;
  };
  const RawLookup tree = c.lookup(root, "tree");
  ok(tree);
  for (unsigned d = 0; d < kDirs; ++d) {
    const RawLookup dir = c.lookup(tree.handle, "d" + std::to_string(d));
    ok(dir);
    ok(c.readdirplus_all(dir.handle));
    for (unsigned f = 0; f < kFilesPerDir; ++f) {
      const RawLookup file = c.lookup(dir.handle, "f" + std::to_string(f));
      ok(file);
      ok(c.getattr(file.handle));
      ok(c.access(file.handle));
    }
  }
  return w;
}

struct Client {
  RawNfsConnection conn;
  Handle root;
  std::string error;
  Client() {
    const RawMount m = mount_root(kMetricsGatewayPort, "/export");
    if (m.status != 0) {
      error = "MNT failed: " + std::to_string(m.status);
      return;
    }
    root = m.root;
    if (!conn.connect(kMetricsGatewayPort, kNfsProgram, 3)) error = "connect failed: " + conn.error();
  }
};

double origin_calls(const Scrape& s) { return s.sum("nfsgw_origin_calls_total"); }
double origin_timed(const Scrape& s) { return s.sum("nfsgw_origin_call_duration_seconds_count"); }

TEST(Metrics, WalksMoveHitsMissesOriginCallsAndLatencyAsTheyShould) {
  REQUIRE_SETUP();
  Client c;
  ASSERT_TRUE(c.error.empty()) << c.error;
  const Scrape before = scrape();
  ASSERT_TRUE(before.has("nfsgw_connections")) << before.text;
  EXPECT_GE(before.sum("nfsgw_connections"), 1) << "this test's connection is open";

  // Scrapes during the cold walk: each must answer, and see calls going on.
  std::atomic<bool> done{false};
  std::vector<Scrape> during;
  std::thread scraper([&] {
    nfsgw::test::Pacer pace(std::chrono::milliseconds(100));  // one scrape every 100 ms
    for (int i = 0; i < 100 && !done.load(); ++i) {  // bounded: at most 100 scrapes
      during.push_back(scrape());
      pace.next();
    }
  });
  const WalkResult cold = walk(c.conn, c.root);
  done = true;
  scraper.join();
  ASSERT_EQ(cold.failures, 0u);
  ASSERT_FALSE(during.empty());
  for (const auto& s : during) EXPECT_TRUE(s.has("nfsgw_calls_in_flight")) << s.text;
  const Scrape after_cold = scrape();

  // The cold walk: the cache missed and asked the origin (the positive control).
  EXPECT_GE(after_cold.sum("nfsgw_cache_misses_total", {"proc=\"LOOKUP\""}) -
                before.sum("nfsgw_cache_misses_total", {"proc=\"LOOKUP\""}),
            kDirs)
      << after_cold.text;
  EXPECT_GT(origin_calls(after_cold), origin_calls(before)) << after_cold.text;
  EXPECT_GT(origin_timed(after_cold), origin_timed(before)) << "the origin's latency histogram moved";
  EXPECT_GT(after_cold.sum("nfsgw_cache_entries", {"kind=\"metadata\"", "tier=\"memory\""}), kDirs * kFilesPerDir)
      << after_cold.text;
  EXPECT_GT(after_cold.sum("nfsgw_cache_bytes", {"kind=\"metadata\"", "tier=\"memory\""}), 0);

  // The warm walk: hits, and not one origin call.
  const WalkResult warm = walk(c.conn, c.root);
  ASSERT_EQ(warm.failures, 0u);
  const Scrape after_warm = scrape();
  const double hits = after_warm.sum("nfsgw_cache_hits_total") - after_cold.sum("nfsgw_cache_hits_total");
  EXPECT_GE(hits, warm.calls) << "every call of the warm walk is a hit\n" << after_warm.text;
  EXPECT_EQ(origin_calls(after_warm), origin_calls(after_cold)) << after_warm.text;
  EXPECT_EQ(origin_timed(after_warm), origin_timed(after_cold)) << "no origin call was timed";
  EXPECT_EQ(after_warm.sum("nfsgw_cache_misses_total"), after_cold.sum("nfsgw_cache_misses_total"));
  // Every call the walk made is in the client-side histogram, in the first bucket
  // for the ones answered from memory.
  const double timed = after_warm.sum("nfsgw_call_duration_seconds_count") -
                       after_cold.sum("nfsgw_call_duration_seconds_count");
  EXPECT_GE(timed, warm.calls);
  const double fast = after_warm.sum("nfsgw_call_duration_seconds_bucket", {"proc=\"LOOKUP\"", "le=\"0.0001\""}) -
                      after_cold.sum("nfsgw_call_duration_seconds_bucket", {"proc=\"LOOKUP\"", "le=\"0.0001\""});
  EXPECT_GE(fast, kDirs * kFilesPerDir) << "cached LOOKUPs are answered at once";
}

TEST(Metrics, AMissingNameIsCountedAsAnErrorByStatus) {
  REQUIRE_SETUP();
  Client c;
  ASSERT_TRUE(c.error.empty()) << c.error;
  const Scrape before = scrape();
  const std::string noent = "status=\"NFS3ERR_NOENT\"";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c.conn.lookup(c.root, "not-there").status, 2u);
  const Scrape after = scrape();
  EXPECT_EQ(after.sum("nfsgw_errors_total", {"proc=\"LOOKUP\"", noent}) -
                before.sum("nfsgw_errors_total", {"proc=\"LOOKUP\"", noent}),
            3)
      << after.text;
  // Control: a name that exists is no error.
  EXPECT_EQ(c.conn.lookup(c.root, "big").status, 0u);
  EXPECT_EQ(scrape().sum("nfsgw_errors_total", {"proc=\"LOOKUP\""}), after.sum("nfsgw_errors_total", {"proc=\"LOOKUP\""}));
}

TEST(Metrics, ReadsMoveTheDataCacheCountsAndItsSize) {
  REQUIRE_SETUP();
  Client c;
  ASSERT_TRUE(c.error.empty()) << c.error;
  const RawLookup big = c.conn.lookup(c.root, "big");
  ASSERT_EQ(big.status, 0u);
  auto read_all = [&] {
    for (std::uint64_t off = 0; off < 300 * 1024; off += 64 * 1024) ASSERT_EQ(c.conn.read(big.handle, off, 64 * 1024).status, 0u);
  };
  const Scrape s0 = scrape();
  read_all();
  const Scrape s1 = scrape();
  read_all();
  const Scrape s2 = scrape();
  EXPECT_GT(s1.sum("nfsgw_data_fetched_bytes_total"), s0.sum("nfsgw_data_fetched_bytes_total")) << s1.text;
  EXPECT_GE(s1.sum("nfsgw_cache_bytes", {"kind=\"data\""}), 300 * 1024) << s1.text;
  EXPECT_GT(s1.sum("nfsgw_cache_entries", {"kind=\"data\""}), 0);
  EXPECT_EQ(s2.sum("nfsgw_data_fetched_bytes_total"), s1.sum("nfsgw_data_fetched_bytes_total"))
      << "the second read comes from the cache";
  EXPECT_EQ(s2.sum("nfsgw_data_read_hits_total") - s1.sum("nfsgw_data_read_hits_total"), 5) << s2.text;
  EXPECT_GE(s2.sum("nfsgw_data_served_bytes_total") - s1.sum("nfsgw_data_served_bytes_total"), 300 * 1024);
  EXPECT_GT(s2.sum("nfsgw_call_duration_seconds_count", {"proc=\"READ\""}), 0);
}

/// A REMOVE of `name` in `dir` with `xid`, AUTH_SYS root (rpc_wire.h).
std::vector<std::uint8_t> remove_record(std::uint32_t xid, const Handle& dir, const std::string& name) {
  XdrOut x = rpc_call(xid, kNfsProgram, 3, 12);
  x.opaque(dir).string(name);
  return record(x.bytes);
}

/// The NFS status of the reply to `xid` on `c`; ~0u when there is none.
std::uint32_t reply_status(TcpConn& c, std::uint32_t xid) {
  const auto rec = c.read_record(30000);
  if (!rec) return ~0u;
  const ParsedReply rep = parse_reply(*rec);
  if (!rep.ok || rep.xid != xid || rep.reply_stat != 0 || rep.accept_stat != 0 || rep.results.size() < 4) return ~0u;
  return (std::uint32_t{rep.results[0]} << 24) | (std::uint32_t{rep.results[1]} << 16) |
         (std::uint32_t{rep.results[2]} << 8) | rep.results[3];
}

TEST(Metrics, ARetransmittedXidMovesTheDuplicateCacheCounters) {
  REQUIRE_SETUP();
  Client c;
  ASSERT_TRUE(c.error.empty()) << c.error;
  const std::string origin_drc = setup().origin->export_dir() + "/drc";
  const RawLookup drc = c.conn.lookup(c.root, "drc");
  ASSERT_EQ(drc.status, 0u);
  std::ofstream(origin_drc + "/victim") << "x";
  const Scrape before = scrape();

  // Control: a first call is executed and remembered, nothing replayed.
  TcpConn conn(kMetricsGatewayPort);
  const std::uint32_t xid = 0x6d657472;
  ASSERT_TRUE(conn.send_all(remove_record(xid, drc.handle, "victim")));
  EXPECT_EQ(reply_status(conn, xid), 0u);
  const Scrape first = scrape();
  EXPECT_EQ(first.sum("nfsgw_duplicate_cache_replays_total"), before.sum("nfsgw_duplicate_cache_replays_total"));
  EXPECT_GT(first.sum("nfsgw_duplicate_cache_entries"), 0) << first.text;

  // The same xid again: the kept reply (OK, not NOENT), and the counter moves.
  ASSERT_TRUE(conn.send_all(remove_record(xid, drc.handle, "victim")));
  EXPECT_EQ(reply_status(conn, xid), 0u);
  const Scrape again = scrape();
  EXPECT_EQ(again.sum("nfsgw_duplicate_cache_replays_total") - before.sum("nfsgw_duplicate_cache_replays_total"), 1)
      << again.text;

  // Two copies at once: the second waits for the first or, if it came late, is
  // replayed; either way one of the two counters moves by one.
  std::ofstream(origin_drc + "/victim2") << "x";
  auto twice = remove_record(xid + 1, drc.handle, "victim2");
  const auto once = twice;
  twice.insert(twice.end(), once.begin(), once.end());
  ASSERT_TRUE(conn.send_all(twice));
  EXPECT_EQ(reply_status(conn, xid + 1), 0u);
  EXPECT_EQ(reply_status(conn, xid + 1), 0u);
  const Scrape both = scrape();
  const auto dup = [](const Scrape& s) {
    return s.sum("nfsgw_duplicate_cache_replays_total") + s.sum("nfsgw_duplicate_cache_waits_total");
  };
  EXPECT_EQ(dup(both) - dup(again), 1) << both.text;

  // `nfsgw stats` shows the same counts.
  const RunResult stats = gw().cli("stats");
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_NE(stats.output.find("duplicate request cache"), std::string::npos) << stats.output;
  const auto replayed = static_cast<long>(both.sum("nfsgw_duplicate_cache_replays_total"));
  EXPECT_NE(stats.output.find(std::to_string(replayed) + " answered with the kept reply"), std::string::npos)
      << stats.output;
}

TEST(Metrics, UnknownPathsAreNotFoundAndTheEndpointKeepsServing) {
  REQUIRE_SETUP();
  const RunResult r = run({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                           "http://127.0.0.1:" + std::to_string(kMetricsEndpointPort) + "/nothing"},
                          std::chrono::seconds(15));
  EXPECT_EQ(r.output, "404") << r.output;
  EXPECT_TRUE(scrape().has("nfsgw_connections"));
}

TEST(Metrics, AnEndpointAddressInUseStopsTheStartWithAClearMessage) {
  REQUIRE_SETUP();
  TempDir dir("metrics-second");
  GatewayConfig cfg = gw().config();
  cfg.port = kMetricsSecondGatewayPort;
  Gateway second(cfg, dir.sub("gw"));  // the same metrics_listen as the running one
  std::string error;
  try {
    second.start();
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("server.metrics_listen: cannot listen on 127.0.0.1:" + std::to_string(kMetricsEndpointPort)),
            std::string::npos)
      << error;
  EXPECT_FALSE(second.running());
}

}  // namespace
