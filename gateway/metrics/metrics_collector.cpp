#include "gateway/metrics/metrics_collector.h"

#include <limits>
#include <map>
#include <optional>

#include "protocol/nfs3_types.h"

namespace nfsgw::metrics {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

/// Families in the order they are first asked for, so the output is stable.
class Families {
 public:
  MetricFamily& get(const std::string& name, MetricType type, const std::string& help) {
    auto it = index_.find(name);
    if (it != index_.end()) return out_[it->second];
    index_.emplace(name, out_.size());
    out_.push_back(MetricFamily{name, help, type, {}});
    return out_.back();
  }
  void counter(const std::string& name, const std::string& help, Labels labels, double v) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = v;
    get(name, MetricType::Counter, help).metric.push_back(std::move(m));
  }
  void gauge(const std::string& name, const std::string& help, Labels labels, double v) {
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = v;
    get(name, MetricType::Gauge, help).metric.push_back(std::move(m));
  }
  void histogram(const std::string& name, const std::string& help, Labels labels, const CallSnapshot& s) {
    ClientMetric m;
    m.label = std::move(labels);
    m.histogram.sample_count = s.count;
    m.histogram.sample_sum = s.sum_seconds;
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      cumulative += s.buckets[b];
      ClientMetric::Bucket bucket;
      bucket.cumulative_count = cumulative;
      bucket.upper_bound =
          b < kLatencyBounds.size() ? kLatencyBounds[b] : std::numeric_limits<double>::infinity();
      m.histogram.bucket.push_back(bucket);
    }
    get(name, MetricType::Histogram, help).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> take() { return std::move(out_); }

 private:
  std::vector<MetricFamily> out_;
  std::map<std::string, std::size_t> index_;
};

double d(std::uint64_t v) { return static_cast<double>(v); }

void proc_counters(Families& f, const std::string& path, const metacache::ExportReport& e) {
  for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) {
    const auto& c = e.procs[p];
    if (c.calls == 0 && c.origin_calls == 0) continue;
    const Labels l = {{"export", path}, {"proc", nfs3::proc_name(p)}};
    f.counter("nfsgw_calls_total", "Calls that reached the export's metadata cache.", l, d(c.calls));
    f.counter("nfsgw_cache_hits_total", "Calls answered from the metadata cache, without the origin.", l, d(c.hits));
    f.counter("nfsgw_cache_misses_total", "Calls the metadata cache could not answer: the origin was asked.", l,
              d(c.misses));
    f.counter("nfsgw_cache_revalidations_total",
              "Entries whose window ended and that one GETATTR to the origin showed unchanged.", l,
              d(c.revalidations));
    f.counter("nfsgw_origin_calls_total", "Calls the metadata cache sent to the origin.", l, d(c.origin_calls));
  }
}

void data_counters(Families& f, const std::string& path, const datacache::DataCounts& c) {
  const Labels l = {{"export", path}};
  f.counter("nfsgw_data_reads_total", "READ calls that reached the export's data cache.", l, d(c.reads));
  f.counter("nfsgw_data_read_hits_total", "READs answered from cached blocks only.", l, d(c.read_hits));
  f.counter("nfsgw_data_read_misses_total", "READs that needed a block from the origin.", l, d(c.read_misses));
  f.counter("nfsgw_data_reads_forwarded_total", "READs passed to the origin as they were (not cacheable).", l,
            d(c.forwarded));
  f.counter("nfsgw_data_served_bytes_total", "Bytes answered from cached blocks.", l, d(c.bytes_from_cache));
  f.counter("nfsgw_data_fetched_bytes_total", "Bytes of whole blocks read from the origin (read-ahead included).",
            l, d(c.bytes_fetched));
  f.counter("nfsgw_data_store_errors_total", "Errors of the block store (the call went on without the cache).", l,
            d(c.store_errors));
}

void meter_families(Families& f, const MetricsSources::Export& e) {
  struct Side {
    const CallMeter* meter;
    const char* latency;
    const char* latency_help;
    const char* errors;
    const char* errors_help;
  };
  const Side sides[] = {
      {e.client, "nfsgw_call_duration_seconds",
       "Time from a call entering the export's layers to its result (answers from memory: first bucket).",
       "nfsgw_errors_total", "Calls answered to clients with an NFS error, by status."},
      {e.origin, "nfsgw_origin_call_duration_seconds", "Time the origin took to answer a call (round trip).",
       "nfsgw_origin_errors_total", "Origin calls that ended in an NFS error, by status."},
  };
  for (const Side& s : sides) {
    if (!s.meter) continue;
    for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) {
      const CallSnapshot snap = s.meter->snapshot(static_cast<nfs3::Proc>(p));
      if (snap.count == 0) continue;
      const char* proc = nfs3::proc_name(p);
      f.histogram(s.latency, s.latency_help, {{"export", e.path}, {"proc", proc}}, snap);
      for (std::size_t i = 0; i < snap.errors.size(); ++i) {
        if (snap.errors[i] == 0) continue;
        const char* status = i < kErrorStatuses.size() ? nfs3::status_name(kErrorStatuses[i]) : "other";
        f.counter(s.errors, s.errors_help, {{"export", e.path}, {"proc", proc}, {"status", status}},
                  d(snap.errors[i]));
      }
    }
  }
}

