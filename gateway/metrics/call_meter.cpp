#include "gateway/metrics/call_meter.h"

namespace nfsgw::metrics {

namespace {
// Bucket bounds in nanoseconds, for the hot path's integer compare.
constexpr std::array<std::uint64_t, kLatencyBounds.size()> bounds_nanos() {
  std::array<std::uint64_t, kLatencyBounds.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint64_t>(kLatencyBounds[i] * 1e9 + 0.5);
  return out;
}
constexpr auto kBoundsNanos = bounds_nanos();
}  // namespace

int error_index(nfs3::Status s) {
  if (s == nfs3::Status::Ok) return -1;
  for (std::size_t i = 0; i < kErrorStatuses.size(); ++i)
    if (kErrorStatuses[i] == s) return static_cast<int>(i);
  return static_cast<int>(kErrorStatuses.size());
}

std::size_t CallMeter::bucket_of(std::uint64_t nanos) {
  std::size_t i = 0;
  while (i < kBoundsNanos.size() && nanos > kBoundsNanos[i]) ++i;
  return i;
}

CallSnapshot CallMeter::snapshot(nfs3::Proc proc) const {
  CallSnapshot out;
  std::uint64_t nanos = 0;
  for (const auto& s : stripes_) {
    const auto& p = s.procs[static_cast<std::size_t>(proc)];
    for (std::size_t b = 0; b < kBuckets; ++b) out.buckets[b] += p.buckets[b].load(std::memory_order_relaxed);
    nanos += p.sum_nanos.load(std::memory_order_relaxed);
    for (std::size_t e = 0; e < out.errors.size(); ++e) out.errors[e] += p.errors[e].load(std::memory_order_relaxed);
  }
  for (const auto n : out.buckets) out.count += n;
  out.sum_seconds = static_cast<double>(nanos) / 1e9;
  return out;
}

}  // namespace nfsgw::metrics
