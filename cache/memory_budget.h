// How `[cache] memory_mb` is split between everything nfsgw keeps in RAM: one
// place, computed once at start (gateway/gateway_app.cpp), read by each consumer.
//
// What counts against memory_mb (docs/design.md, *Memory*):
// - the metadata store's memory layer (its hot set, MetadataStoreOptions::memory_bytes);
// - RocksDB's block cache, which holds data blocks, index and filter blocks and,
//   through a WriteBufferManager, the memtables' charge (write_buffers is the part
//   at which memtables are flushed);
// - the data cache's in-memory hot-block tier (hot_blocks) and its index's own
//   RocksDB block cache and memtables (block_index);
// - every server thread's memos (peek_memo.h, handle_memo.h,
//   gateway/rpc/answer_memo.h), sized so that all threads' tables together fit
//   thread_memos;
// - the duplicate request cache (duplicate_entries calls, each charged
//   kDuplicateEntryBytes);
// - READ data in flight in the data cache (read_replies, read_blocks: the
//   replies it fills, the blocks it fetches from the origin or reads from disk;
//   gateway/datacache/data_cache.h), a bound: READs wait for room, read-ahead
//   does without;
// - the metadata store's queue of writes not yet in RocksDB (pending_writes),
//   a bound: writers wait for room (MetadataStoreOptions::pending_bytes).
// What does not: code and libraries, thread stacks, malloc's own slack, RocksDB's
// flush, compaction and WAL buffers, and the buffers of calls once they leave the
// caches (requests read, replies waiting for the socket: bounded apart by
// [server] max_pending_mb and max_calls_in_flight_total). docs/operations.md states
// that fixed overhead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nfsgw::cache {

/// One per-thread memo table, as the budget sees it.
struct MemoShape {
  std::size_t bytes_per_set = 0;  // the set's probe data, its slots, what they own on the heap
  std::size_t max_sets = 0;       // a power of two: the size it has with room to spare
};

struct MemoryBudget {
  /// Approximate bytes of one remembered call of the duplicate cache: its key,
  /// reply (a mutating call's reply is small), list and map nodes.
  static constexpr std::size_t kDuplicateEntryBytes = 640;
  static constexpr std::size_t kMaxDuplicateEntries = 4096;
  static constexpr std::size_t kMinDuplicateEntries = 256;

  std::size_t total = 0;           // memory_mb in bytes
  std::size_t memory_layer = 0;    // the metadata store's hot set
  std::size_t block_cache = 0;     // RocksDB's block cache, memtables charged to it
  std::size_t write_buffers = 0;   // of block_cache: memtables flush beyond this
  std::size_t hot_blocks = 0;      // the data cache's in-memory block tier
  std::size_t block_index = 0;     // the data cache's own RocksDB index: its block cache and memtables
  std::size_t thread_memos = 0;    // every thread's memos together (what they were given)
  std::size_t duplicate_cache = 0; // duplicate_entries * kDuplicateEntryBytes
  std::size_t duplicate_entries = 0;
  std::size_t read_replies = 0;    // READ replies being filled by the data cache
  std::size_t read_blocks = 0;     // blocks fetched from the origin / read from disk for a READ
  std::size_t pending_writes = 0;  // the metadata store's queue of writes not yet on disk
  unsigned threads = 1;            // threads that keep memos
  /// False when even the smallest memos of this many threads take more than half
  /// of the total (a tiny memory_mb for hundreds of threads): then thread_memos is
  /// what they take and the sum exceeds the total.
  bool memos_fit = true;
  std::vector<std::size_t> memo_sets;  // per memo given to split(), sets per thread

  /// Bytes the memos of `threads` threads take with memo_sets.
  std::size_t memo_bytes(const std::vector<MemoShape>& memos) const;
  /// What the parts add up to: no more than total when memos_fit.
  std::size_t sum() const {
    return memory_layer + block_cache + hot_blocks + block_index + thread_memos + duplicate_cache + read_replies +
           read_blocks + pending_writes;
  }
};

/// The split of `total_bytes` for `threads` threads that keep one table of each of
/// `memos`. Shares: the memos up to 1/8 of the total (all memos shrink by the same
/// power of two until every thread's fit), the duplicate cache up to 1/64 (within
/// [kMinDuplicateEntries, kMaxDuplicateEntries] entries), the hot-block tier
/// `hot_blocks_share` of the total, READ replies and READ blocks 1/16 each, the
/// store's pending writes and the data cache's index 1/32 each (the index at
/// least 1 MiB, RocksDB's smallest); what is left is halved between the memory layer
/// and RocksDB's block cache, a quarter of which is the memtables' limit.
MemoryBudget split_memory(std::size_t total_bytes, unsigned threads, const std::vector<MemoShape>& memos,
                          double hot_blocks_share = 1.0 / 16);

}  // namespace nfsgw::cache
