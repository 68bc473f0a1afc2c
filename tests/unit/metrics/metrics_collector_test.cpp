// The exposition of MetricsCollector: from fake sources, the text Prometheus
// scrapes carries each family with its type, labels and values, and only
// conventional names.
#include <gtest/gtest.h>

#include <regex>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <prometheus/text_serializer.h>

#include "gateway/metrics/metrics_collector.h"

namespace nfsgw::metrics {
namespace {

stats::Report sample_report() {
  stats::Report r;
  metacache::ExportReport e;
  e.path = "/export";
  e.cache_enabled = true;
  e.procs[static_cast<std::size_t>(nfs3::Proc::Getattr)] = {200, 150, 50, 7, 57};
  e.procs[static_cast<std::size_t>(nfs3::Proc::Lookup)] = {100, 25, 75, 0, 75};
  datacache::DataCounts data;
  data.reads = 40;
  data.read_hits = 30;
  data.bytes_from_cache = 3u << 20;
  data.bytes_fetched = 12u << 20;
  r.exports.push_back({e, data});
  metacache::ExportReport off;
  off.path = "/scratch";
  off.procs[static_cast<std::size_t>(nfs3::Proc::Getattr)] = {9, 9, 0, 0, 0};  // not shown: cache off
  r.exports.push_back({off});
  r.store.tables.push_back({"attr", 10, 1536, 20, 3u << 20});
  r.store.tables.push_back({"lookup", 5, 512, 1, 100});
  r.store.evicted_memory = 4;
  r.store.evicted_disk = 2;
  cache::BlockUsage b;
  b.blocks = 12;
  b.bytes = 12u << 20;
  b.budget = 16ull << 30;
  b.evicted_blocks = 7;
  r.blocks = b;
  writeback::WriteBackCounts w;
  w.dirty_bytes = 3u << 20;
  w.dirty_files = 2;
  w.log_bytes = 5u << 20;
  w.budget_bytes = 4ull << 30;
  w.oldest_dirty_age_ms = 42500;
  w.writes_absorbed = 120;
  w.bytes_absorbed = 12u << 20;
  w.flushed_bytes = 9u << 20;
  w.flushed_files = 7;
  w.flush_writes = 15;
  w.flush_commits = 3;
  w.retries = 4;
  w.verifier_changes = 1;
  w.conflicts = 2;
  w.stale_dropped = 5;
  w.budget_waits = 6;
  w.budget_jukebox = 8;
  w.log_errors = 9;
  r.write_back = w;
  return r;
}

struct Fixture {
  CallMeter client, origin, scratch;
  MetricsSources sources() {
    MetricsSources s;
    s.report = [] { return sample_report(); };
    s.server = [] { return server::CallBudget::Usage{3, 5, 4096}; };
    s.duplicates = [] { return rpc::DuplicateCacheCounts{6, 2, 40}; };
    s.exports = [this] {
      return std::vector<MetricsSources::Export>{{"/scratch", &scratch, nullptr}, {"/export", &client, &origin}};
    };
    s.locks = [] {
      LockFigures l;
      l.locks = 7;
      l.waiters = 2;
      l.owners = 5;
      l.shares = 1;
      l.events = {{"granted", 11}, {"origin_reclaim_lost", 3}};
      return l;
    };
    return s;
  }
};

std::string scrape(const MetricsCollector& c) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, c.Collect());
  return out.str();
}

void expect_line(const std::string& text, const std::string& line) {
  EXPECT_NE(text.find("\n" + line + "\n"), std::string::npos) << "missing line: " << line << "\nin:\n" << text;
}

