#pragma once
// The walk mode, an `ls -lR` of the working folder: READDIRPLUS every folder
// (following cookies page by page, descending into subfolders as they are
// found), then GETATTR every entry. Listing pages and GETATTRs run in
// parallel over all connections, like a parallel tree walker would.
#include <cstdint>

#include "tools/nfsgw-bench/nfs_connection.h"
#include "tools/nfsgw-bench/task_queue.h"

namespace nfsgw::bench {

struct WalkCounters {
  std::uint64_t dirs = 0;     ///< folders listed to the end
  std::uint64_t entries = 0;  ///< entries seen, without . and ..
};

/// Queues the walk of dir; counters must outlive the queue's run.
void push_walk(TaskQueue& q, const FileHandle& dir, WalkCounters* counters);

}  // namespace nfsgw::bench
