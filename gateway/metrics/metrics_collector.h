// The Prometheus families of nfsgw, built at scrape time from the counters the
// gateway keeps anyway: each export's metadata cache and data cache counts, the
// stores' usage and the write-back counts (the same report `nfsgw stats` prints),
// the server's connections and calls in flight, the duplicate request cache, the
// lock service (NLM), and the CallMeters of the measured layers (latency and
// errors). Nothing here is on a
// call's path: Collect() runs on the endpoint's thread and only reads.
//
// Names follow Prometheus' conventions: `nfsgw_` prefix, `_total` on counters,
// base units (`_seconds`, `_bytes`); labels `export`, `proc`, `status`, `kind`,
// `tier`. docs/operations.md lists every family.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "gateway/metrics/call_meter.h"
#include "gateway/rpc/duplicate_cache.h"
#include "gateway/server/call_budget.h"
#include "gateway/stats/stats_report.h"

namespace nfsgw::metrics {

/// The lock service's figures (NLM), when nfsgw serves it.
struct LockFigures {
  std::uint64_t locks = 0, waiters = 0, owners = 0, shares = 0;  // now
  /// What it did since the start, by kind (`nfsgw_nlm_events_total{kind}`).
  std::vector<std::pair<std::string, std::uint64_t>> events;
};

/// Where the collector reads. Every function is called once per scrape, from the
/// endpoint's thread; each must be safe to call then.
struct MetricsSources {
  /// Per export the caches' counters, and the stores (its `duplicates` are not
  /// read: they come from `duplicates` below).
  std::function<stats::Report()> report;
  std::function<server::CallBudget::Usage()> server;
  std::function<rpc::DuplicateCacheCounts()> duplicates;
  struct Export {
    std::string path;                   // the `export` label
    const CallMeter* client = nullptr;  // what clients waited for
    const CallMeter* origin = nullptr;  // what the origin took
  };
  /// The exports served now (a reload adds and removes some); their cache counters
  /// are found in `report` by path.
  std::function<std::vector<Export>()> exports;
  /// Unset when nfsgw serves no NLM.
  std::function<LockFigures()> locks;
};

class MetricsCollector final : public prometheus::Collectable {
 public:
  explicit MetricsCollector(MetricsSources sources) : sources_(std::move(sources)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  MetricsSources sources_;
};

}  // namespace nfsgw::metrics
