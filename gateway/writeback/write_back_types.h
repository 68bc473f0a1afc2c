// What the write-back machinery (gateway/writeback/) shows to operations: the
// counts `nfsgw stats` and the metrics report, and what `nfsgw flush` waits on.
// Plain values, no behaviour: the admin socket, the CLI and the metrics read
// these without knowing the layer or the flusher.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace nfsgw::writeback {

/// The dirty state and the flusher's work, for the whole gateway (the dirty log is
/// shared by every export).
struct WriteBackCounts {
  std::uint64_t dirty_bytes = 0;    // bytes acknowledged and not yet committed at the origin
  std::uint64_t dirty_files = 0;
  std::uint64_t log_bytes = 0;      // the dirty log's size on disk (counted against the budget)
  std::uint64_t budget_bytes = 0;   // [cache] dirty_max_gb
  std::uint64_t oldest_dirty_age_ms = 0;  // 0 when nothing is dirty
  std::uint64_t writes_absorbed = 0;      // WRITEs answered from the dirty log
  std::uint64_t bytes_absorbed = 0;
  std::uint64_t flushed_bytes = 0;        // committed at the origin and cleaned
  std::uint64_t flushed_files = 0;        // files that became clean
  std::uint64_t flush_writes = 0;         // WRITEs the flusher sent to the origin
  std::uint64_t flush_commits = 0;
  std::uint64_t retries = 0;              // extents sent again (error, origin verifier changed)
  std::uint64_t verifier_changes = 0;     // the origin's COMMIT verifier differed from its WRITEs'
  std::uint64_t conflicts = 0;            // the origin's copy changed behind nfsgw before a flush
  std::uint64_t stale_dropped = 0;        // files gone at the origin (STALE): their dirty bytes dropped
  std::uint64_t budget_waits = 0;         // WRITEs that waited for room in the log
  std::uint64_t budget_jukebox = 0;       // of them, answered JUKEBOX after the bounded wait
  std::uint64_t log_errors = 0;           // the dirty log could not be written (WRITE answered with an error)
};

/// What a `nfsgw flush` has left, shared between the flush and the admin session
/// that reports it once a second.
struct FlushProgress {
  std::atomic<std::uint64_t> files_left{0}, bytes_left{0};  // dirty in the flush's scope now
  std::atomic<std::uint64_t> bytes_flushed{0};              // cleaned since the flush started
};

struct FlushOutcome {
  /// Everything dirty in the scope when the flush started is committed at the origin.
  bool ok = false;
  std::string message;  // one line for the operator
};

}  // namespace nfsgw::writeback
