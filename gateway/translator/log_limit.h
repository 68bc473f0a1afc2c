// A warning that a client can trigger at will (a forged handle, a refused mount)
// must not let that client flood the log: at most `burst` lines per `period`, and
// the first line after a quiet spell says how many were left out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>

namespace nfsgw {

class LogLimit {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  LogLimit(unsigned burst, std::chrono::milliseconds period, Clock clock = &std::chrono::steady_clock::now)
      : burst_(burst),
        period_ticks_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(period).count()),
        clock_(std::move(clock)) {}

  /// Whether to log this occurrence. When it says yes, `dropped` is how many were
  /// left out since the last line logged (0 mostly).
  bool allow(std::uint64_t& dropped) {
    const auto now = clock_().time_since_epoch().count();
    auto start = window_start_.load(std::memory_order_relaxed);
    if (now - start >= period_ticks_ &&
        window_start_.compare_exchange_strong(start, now, std::memory_order_relaxed)) {
      in_window_.store(0, std::memory_order_relaxed);
    }
    if (in_window_.fetch_add(1, std::memory_order_relaxed) < burst_) {
      dropped = dropped_.exchange(0, std::memory_order_relaxed);
      return true;
    }
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

 private:
  const unsigned burst_;
  const std::int64_t period_ticks_;
  Clock clock_;
  std::atomic<std::int64_t> window_start_{INT64_MIN / 2};
  std::atomic<unsigned> in_window_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace nfsgw