TEST(MetricsCollector, CacheCountersPerExportAndProcedure) {
  Fixture fx;
  const std::string t = scrape(MetricsCollector(fx.sources()));
  expect_line(t, "# TYPE nfsgw_calls_total counter");
  expect_line(t, R"(nfsgw_calls_total{export="/export",proc="GETATTR"} 200)");
  expect_line(t, R"(nfsgw_cache_hits_total{export="/export",proc="GETATTR"} 150)");
  expect_line(t, R"(nfsgw_cache_misses_total{export="/export",proc="LOOKUP"} 75)");
  expect_line(t, R"(nfsgw_cache_revalidations_total{export="/export",proc="GETATTR"} 7)");
  expect_line(t, R"(nfsgw_origin_calls_total{export="/export",proc="LOOKUP"} 75)");
  EXPECT_EQ(t.find(R"(proc="READ"})"), std::string::npos) << "procedures without calls are left out";
  EXPECT_EQ(t.find(R"(nfsgw_calls_total{export="/scratch")"), std::string::npos) << "cache off: no cache counters";
  expect_line(t, R"(nfsgw_data_read_hits_total{export="/export"} 30)");
  expect_line(t, R"(nfsgw_data_served_bytes_total{export="/export"} 3145728)");
  expect_line(t, R"(nfsgw_data_fetched_bytes_total{export="/export"} 12582912)");
}

