#pragma once
// Result of a run and its two renderings: one human line and one JSON object
// (for scripts: run-benchmarks.sh and the ctest checks read the JSON).
#include <cstdint>
#include <string>

#include "tools/nfsgw-bench/call_stats.h"

namespace nfsgw::bench {

struct RunReport {
  std::string mode;
  unsigned connections = 0;
  unsigned inflight = 0;
  unsigned threads = 0;
  double seconds = 0;
  CallStats stats;
  bool complete = true;          ///< walk: the tree was walked to the end
  std::uint64_t walk_entries = 0;
  std::uint64_t walk_dirs = 0;
  bool write_mode = false;       ///< seqwrite, unpack: the fields below are reported
  std::uint64_t write_bytes = 0; ///< bytes the WRITE replies acknowledged
  std::uint64_t write_files = 0; ///< files finished (committed; unpack: and SETATTR answered)
  std::uint64_t short_writes = 0;
};

std::string human_line(const RunReport& r);
/// One line of JSON: mode, calls, seconds, calls_per_s, p50_us, p99_us,
/// p999_us, max_us, errors {name: count}, and for php requests,
/// requests_per_s, req_p50_us, req_p99_us, req_p999_us; for walk complete,
/// entries, dirs; for seqwrite and unpack complete (every file finished),
/// files, bytes, short_writes.
std::string to_json(const RunReport& r);

}  // namespace nfsgw::bench
