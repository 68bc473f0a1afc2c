#pragma once
// The steady-state modes: each unit is one call on a file picked at random
// from the working set (null, getattr, lookup, lookup-missing, access, read,
// write), one PHP-like request (php: LOOKUP, GETATTR, ACCESS, READ), or one
// CREATE of a fresh name in the working folder followed by its REMOVE (churn).
// Files are picked at random or in order (--order, see file_picker.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tools/nfsgw-bench/bench_options.h"
#include "tools/nfsgw-bench/workload.h"

namespace nfsgw::bench {

/// Read-only state shared by every thread's workload during a run.
struct RunData {
  FileHandle dir_fh;
  std::vector<std::string> file_names;
  std::vector<std::string> missing_names;
  std::vector<FileHandle> file_fhs;  ///< filled for modes that need them
  std::vector<std::uint8_t> write_buf;
  std::uint64_t churn_tag = 0;  ///< churn: part of every name (working_set.h, churn_name)
};

/// Whether the mode needs RunData::file_fhs resolved before the run.
bool mode_needs_handles(Mode m);

/// For every mode but walk, for thread `thread` of `threads` (each thread gets
/// its own random seed, or its own share of the sequential order).
std::unique_ptr<Workload> make_load_workload(const Options& o, const RunData& data, unsigned thread,
                                             unsigned threads);

}  // namespace nfsgw::bench
