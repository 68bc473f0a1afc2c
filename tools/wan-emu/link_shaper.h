// Bandwidth model of one direction of the emulated WAN link, shared by every
// connection of every pair (a WAN link is one pipe, so connections compete for it).
//
// A serialisation model rather than a bursty token bucket: each chunk occupies the
// link for bytes/rate seconds, starting when it arrives or when the link becomes free,
// whichever is later; it departs when its last byte is on the wire. This is a token
// bucket with a zero-size bucket, and it makes every release time computable at
// arrival, so one timer per direction and connection is enough.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace nfsgw::wanemu {

class LinkShaper {
 public:
  using Clock = std::chrono::steady_clock;

  /// 0 means unlimited.
  void set_rate(std::uint64_t bytes_per_second) {
    rate_ = bytes_per_second;
    free_at_ = {};
  }
  std::uint64_t rate() const { return rate_; }
  bool unlimited() const { return rate_ == 0; }

  /// When a chunk of `bytes` that arrived at `arrival` has fully left the link.
  Clock::time_point depart(Clock::time_point arrival, std::size_t bytes) {
    if (rate_ == 0) return arrival;
    auto start = std::max(arrival, free_at_);
    auto busy = std::chrono::nanoseconds(
        static_cast<std::int64_t>((static_cast<long double>(bytes) * 1e9L) / rate_));
    free_at_ = start + busy;
    return free_at_;
  }

 private:
  std::uint64_t rate_ = 0;
  Clock::time_point free_at_{};
};

}  // namespace nfsgw::wanemu
