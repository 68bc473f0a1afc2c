#include "tools/nfsgw-bench/load_driver.h"

#include <algorithm>

namespace nfsgw::bench {

DriveResult drive(const std::vector<Connection*>& conns, Workload& wl, CallStats& stats,
                  const DriveLimits& limits) {
  DriveResult res;
  res.start = Clock::now();
  std::vector<unsigned> units(conns.size(), 0);
  std::size_t outstanding = 0;
  bool stopping = false;
  Clock::time_point drain_deadline{};
  const unsigned per_unit = std::max(1u, wl.calls_per_unit());
  const bool record_requests = per_unit > 1;

  auto stop = [&](Clock::time_point now) {
    if (!stopping) {
      stopping = true;
      drain_deadline = now + limits.drain_timeout;
    }
  };

  auto refill = [&]() {
    auto now = Clock::now();
    if (stopping) return;
    if (now >= limits.stop_at || !wl.failure().empty()) return stop(now);
    for (std::size_t i = 0; i < conns.size() && !stopping; ++i) {
      while (units[i] < limits.inflight && wl.has_work()) {
        if (limits.count_limit != 0 && limits.issued != nullptr) {
          std::uint64_t before = limits.issued->fetch_add(per_unit);
          if (before >= limits.count_limit) return stop(now);
        }
        auto unit_start = Clock::now();
        ++units[i];
        ++outstanding;
        bool queued = wl.start(*conns[i], [&, i, unit_start]() {
          --units[i];
          --outstanding;
          if (record_requests) {
            ++stats.requests;
            auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - unit_start);
            stats.request_latency_ns.record(static_cast<std::uint64_t>(ns.count()));
          }
        });
        if (!queued) {
          --units[i];
          --outstanding;
          res.ok = false;
          res.error = "libnfs refused to queue a call";
          return stop(now);
        }
      }
    }
  };

  while (true) {
    refill();
    if (outstanding == 0) {
      if (stopping) break;
      if (!wl.has_work()) {
        res.ran_dry = true;
        break;
      }
    }
    auto now = Clock::now();
    if (stopping && now >= drain_deadline) {
      res.ok = false;
      res.error = std::to_string(outstanding) + " unit(s) still unanswered " +
                  std::to_string(limits.drain_timeout.count() / 1000.0) + " s after the stop";
      break;
    }
    auto until = stopping ? drain_deadline : limits.stop_at;
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now) +
                std::chrono::milliseconds(1);
    if (!poll_once(conns, std::clamp(wait, std::chrono::milliseconds(0), std::chrono::milliseconds(100)))) {
      res.ok = false;
      res.error = "connection failed: " + first_connection_error(conns);
      break;
    }
  }
  res.end = Clock::now();
  if (res.ok && !wl.failure().empty()) {
    res.ok = false;
    res.error = wl.failure();
  }
  return res;
}

}  // namespace nfsgw::bench