TEST(MetricsCollector, LatencyHistogramsAndErrorsByStatus) {
  Fixture fx;
  cache::AnswerBasis basis;
  fx.client.record_at_once(nfs3::Proc::Lookup, nfs3::Status::Ok, basis);
  fx.client.record_at_once(nfs3::Proc::Lookup, nfs3::Status::NoEnt, basis);
  fx.client.record(nfs3::Proc::Lookup, nfs3::Status::Ok, 20'000'000);  // 20 ms
  fx.origin.record(nfs3::Proc::Lookup, nfs3::Status::Ok, 19'000'000);
  fx.scratch.record(nfs3::Proc::Read, nfs3::Status::Io, 1'000'000'000);
  const std::string t = scrape(MetricsCollector(fx.sources()));
  expect_line(t, "# TYPE nfsgw_call_duration_seconds histogram");
  expect_line(t, R"(nfsgw_call_duration_seconds_bucket{export="/export",proc="LOOKUP",le="0.0001"} 2)");
  expect_line(t, R"(nfsgw_call_duration_seconds_bucket{export="/export",proc="LOOKUP",le="0.01"} 2)");
  expect_line(t, R"(nfsgw_call_duration_seconds_bucket{export="/export",proc="LOOKUP",le="0.025"} 3)");
  expect_line(t, R"(nfsgw_call_duration_seconds_bucket{export="/export",proc="LOOKUP",le="+Inf"} 3)");
  expect_line(t, R"(nfsgw_call_duration_seconds_count{export="/export",proc="LOOKUP"} 3)");
  expect_line(t, R"(nfsgw_call_duration_seconds_sum{export="/export",proc="LOOKUP"} 0.02)");
  expect_line(t, R"(nfsgw_origin_call_duration_seconds_count{export="/export",proc="LOOKUP"} 1)");
  expect_line(t, R"(nfsgw_errors_total{export="/export",proc="LOOKUP",status="NFS3ERR_NOENT"} 1)");
  expect_line(t, R"(nfsgw_errors_total{export="/scratch",proc="READ",status="NFS3ERR_IO"} 1)");
  expect_line(t, R"(nfsgw_call_duration_seconds_count{export="/scratch",proc="READ"} 1)");
  EXPECT_EQ(t.find(R"(nfsgw_origin_call_duration_seconds_count{export="/scratch")"), std::string::npos);
  EXPECT_EQ(t.find("nfsgw_origin_errors_total{"), std::string::npos) << "no origin errors recorded";
}

TEST(MetricsCollector, ServerDuplicateCacheAndStoreSizes) {
  Fixture fx;
  const std::string t = scrape(MetricsCollector(fx.sources()));
  expect_line(t, "nfsgw_connections 3");
  expect_line(t, "nfsgw_calls_in_flight 5");
  expect_line(t, "nfsgw_pending_bytes 4096");
  expect_line(t, "nfsgw_duplicate_cache_replays_total 6");
  expect_line(t, "nfsgw_duplicate_cache_waits_total 2");
  expect_line(t, "nfsgw_duplicate_cache_entries 40");
  expect_line(t, R"(nfsgw_cache_entries{kind="metadata",tier="memory"} 15)");
  expect_line(t, R"(nfsgw_cache_entries{kind="metadata",tier="disk"} 21)");
  expect_line(t, R"(nfsgw_cache_bytes{kind="metadata",tier="memory"} 2048)");
  expect_line(t, R"(nfsgw_cache_bytes{kind="metadata",tier="disk"} 3145828)");
  expect_line(t, R"(nfsgw_cache_entries{kind="data",tier="disk"} 12)");
  expect_line(t, R"(nfsgw_cache_bytes{kind="data",tier="disk"} 12582912)");
  expect_line(t, R"(nfsgw_cache_evictions_total{kind="metadata",tier="memory"} 4)");
  expect_line(t, R"(nfsgw_cache_evictions_total{kind="metadata",tier="disk"} 2)");
  expect_line(t, R"(nfsgw_cache_evictions_total{kind="data",tier="disk"} 7)");
  expect_line(t, "nfsgw_cache_disk_degraded 0");
}

TEST(MetricsCollector, LockGaugesAndEventsByKind) {
  Fixture fx;
  const std::string t = scrape(MetricsCollector(fx.sources()));
  expect_line(t, "nfsgw_nlm_locks 7");
  expect_line(t, "nfsgw_nlm_waiters 2");
  expect_line(t, "nfsgw_nlm_owners 5");
  expect_line(t, "nfsgw_nlm_shares 1");
  expect_line(t, R"(nfsgw_nlm_events_total{kind="granted"} 11)");
  expect_line(t, R"(nfsgw_nlm_events_total{kind="origin_reclaim_lost"} 3)");
  // Without NLM: no lock family at all.
  MetricsSources none = fx.sources();
  none.locks = nullptr;
  EXPECT_EQ(scrape(MetricsCollector(none)).find("nfsgw_nlm_"), std::string::npos);
}

TEST(MetricsCollector, WriteBackGaugesAndCounters) {
  Fixture fx;
  const std::string t = scrape(MetricsCollector(fx.sources()));
  expect_line(t, "# TYPE nfsgw_writeback_dirty_bytes gauge");
  expect_line(t, "nfsgw_writeback_dirty_bytes 3145728");
  expect_line(t, "nfsgw_writeback_dirty_files 2");
  expect_line(t, "nfsgw_writeback_log_bytes 5242880");
  expect_line(t, "nfsgw_writeback_log_budget_bytes 4294967296");
  expect_line(t, "nfsgw_writeback_oldest_dirty_age_seconds 42.5");
  expect_line(t, "# TYPE nfsgw_writeback_absorbed_writes_total counter");
  expect_line(t, "nfsgw_writeback_absorbed_writes_total 120");
  expect_line(t, "nfsgw_writeback_absorbed_bytes_total 12582912");
  expect_line(t, "nfsgw_writeback_flushed_bytes_total 9437184");
  expect_line(t, "nfsgw_writeback_flushed_files_total 7");
  expect_line(t, "nfsgw_writeback_origin_writes_total 15");
  expect_line(t, "nfsgw_writeback_origin_commits_total 3");
  expect_line(t, "nfsgw_writeback_retries_total 4");
  expect_line(t, "nfsgw_writeback_verifier_changes_total 1");
  expect_line(t, "nfsgw_writeback_conflicts_total 2");
  expect_line(t, "nfsgw_writeback_stale_dropped_total 5");
  expect_line(t, "nfsgw_writeback_budget_waits_total 6");
  expect_line(t, "nfsgw_writeback_budget_jukebox_total 8");
  expect_line(t, "nfsgw_writeback_log_errors_total 9");
  // No dirty log: no write-back families.
  MetricsSources s = fx.sources();
  s.report = [] {
    stats::Report r = sample_report();
    r.write_back.reset();
    return r;
  };
  EXPECT_EQ(scrape(MetricsCollector(s)).find("nfsgw_writeback_"), std::string::npos);
}

TEST(MetricsCollector, NamesFollowPrometheusConventions) {
  Fixture fx;
  fx.client.record(nfs3::Proc::Getattr, nfs3::Status::Stale, 1000);
  fx.origin.record(nfs3::Proc::Getattr, nfs3::Status::Stale, 1000);
  const auto families = MetricsCollector(fx.sources()).Collect();
  ASSERT_GT(families.size(), 20u);
  const std::regex name("nfsgw_[a-z_]+");
  std::set<std::string> seen;
  for (const auto& f : families) {
    EXPECT_TRUE(std::regex_match(f.name, name)) << f.name;
    EXPECT_TRUE(seen.insert(f.name).second) << "one family per name: " << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    const bool total = f.name.size() > 6 && f.name.compare(f.name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(total, f.type == prometheus::MetricType::Counter) << f.name << ": counters and only they end in _total";
    if (f.type == prometheus::MetricType::Histogram) {
      EXPECT_EQ(f.name.compare(f.name.size() - 8, 8, "_seconds"), 0) << f.name;
    }
  }
}

TEST(MetricsCollector, MetersAreMatchedToExportsByPathAfterAReload) {
  Fixture fx;
  fx.scratch.record(nfs3::Proc::Read, nfs3::Status::Ok, 1000);
  CallMeter added;
  added.record(nfs3::Proc::Getattr, nfs3::Status::Ok, 1000);
  MetricsSources s = fx.sources();
  // A reload removed /export and added /new, which the report does not know yet.
  s.exports = [&] {
    return std::vector<MetricsSources::Export>{{"/new", &added, nullptr}, {"/scratch", &fx.scratch, nullptr}};
  };
  const std::string t = scrape(MetricsCollector(s));
  expect_line(t, R"(nfsgw_call_duration_seconds_count{export="/scratch",proc="READ"} 1)");
  expect_line(t, R"(nfsgw_call_duration_seconds_count{export="/new",proc="GETATTR"} 1)");
  EXPECT_EQ(t.find(R"(nfsgw_call_duration_seconds_count{export="/export")"), std::string::npos) << t;
}

TEST(MetricsCollector, MissingSourcesLeaveTheirFamiliesOut) {
  const std::string t = scrape(MetricsCollector(MetricsSources{}));
  EXPECT_EQ(t, "");
}

}  // namespace
}  // namespace nfsgw::metrics