void store_families(Families& f, const stats::Report& r) {
  cache::TableUsage total;
  for (const auto& t : r.store.tables) {
    total.memory_entries += t.memory_entries;
    total.memory_bytes += t.memory_bytes;
    total.disk_entries += t.disk_entries;
    total.disk_bytes += t.disk_bytes;
  }
  const char* entries_help = "Records (metadata) or blocks (data) in the cache.";
  const char* bytes_help = "Bytes the cache holds (on disk: RocksDB's estimate for metadata).";
  f.gauge("nfsgw_cache_entries", entries_help, {{"kind", "metadata"}, {"tier", "memory"}}, d(total.memory_entries));
  f.gauge("nfsgw_cache_entries", entries_help, {{"kind", "metadata"}, {"tier", "disk"}}, d(total.disk_entries));
  f.gauge("nfsgw_cache_bytes", bytes_help, {{"kind", "metadata"}, {"tier", "memory"}}, d(total.memory_bytes));
  f.gauge("nfsgw_cache_bytes", bytes_help, {{"kind", "metadata"}, {"tier", "disk"}}, d(total.disk_bytes));
  const char* evict_help = "Entries pushed out of the cache to stay within its budget.";
  f.counter("nfsgw_cache_evictions_total", evict_help, {{"kind", "metadata"}, {"tier", "memory"}},
            d(r.store.evicted_memory));
  f.counter("nfsgw_cache_evictions_total", evict_help, {{"kind", "metadata"}, {"tier", "disk"}},
            d(r.store.evicted_disk));
  f.gauge("nfsgw_cache_disk_degraded", "1 when the metadata cache's disk failed and records are kept in memory only.",
          {}, r.store.degraded ? 1 : 0);
  if (r.blocks) {
    const auto& b = *r.blocks;
    f.gauge("nfsgw_cache_entries", entries_help, {{"kind", "data"}, {"tier", "disk"}}, d(b.blocks));
    f.gauge("nfsgw_cache_bytes", bytes_help, {{"kind", "data"}, {"tier", "disk"}}, d(b.bytes));
    f.counter("nfsgw_cache_evictions_total", evict_help, {{"kind", "data"}, {"tier", "disk"}}, d(b.evicted_blocks));
    f.gauge("nfsgw_cache_budget_bytes", "The cache's disk budget.", {{"kind", "data"}, {"tier", "disk"}},
            d(b.budget));
    f.counter("nfsgw_cache_evicted_bytes_total", "Bytes of blocks evicted to stay within the budget.",
              {{"kind", "data"}, {"tier", "disk"}}, d(b.evicted_bytes));
  }
}

