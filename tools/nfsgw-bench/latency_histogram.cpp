#include "tools/nfsgw-bench/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace nfsgw::bench {

std::uint64_t nearest_rank_index(std::uint64_t n, double p) {
  if (n == 0) return 0;
  if (!(p > 0.0)) return 0;  // also catches NaN
  if (p >= 100.0) return n - 1;
  // rank = ceil(p/100 * n), computed with a small tolerance so that exact
  // products such as 0.5 * 1000 are not pushed up by floating-point noise.
  double exact = p / 100.0 * static_cast<double>(n);
  auto rank = static_cast<std::uint64_t>(std::ceil(exact - 1e-9));
  rank = std::clamp<std::uint64_t>(rank, 1, n);
  return rank - 1;
}

std::size_t LatencyHistogram::bucket_of(std::uint64_t value) {
  if (value < kSubBuckets) return static_cast<std::size_t>(value);
  // Highest set bit h >= kSubBits; keep the kSubBits bits below it.
  unsigned h = 63u - static_cast<unsigned>(std::countl_zero(value));
  unsigned shift = h - kSubBits;
  std::uint64_t sub = (value >> shift) & (kSubBuckets - 1);
  return static_cast<std::size_t>((shift + 1) * kSubBuckets + sub);
}

std::uint64_t LatencyHistogram::bucket_upper(std::size_t bucket) {
  if (bucket < kSubBuckets) return bucket;
  std::uint64_t shift = bucket / kSubBuckets - 1;
  std::uint64_t sub = bucket % kSubBuckets;
  std::uint64_t lower = (kSubBuckets + sub) << shift;
  std::uint64_t width = std::uint64_t{1} << shift;
  // The very last bucket's upper edge would overflow; saturate.
  if (lower > ~std::uint64_t{0} - (width - 1)) return ~std::uint64_t{0};
  return lower + (width - 1);
}

void LatencyHistogram::record(std::uint64_t value) {
  ++buckets_[bucket_of(value)];
  ++count_;
  sum_ += value;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

std::uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  std::uint64_t index = nearest_rank_index(count_, p);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen > index) return std::clamp(bucket_upper(i), min_, max_);
  }
  return max_;
}

}  // namespace nfsgw::bench
