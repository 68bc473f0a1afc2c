// What the data cache counts, per export, for `nfsgw stats` and the tests.
// Relaxed atomics: bumped on the hot path, read rarely.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nfsgw::datacache {

/// A snapshot of DataStats (plain numbers).
struct DataCounts {
  std::uint64_t reads = 0;              // READ calls that reached the layer
  std::uint64_t read_hits = 0;          // answered from cached blocks only, no origin READ
  std::uint64_t read_misses = 0;        // answered through the cache, some block fetched (or joined a fetch)
  std::uint64_t forwarded = 0;          // passed to the origin as is: not cacheable (no permission,
                                        // not a regular file, an error, a store error)
  std::uint64_t blocks_fetched = 0;     // whole blocks read from the origin (client misses and read-ahead)
  std::uint64_t bytes_fetched = 0;      // their bytes
  std::uint64_t blocks_read_ahead = 0;  // blocks fetched by read-ahead (also in blocks_fetched)
  std::uint64_t bytes_from_cache = 0;   // bytes answered from blocks found in the store
  std::uint64_t write_through = 0;      // WRITE calls passed to the origin
  std::uint64_t blocks_patched = 0;     // WRITEs whose bytes were applied to cached blocks
  std::uint64_t files_dropped = 0;      // files whose blocks were dropped (WCC missing, errors, admin)
  std::uint64_t store_errors = 0;       // BlockStoreError caught (the call went on without the cache)
};

/// The live counters of one export, striped by thread like the metadata cache's
/// (metacache_stats.h): a READ answered at once bumps three of them, and a copy of
/// it given again by the answer memo (per thread) bumps the same thread's stripe,
/// so threads do not pass the counters' cache lines back and forth.
class DataStats {
 public:
  enum Field {
    Reads, ReadHits, ReadMisses, Forwarded, BlocksFetched, BytesFetched, BlocksReadAhead, BytesFromCache,
    WriteThrough, BlocksPatched, FilesDropped, StoreErrors, kFields
  };
  static constexpr std::size_t kStripes = 8;

  /// This thread's counter of `f`.
  std::atomic<std::uint64_t>& mine(Field f) { return stripes_[my_stripe()].counts[f]; }
  void bump(Field f, std::uint64_t n = 1) { mine(f).fetch_add(n, std::memory_order_relaxed); }

  DataCounts snapshot() const {
    std::array<std::uint64_t, kFields> v{};
    for (const auto& stripe : stripes_)
      for (std::size_t f = 0; f < kFields; ++f) v[f] += stripe.counts[f].load(std::memory_order_relaxed);
    return {v[Reads],          v[ReadHits],     v[ReadMisses],     v[Forwarded],
            v[BlocksFetched],  v[BytesFetched], v[BlocksReadAhead], v[BytesFromCache],
            v[WriteThrough],   v[BlocksPatched], v[FilesDropped],   v[StoreErrors]};
  }

 private:
  struct alignas(64) Stripe {
    std::array<std::atomic<std::uint64_t>, kFields> counts{};
  };
  /// This thread's stripe: threads take them in turn.
  static std::size_t my_stripe() {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t mine = next.fetch_add(1, std::memory_order_relaxed) % kStripes;
    return mine;
  }
  std::array<Stripe, kStripes> stripes_{};
};

}  // namespace nfsgw::datacache
