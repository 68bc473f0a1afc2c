// What the metadata cache counts, per export and procedure. Counters are relaxed
// atomics: bumped on the hot path, read rarely. `nfsgw stats` and the metrics
// endpoint report them beside the other layers' own (gateway/stats/stats_report.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "protocol/nfs3_types.h"

namespace nfsgw::metacache {

/// One procedure of one export.
struct ProcCounts {
  std::uint64_t calls = 0;          // calls that reached the cache layer
  std::uint64_t hits = 0;           // answered from the cache, no origin call
  std::uint64_t misses = 0;         // not (usably) cached: asked the origin
  std::uint64_t revalidations = 0;  // a window ended: one GETATTR asked, entry kept
  std::uint64_t origin_calls = 0;   // calls this layer sent to the origin
};

/// The live counters of one export. Striped: each thread bumps its own cache line,
/// so that a hit on one core does not pull the counters' line away from the other
/// (with one shared line, each hit paid a transfer between cores); `get` adds up.
class ExportCounters {
 public:
  enum Field { Calls, Hits, Misses, Revalidations, OriginCalls, kFields };
  static constexpr std::size_t kStripes = 8;

  void add(nfs3::Proc proc, Field f, std::uint64_t n = 1) { mine(proc, f).fetch_add(n, std::memory_order_relaxed); }
  /// This thread's counter of `f` for `proc`.
  std::atomic<std::uint64_t>& mine(nfs3::Proc proc, Field f) {
    return stripes_[my_stripe()].counts[static_cast<std::size_t>(proc)][f];
  }
  ProcCounts get(nfs3::Proc proc) const {
    std::array<std::uint64_t, kFields> sum{};
    for (const auto& stripe : stripes_) {
      const auto& c = stripe.counts[static_cast<std::size_t>(proc)];
      for (std::size_t f = 0; f < kFields; ++f) sum[f] += c[f].load(std::memory_order_relaxed);
    }
    return {sum[Calls], sum[Hits], sum[Misses], sum[Revalidations], sum[OriginCalls]};
  }

 private:
  struct alignas(64) Stripe {
    std::array<std::array<std::atomic<std::uint64_t>, kFields>, nfs3::kProcCount> counts{};
  };
  /// This thread's stripe: threads take them in turn.
  static std::size_t my_stripe() {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t mine = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
    return mine;
  }

  std::array<Stripe, kStripes> stripes_{};
};

/// A snapshot of one export's metadata cache.
struct ExportReport {
  std::string path;            // as clients mount it
  bool cache_enabled = false;  // metadata_cache = true
  std::string consistency;     // "ttl", "strict", "immutable"
  std::array<ProcCounts, nfs3::kProcCount> procs{};
};

}  // namespace nfsgw::metacache
