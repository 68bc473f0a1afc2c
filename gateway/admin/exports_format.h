// `nfsgw exports`: each export as configured and as it runs (origin, policy,
// windows, the origin connections), then the cache's sizes, which all exports
// share (one metadata store, one data store).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cache/block_store.h"
#include "cache/metadata_store.h"
#include "config/config.h"

namespace nfsgw::admin {

struct ExportStatus {
  const config::ExportConfig* config = nullptr;
  bool metadata_cache = false;  // the layer runs (metadata_cache = true)
  bool data_cache = false;      // the layer runs (data_cache = true and a block store)
  std::size_t connections_up = 0;
  bool root_known = false;      // the origin's root handle is known (MNT answered, now or before)
};

struct ExportsView {
  std::vector<ExportStatus> exports;
  cache::StoreUsage store;
  std::optional<cache::BlockUsage> blocks;
  std::uint64_t metadata_budget = 0;  // bytes on disk ([cache] metadata_max_gb)
};

/// Lines of text, each ending with '\n'.
std::string format_exports_text(const ExportsView& view);

}  // namespace nfsgw::admin
