// What the data cache counts, per export, for `nfsgw stats` and the tests.
// Relaxed atomics: bumped on the hot path, read rarely.
#pragma once

#include <atomic>
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

/// The live counters of one export.
struct DataStats {
  std::atomic<std::uint64_t> reads{0}, read_hits{0}, read_misses{0}, forwarded{0};
  std::atomic<std::uint64_t> blocks_fetched{0}, bytes_fetched{0}, blocks_read_ahead{0}, bytes_from_cache{0};
  std::atomic<std::uint64_t> write_through{0}, blocks_patched{0}, files_dropped{0}, store_errors{0};

  static void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

  DataCounts snapshot() const {
    auto v = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
    return {v(reads),          v(read_hits),         v(read_misses),      v(forwarded),
            v(blocks_fetched), v(bytes_fetched),     v(blocks_read_ahead), v(bytes_from_cache),
            v(write_through),  v(blocks_patched),    v(files_dropped),    v(store_errors)};
  }
};

}  // namespace nfsgw::datacache
