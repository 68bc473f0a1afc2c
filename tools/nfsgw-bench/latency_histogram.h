#pragma once
// Latency histogram for the load generator.
//
// Why a histogram and not a vector of samples: a run is bounded by time, not by
// count, and at tens of thousands of calls per second a long run would need
// hundreds of megabytes of samples. A log-linear histogram keeps memory fixed
// (64 KiB) with a relative error below 1/kSubBuckets, and two of them merge by
// adding counts, which is how per-thread results are combined.
#include <array>
#include <cstddef>
#include <cstdint>

namespace nfsgw::bench {

/// Index (0-based) of the nearest-rank p-th percentile in a sorted list of n
/// values: the smallest rank r with r >= p/100 * n, minus one. p is clamped to
/// [0, 100]; n must be > 0.
std::uint64_t nearest_rank_index(std::uint64_t n, double p);

class LatencyHistogram {
 public:
  /// Values below kSubBuckets are stored exactly; above, each power of two is
  /// split into kSubBuckets equal buckets.
  static constexpr unsigned kSubBits = 7;
  static constexpr std::uint64_t kSubBuckets = 1u << kSubBits;
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) * kSubBuckets;

  void record(std::uint64_t value);
  void merge(const LatencyHistogram& other);

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }

  /// Nearest-rank percentile (p in [0, 100]); 0 when empty. The answer is the
  /// upper edge of the bucket holding that rank, never above max() nor below
  /// min(), so it is exact below kSubBuckets and within 1/kSubBuckets above.
  std::uint64_t percentile(double p) const;

  /// Bucket mapping, exposed for tests.
  static std::size_t bucket_of(std::uint64_t value);
  static std::uint64_t bucket_upper(std::size_t bucket);

 private:
  std::array<std::uint64_t, kBuckets> buckets_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
};

}  // namespace nfsgw::bench
