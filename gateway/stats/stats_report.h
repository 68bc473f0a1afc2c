// What `nfsgw stats` (gateway/admin/stats_format.h) and the metrics endpoint
// (gateway/metrics/metrics_collector.h) report, composed from each layer's own
// counts: per export the metadata cache's (metacache/metacache_stats.h) and the
// data cache's (datacache/data_stats.h); for the gateway the duplicate request
// cache's (rpc/duplicate_cache.h), the usage of the two stores (cache/) and the
// write-back machinery's counts (writeback/write_back_types.h). No
// layer's stats carry another's: they meet only here.
#pragma once

#include <optional>
#include <vector>

#include "cache/block_store.h"
#include "cache/metadata_store.h"
#include "gateway/datacache/data_stats.h"
#include "gateway/metacache/metacache_stats.h"
#include "gateway/rpc/duplicate_cache.h"
#include "gateway/writeback/write_back_types.h"

namespace nfsgw::stats {

/// One export: its metadata cache's report (path, consistency, the counts per
/// procedure) and its data cache's counts, when it has a data cache.
struct ExportStats {
  metacache::ExportReport metadata;
  std::optional<datacache::DataCounts> data;
};

struct Report {
  std::vector<ExportStats> exports;
  cache::StoreUsage store;                              // the metadata store
  std::optional<cache::BlockUsage> blocks;              // the data cache's store, when there is one
  std::optional<rpc::DuplicateCacheCounts> duplicates;  // when the gateway has one
  std::optional<writeback::WriteBackCounts> write_back;  // when the dirty log is open
};

}  // namespace nfsgw::stats