namespace nfsgw::metrics {
namespace {

/// Every nfsgw_ name in a file (from the line `from` on, when given), with a
/// histogram's _bucket/_count/_sum suffix taken off.
std::set<std::string> names_in(const std::string& path, const std::string& from = "") {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  if (!from.empty()) {
    const auto at = s.find("\n" + from + "\n");
    EXPECT_NE(at, std::string::npos) << path << " has no line " << from;
    if (at != std::string::npos) s = s.substr(at);
  }
  std::set<std::string> out;
  const std::regex name("nfsgw_[a-z_]*[a-z]");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), name); it != std::sregex_iterator(); ++it) {
    std::string n = it->str();
    for (const char* suffix : {"_bucket", "_count", "_sum"}) {
      const std::string sfx = suffix;
      if (n.size() > sfx.size() && n.compare(n.size() - sfx.size(), sfx.size(), sfx) == 0 &&
          n.find("_seconds") != std::string::npos)
        n.resize(n.size() - sfx.size());
    }
    out.insert(n);
  }
  return out;
}

std::set<std::string> families_of_a_busy_gateway() {
  Fixture fx;
  fx.client.record(nfs3::Proc::Getattr, nfs3::Status::Stale, 1000);
  fx.origin.record(nfs3::Proc::Getattr, nfs3::Status::Stale, 1000);
  std::set<std::string> out;
  for (const auto& f : MetricsCollector(fx.sources()).Collect()) out.insert(f.name);
  return out;
}

TEST(MetricsCollector, TheDashboardAndTheOperationsGuideNameOnlyRealFamilies) {
  const auto real = families_of_a_busy_gateway();
  const auto dashboard = names_in(NFSGW_SOURCE_DIR "/docs/grafana-nfsgw.json");
  EXPECT_GE(dashboard.size(), 10u);
  for (const auto& n : dashboard) EXPECT_TRUE(real.count(n)) << "docs/grafana-nfsgw.json uses " << n;
  const auto guide = names_in(NFSGW_SOURCE_DIR "/docs/operations.md", "## Metrics");
  for (const auto& n : guide) EXPECT_TRUE(real.count(n)) << "docs/operations.md names " << n;
  for (const auto& n : real) EXPECT_TRUE(guide.count(n)) << "docs/operations.md does not describe " << n;
}

}  // namespace
}  // namespace nfsgw::metrics
