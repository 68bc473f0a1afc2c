#pragma once
// Runs a Workload over the connections of one thread: keeps `inflight` units
// outstanding on each connection until the stop time (or the shared --count
// budget, or a finite workload running dry), then drains what is in flight,
// bounded by the drain timeout so a silent server cannot hang the bench.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/nfsgw-bench/call_stats.h"
#include "tools/nfsgw-bench/event_loop.h"
#include "tools/nfsgw-bench/workload.h"

namespace nfsgw::bench {

struct DriveLimits {
  Clock::time_point stop_at;               ///< no new units after this
  std::chrono::milliseconds drain_timeout{10000};
  unsigned inflight = 16;                  ///< units per connection
  std::atomic<std::uint64_t>* issued = nullptr;  ///< shared call budget counter
  std::uint64_t count_limit = 0;           ///< 0: no limit
};

struct DriveResult {
  bool ok = true;
  std::string error;
  bool ran_dry = false;  ///< the workload had no more work (finite workloads)
  Clock::time_point start;
  Clock::time_point end;  ///< when the last unit finished
  double seconds() const { return std::chrono::duration<double>(end - start).count(); }
};

/// Per-unit latencies go to stats.request_latency_ns when a unit has more
/// than one call; per-call latencies are recorded by the connections, which
/// must already point at `stats`.
DriveResult drive(const std::vector<Connection*>& conns, Workload& wl, CallStats& stats,
                  const DriveLimits& limits);

}  // namespace nfsgw::bench
