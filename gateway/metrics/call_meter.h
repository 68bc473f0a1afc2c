// What the metrics endpoint knows of one export's calls beyond the metadata
// cache's counters: how long they took (a histogram per procedure) and how many
// ended in each error status.
//
// Bumped on every call, read at scrape time only. Like metacache::ExportCounters,
// the counts are striped: each thread adds to its own cache lines with relaxed
// atomics (no lock, no allocation), and a snapshot adds the stripes up. A call
// answered at once (the `*_now` path of nfs3_program.h: every record in memory)
// is counted in the first bucket without reading the clock, so that the cached
// LOOKUP path pays one relaxed add and no clock read; its time is the dispatch's
// own CPU time, microseconds (docs/benchmarks.md), well inside that bucket.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>

#include "cache/answer_basis.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::metrics {

/// Upper bounds of the latency buckets, in seconds: 100 µs (a cached answer) to
/// 10 s (an origin far away or slow); one more bucket (+Inf) holds the rest.
inline constexpr std::array<double, 16> kLatencyBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                          0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                                          1.0,    2.5,     5.0,    10.0};
inline constexpr std::size_t kBuckets = kLatencyBounds.size() + 1;

/// The NFSv3 statuses counted one by one (nfs3::Status); any other value a
/// result carries is counted as "other".
inline constexpr std::array<nfs3::Status, 28> kErrorStatuses = {
    nfs3::Status::Perm,        nfs3::Status::NoEnt,      nfs3::Status::Io,        nfs3::Status::NxIo,
    nfs3::Status::Acces,       nfs3::Status::Exist,      nfs3::Status::XDev,      nfs3::Status::NoDev,
    nfs3::Status::NotDir,      nfs3::Status::IsDir,      nfs3::Status::Inval,     nfs3::Status::FBig,
    nfs3::Status::NoSpc,       nfs3::Status::RoFs,       nfs3::Status::MLink,     nfs3::Status::NameTooLong,
    nfs3::Status::NotEmpty,    nfs3::Status::DQuot,      nfs3::Status::Stale,     nfs3::Status::Remote,
    nfs3::Status::BadHandle,   nfs3::Status::NotSync,    nfs3::Status::BadCookie, nfs3::Status::NotSupp,
    nfs3::Status::TooSmall,    nfs3::Status::ServerFault, nfs3::Status::BadType,  nfs3::Status::Jukebox};
/// Index into kErrorStatuses, kErrorStatuses.size() for "other"; -1 for Ok.
int error_index(nfs3::Status s);

/// One procedure's figures at one moment.
struct CallSnapshot {
  std::array<std::uint64_t, kBuckets> buckets{};  // per bucket, not cumulative
  std::uint64_t count = 0;
  double sum_seconds = 0;
  std::array<std::uint64_t, kErrorStatuses.size() + 1> errors{};  // + "other"
};

class CallMeter {
 public:
  static constexpr std::size_t kStripes = 8;

  /// A call that took `nanos`, ending in `status`.
  void record(nfs3::Proc proc, nfs3::Status status, std::uint64_t nanos) {
    Stripe& s = stripes_[my_stripe()];
    auto& p = s.procs[static_cast<std::size_t>(proc)];
    p.buckets[bucket_of(nanos)].fetch_add(1, std::memory_order_relaxed);
    p.sum_nanos.fetch_add(nanos, std::memory_order_relaxed);
    if (status != nfs3::Status::Ok) count_error(p, status);
  }
  /// A call answered at once, without waiting: the first bucket, no time added.
  /// Counted through the answer's basis, so that a copy of it given again counts
  /// the same (cache/answer_basis.h).
  void record_at_once(nfs3::Proc proc, nfs3::Status status, cache::AnswerBasis& basis) {
    Stripe& s = stripes_[my_stripe()];
    auto& p = s.procs[static_cast<std::size_t>(proc)];
    basis.count(p.buckets[0]);
    if (status != nfs3::Status::Ok) basis.count(p.errors[static_cast<std::size_t>(error_index(status))]);
  }

  CallSnapshot snapshot(nfs3::Proc proc) const;

  /// The bucket of a duration: the first whose bound it does not exceed.
  static std::size_t bucket_of(std::uint64_t nanos);

 private:
  struct Proc {
    std::array<std::atomic<std::uint64_t>, kBuckets> buckets{};
    std::atomic<std::uint64_t> sum_nanos{0};
    std::array<std::atomic<std::uint64_t>, kErrorStatuses.size() + 1> errors{};
  };
  struct alignas(64) Stripe {
    std::array<Proc, nfs3::kProcCount> procs{};
  };
  static void count_error(Proc& p, nfs3::Status status) {
    p.errors[static_cast<std::size_t>(error_index(status))].fetch_add(1, std::memory_order_relaxed);
  }
  static std::size_t my_stripe() {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t mine = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
    return mine;
  }

  std::array<Stripe, kStripes> stripes_{};
};

}  // namespace nfsgw::metrics