/// The dirty log and the flusher, gateway-wide (the log is shared by every export).
void write_back_families(Families& f, const writeback::WriteBackCounts& w) {
  f.gauge("nfsgw_writeback_dirty_bytes", "Bytes of WRITEs acknowledged and not yet committed at the origin.", {},
          d(w.dirty_bytes));
  f.gauge("nfsgw_writeback_dirty_files", "Files with dirty data not yet committed at the origin.", {},
          d(w.dirty_files));
  f.gauge("nfsgw_writeback_log_bytes", "Size of the dirty log on disk, counted against its budget.", {},
          d(w.log_bytes));
  f.gauge("nfsgw_writeback_log_budget_bytes", "The dirty log's budget ([cache] dirty_max_gb).", {},
          d(w.budget_bytes));
  f.gauge("nfsgw_writeback_oldest_dirty_age_seconds", "Age of the oldest dirty data (0 when nothing is dirty).", {},
          static_cast<double>(w.oldest_dirty_age_ms) / 1000.0);
  f.counter("nfsgw_writeback_absorbed_writes_total", "WRITEs answered from the dirty log (writes = \"back\").", {},
            d(w.writes_absorbed));
  f.counter("nfsgw_writeback_absorbed_bytes_total", "Bytes of the WRITEs answered from the dirty log.", {},
            d(w.bytes_absorbed));
  f.counter("nfsgw_writeback_flushed_bytes_total", "Dirty bytes committed at the origin and cleaned.", {},
            d(w.flushed_bytes));
  f.counter("nfsgw_writeback_flushed_files_total", "Dirty files that became clean.", {}, d(w.flushed_files));
  f.counter("nfsgw_writeback_origin_writes_total", "WRITEs the flusher sent to the origin.", {}, d(w.flush_writes));
  f.counter("nfsgw_writeback_origin_commits_total", "COMMITs the flusher sent to the origin.", {},
            d(w.flush_commits));
  f.counter("nfsgw_writeback_retries_total",
            "Extents the flusher sent again (an error, or the origin's write verifier changed).", {}, d(w.retries));
  f.counter("nfsgw_writeback_verifier_changes_total",
            "COMMITs whose verifier differed from the WRITEs' (the origin restarted): the data was sent again.", {},
            d(w.verifier_changes));
  f.counter("nfsgw_writeback_conflicts_total",
            "Flushes that found the origin's copy changed behind nfsgw since the data was written.", {},
            d(w.conflicts));
  f.counter("nfsgw_writeback_stale_dropped_total",
            "Dirty files gone at the origin (STALE) whose dirty data was dropped.", {}, d(w.stale_dropped));
  f.counter("nfsgw_writeback_budget_waits_total", "WRITEs that waited for room in the full dirty log.", {},
            d(w.budget_waits));
  f.counter("nfsgw_writeback_budget_jukebox_total",
            "WRITEs answered NFS3ERR_JUKEBOX after waiting for room in the dirty log.", {}, d(w.budget_jukebox));
  f.counter("nfsgw_writeback_log_errors_total",
            "WRITEs answered with an error because the dirty log could not be written.", {}, d(w.log_errors));
}

}  // namespace

std::vector<MetricFamily> MetricsCollector::Collect() const {
  Families f;
  if (sources_.locks) {
    const LockFigures l = sources_.locks();
    f.gauge("nfsgw_nlm_locks", "Byte-range locks held through nfsgw (each held at the origin too).", {}, d(l.locks));
    f.gauge("nfsgw_nlm_waiters", "Blocked LOCKs waiting for a lock to be released.", {}, d(l.waiters));
    f.gauge("nfsgw_nlm_owners", "Client lock owners known (each an owner of its own at the origin).", {},
            d(l.owners));
    f.gauge("nfsgw_nlm_shares", "SHARE reservations held through nfsgw.", {}, d(l.shares));
    for (const auto& [kind, n] : l.events)
      f.counter("nfsgw_nlm_events_total", "What the lock service did, by kind (docs/operations.md lists them).",
                {{"kind", kind}}, d(n));
  }
  if (sources_.server) {
    const auto u = sources_.server();
    f.gauge("nfsgw_connections", "Client connections open.", {}, d(u.connections));
    f.gauge("nfsgw_calls_in_flight", "Client calls read and not yet answered, all connections.", {}, d(u.calls));
    f.gauge("nfsgw_pending_bytes", "Bytes held for calls in flight (records and reserved replies).", {},
            d(u.bytes));
  }
  if (sources_.duplicates) {
    const auto c = sources_.duplicates();
    f.counter("nfsgw_duplicate_cache_replays_total",
              "Retransmitted calls answered with the first call's kept reply.", {}, d(c.replayed));
    f.counter("nfsgw_duplicate_cache_waits_total",
              "Retransmitted calls that waited for the first call, still in flight.", {}, d(c.waited));
    f.gauge("nfsgw_duplicate_cache_entries", "Calls the duplicate request cache remembers now.", {}, d(c.entries));
  }
  std::optional<stats::Report> report;
  if (sources_.report) report = sources_.report();
  std::vector<MetricsSources::Export> exports;
  if (sources_.exports) exports = sources_.exports();
  // In the report's order (the configuration's); the meters by path.
  std::map<std::string, const MetricsSources::Export*> metered;
  for (const auto& e : exports) metered[e.path] = &e;
  if (report) {
    for (const auto& [x, data] : report->exports) {
      if (auto it = metered.find(x.path); it != metered.end()) {
        meter_families(f, *it->second);
        metered.erase(it);
      }
      if (x.cache_enabled) proc_counters(f, x.path, x);
      if (data) data_counters(f, x.path, *data);
    }
  }
  for (const auto& [path, e] : metered) meter_families(f, *e);
  if (report) store_families(f, *report);
  if (report && report->write_back) write_back_families(f, *report->write_back);
  return f.take();
}

}  // namespace nfsgw::metrics
