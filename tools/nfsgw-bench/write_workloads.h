#pragma once
// The write modes (bench_options.h, usage_text): seqwrite, one file per connection
// written like cp onto a kernel mount (CREATE, UNSTABLE WRITEs with a window in
// flight, COMMIT), and unpack, small files one request each like tar -x (CREATE,
// WRITE, COMMIT, SETATTR). Both count what was written, and fail the run (the
// Workload's failure()) on any non-OK answer, since a timing of failed writes
// means nothing.
#include <cstdint>
#include <memory>
#include <string>

#include "tools/nfsgw-bench/bench_options.h"
#include "tools/nfsgw-bench/load_workloads.h"
#include "tools/nfsgw-bench/workload.h"

namespace nfsgw::bench {

/// What a thread's write workload did; merged over threads into the report.
struct WriteCounters {
  std::uint64_t bytes = 0;         ///< acknowledged by WRITE replies (their count)
  std::uint64_t files = 0;         ///< files finished (COMMIT, and unpack's SETATTR, answered)
  std::uint64_t short_writes = 0;  ///< WRITEs answered with fewer bytes (the rest was sent again)
};

std::string seqwrite_name(unsigned i);
std::string unpack_name(unsigned i);

/// seqwrite: thread `thread` of `threads` writes the files of the connections
/// i < o.connections with i % threads == thread, one unit (file) per connection;
/// the driver must keep one unit in flight per connection (the window of WRITEs
/// is the workload's own: o.inflight). unpack: the files i < o.files with
/// i % threads == thread. `counters` must outlive the run.
std::unique_ptr<Workload> make_write_workload(const Options& o, const RunData& data, unsigned thread,
                                              unsigned threads, WriteCounters* counters);

/// The time unpack's SETATTR gives files with --setattr times (2026-01-01 00:00 UTC).
inline constexpr std::uint32_t kUnpackMtime = 1767225600;

}  // namespace nfsgw::bench
