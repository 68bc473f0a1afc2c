// `nfsgw stats`: each layer's counts (gateway/stats/stats_report.h), composed as
// a table for people or as JSON.
#pragma once

#include <cstdint>
#include <string>

#include "gateway/stats/stats_report.h"

namespace nfsgw::admin {

/// "0 B", "512 B", "1.5 KiB", "12.0 MiB", ... (powers of 1024).
std::string format_size(std::uint64_t bytes);

/// Per export: a header (path, cache on/off, consistency) and one row per
/// procedure that had calls (calls, hits, misses, revalidations, origin calls,
/// hit %); then the store: entries and bytes per record kind in memory and on
/// disk, evictions, and whether the disk failed; then the data store, and the
/// duplicate request cache (calls remembered, retransmissions replayed and
/// waited) and the write-back section (dirty data, the dirty log against its
/// budget, what was absorbed and flushed, the flusher's trouble) when the report
/// has them. Lines end with '\n'.
std::string format_stats_text(const stats::Report& report);

/// The same figures as one line of JSON (sizes in bytes; procedures without calls
/// are left out), '\n' included.
std::string format_stats_json(const stats::Report& report);

}  // namespace nfsgw::admin
