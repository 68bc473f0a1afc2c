// The arithmetic of the metadata store's disk budget sweep, kept apart from the
// store so that it can be tested alone.
//
// Records carry a coarse last-used time. When the metadata families' usage is
// above the budget, the sweep drops the least recently used records until the
// usage would be ~25% below the budget (hysteresis: no sweep per new record).
// RocksDB reports space only once compactions have dropped the deleted records,
// so the bytes a sweep freed are remembered and subtracted from the reported
// usage until it falls (or for 10 minutes), lest every sweep drop another 25%.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>

namespace nfsgw::cache {

class DiskBudget {
 public:
  /// Its time points are the metadata store's timer clock's (monotonic_clock.h).
  using Clock = std::chrono::steady_clock;
  static constexpr double kTarget = 0.75;  // of the budget, after a sweep
  static constexpr std::chrono::minutes kReclaimWindow{10};

  explicit DiskBudget(std::uint64_t budget) : budget_(budget) {}

  /// The share (0..1] of the records' bytes a sweep should drop, given the
  /// usage the engine reports now; 0 when within budget.
  double share_to_drop(std::uint64_t reported, Clock::time_point now);
  /// After a sweep: it dropped `share` of the records' bytes.
  void swept(double share, Clock::time_point now);

  std::uint64_t budget() const { return budget_; }

 private:
  const std::uint64_t budget_;
  std::uint64_t last_reported_ = 0;
  std::uint64_t effective_ = 0;
  std::uint64_t unreclaimed_ = 0;  // freed by sweeps, still counted by the engine
  Clock::time_point last_sweep_{};
};

/// Which records a sweep drops: all those last used before `cutoff`, and of those
/// used in the `cutoff` bucket itself, `at_cutoff` bytes' worth.
struct SweepCut {
  std::uint32_t cutoff = 0;
  std::uint64_t at_cutoff = 0;
};
/// `bytes_by_time`: record bytes by last-used bucket (oldest first); `want`: the
/// bytes to drop.
SweepCut plan_sweep(const std::map<std::uint32_t, std::uint64_t>& bytes_by_time, std::uint64_t want);

}  // namespace nfsgw::cache
