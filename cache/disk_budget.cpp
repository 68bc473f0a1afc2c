#include "cache/disk_budget.h"

#include <algorithm>

namespace nfsgw::cache {

double DiskBudget::share_to_drop(std::uint64_t reported, Clock::time_point now) {
  // Whatever the engine gave back since the last look counts as reclaimed.
  if (reported < last_reported_) unreclaimed_ -= std::min(unreclaimed_, last_reported_ - reported);
  if (now - last_sweep_ > kReclaimWindow) unreclaimed_ = 0;
  last_reported_ = reported;
  effective_ = reported - std::min(reported, unreclaimed_);
  if (effective_ <= budget_) return 0;
  const double target = kTarget * static_cast<double>(budget_);
  return std::clamp((static_cast<double>(effective_) - target) / static_cast<double>(effective_), 0.0, 1.0);
}

void DiskBudget::swept(double share, Clock::time_point now) {
  unreclaimed_ += static_cast<std::uint64_t>(share * static_cast<double>(effective_));
  last_sweep_ = now;
}

SweepCut plan_sweep(const std::map<std::uint32_t, std::uint64_t>& bytes_by_time, std::uint64_t want) {
  SweepCut cut;
  std::uint64_t before = 0;
  for (const auto& [t, bytes] : bytes_by_time) {
    cut.cutoff = t;
    if (before + bytes >= want) {
      cut.at_cutoff = want - before;
      return cut;
    }
    before += bytes;
  }
  cut.at_cutoff = bytes_by_time.empty() ? 0 : bytes_by_time.rbegin()->second;  // everything
  return cut;
}

}  // namespace nfsgw::cache
