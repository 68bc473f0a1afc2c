// The metadata cache's storage: a bounded, sharded in-memory layer in front of
// RocksDB column families, one per record kind (metadata_records.h).
//
// Reads never wait for the disk on the caller's thread: peek() answers from the
// memory layer, from writes not yet on disk, or from RocksDB's memtables and block
// cache; when the record can only be on disk it says so (Where::OnDisk) and the
// caller asks load(), which reads on the store's own small thread pool.
//
// Writes are applied to the memory layer at once and to RocksDB by a writer thread
// in batches, with the WAL but without fsync: a record lost in a power cut is only
// a miss (the handle map, in the same database, keeps its synced writes). Records
// outlive restarts, `kill -9` included (the WAL is in the page cache).
//
// Budgets: the memory layer has its own byte budget (the hot set, LRU per shard);
// the records on disk are bounded by a disk budget, enforced by a sweep that drops
// the least recently used records. Neither ever touches the handle map or the
// export roots. A failing cache disk degrades the store to memory only (logged
// once through the error hook), never failing a call; the writer tries the disk
// again every disk_retry and, once it takes writes, starts it empty (it missed the
// changes made meanwhile) and persists again (the recovered hook).
//
// After a restart the memory layer starts empty; with preload_bytes the store
// refills it in the background from the disk, newest last-used records first, each
// read and kept exactly as load() would (metadata_store.cpp, *Preload*).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cache/answer_basis.h"
#include "cache/clock.h"
#include "cache/kv_store.h"
#include "cache/metadata_records.h"
#include "cache/monotonic_clock.h"

namespace nfsgw::cache {

/// Key type of each record type.
template <typename R> struct KeyOf;
template <> struct KeyOf<AttrRecord> { using type = ObjectKey; };
template <> struct KeyOf<LookupRecord> { using type = NameKey; };
template <> struct KeyOf<ListingRecord> { using type = ObjectKey; };
template <> struct KeyOf<LinkRecord> { using type = ObjectKey; };
template <> struct KeyOf<AccessRecord> { using type = CredKey; };
template <> struct KeyOf<FsRecord> { using type = FsKey; };
template <typename R> using Key = typename KeyOf<R>::type;

/// The column families the metadata store needs (besides the default one, which
/// holds the handle map and export roots); open the KvStore with these.
const std::vector<std::string>& metadata_families();

struct MetadataStoreOptions {
  std::size_t memory_bytes = 64u << 20;    // the in-memory layer
  std::uint64_t disk_bytes = 1ull << 30;   // records on disk (metadata_max_gb)
  unsigned disk_threads = 2;               // the pool for load()
  unsigned shards = 16;
  /// Serve hot attribute, lookup and ACCESS records from a per-thread copy while
  /// their shard is unchanged (peek_memo.h).
  bool thread_memo = true;
  const Clock* clock = &wall_clock();      // for least-recently-used times
  /// Times the store's thread: the disk budget sweep's period, the disk retry,
  /// the budget's reclaim window. Tests pass a manual clock and move it.
  MonotonicClock* timer_clock = &monotonic_clock();
  /// While the disk has failed, the writer tries it again this often (a resume and
  /// a small write); zero never tries again.
  std::chrono::milliseconds disk_retry = std::chrono::seconds(10);
  /// Once preload_in_background() is called, fill the memory layer in the
  /// background with the most recently used records on disk, up to this many bytes
  /// of it (and never past its budget): the hot set of the last run, so that the
  /// first calls after a restart do not each wait for the disk. Zero: no preload.
  std::size_t preload_bytes = 0;
  /// The queue of writes not yet in RocksDB (with their overlay entries) holds at
  /// most about this many bytes (memory_mb's share, cache/memory_budget.h): a
  /// writer waits, before it changes anything, until the writer thread has taken
  /// enough off; the time refresh of a record leaving the memory layer is skipped
  /// instead. 0: unbounded.
  std::size_t pending_bytes = 0;
  /// Called on the preload's thread when it ends, with the records it kept and
  /// the milliseconds it took (nfsgw logs it).
  std::function<void(std::uint64_t records, std::int64_t ms)> on_preloaded;
};

/// Counts of one record kind.
struct TableUsage {
  const char* name = "";
  std::uint64_t memory_entries = 0, memory_bytes = 0;
  std::uint64_t disk_entries = 0, disk_bytes = 0;  // RocksDB's estimates
};

struct StoreUsage {
  std::vector<TableUsage> tables;
  std::uint64_t evicted_memory = 0;  // records pushed out of the memory layer
  std::uint64_t evicted_disk = 0;    // records dropped by the disk budget sweep
  std::uint64_t preloaded = 0;       // records put in the memory layer by the preload at start
  /// The queue of writes not yet on disk (MetadataStoreOptions::pending_bytes):
  /// bytes now, the most it held, writers that waited for room, time refreshes skipped.
  std::uint64_t pending_bytes = 0, pending_peak = 0, pending_limit = 0, pending_waits = 0, touches_skipped = 0;
  bool degraded = false;             // the disk failed: memory only
};

class MetadataStore {
 public:
  enum class Where { Memory, Absent, OnDisk };

  template <typename R>
  struct Peeked {
    Where where = Where::Absent;
    std::shared_ptr<const R> value;  // set when where == Memory
    /// The record's shard's change counter as it was read: what an answer built
    /// from this read rests on (answer_basis.h). Set unless where == OnDisk.
    Watch watch;
  };

  /// `kv` must have been opened with metadata_families() and outlive the store.
  MetadataStore(KvStore& kv, MetadataStoreOptions options);
  /// Writes what is pending, then stops the threads.
  ~MetadataStore();
  MetadataStore(const MetadataStore&) = delete;
  MetadataStore& operator=(const MetadataStore&) = delete;

  /// Never blocks on the disk. `through_memory_layer`: past this thread's memo
  /// (peek_memo.h), so that the memory layer's LRU order sees the record used.
  template <typename R> Peeked<R> peek(const Key<R>& key, bool through_memory_layer = false);
  /// Reads from disk on the store's pool; `done` runs on a pool thread with the
  /// record (now also in the memory layer) or nullptr.
  template <typename R>
  void load(Key<R> key, std::function<void(std::shared_ptr<const R>)> done);
  /// Blocking read (memory, then disk): for tools and tests, not Asio threads.
  template <typename R> std::shared_ptr<const R> get(const Key<R>& key);

  template <typename R> void put(const Key<R>& key, R value);
  /// Atomically replaces the record with what `decide` returns given the record in
  /// the memory layer (nullptr when it is not there); nullopt keeps it as it is.
  template <typename R>
  void update(const Key<R>& key,
              const std::function<std::optional<R>(const R* current)>& decide);
  template <typename R> void erase(const Key<R>& key);

  /// Every record of one object: attributes, listing, link, ACCESS and FS records,
  /// and the lookups of names inside it (when it is a directory).
  void erase_object(const ObjectKey& key);
  /// Every record of an export.
  void erase_export(std::uint32_t export_id);
  /// The handles of the positive lookups cached in `dir` (blocking: tools only).
  std::vector<nfs3::FileHandle> cached_children(const ObjectKey& dir);

  /// Waits until every write made so far is in RocksDB (tests, shutdown).
  void flush();
  /// Starts the preload (MetadataStoreOptions::preload_bytes) on its own thread, at
  /// low priority; once only. nfsgw calls it when it starts answering, so that the
  /// preload does not compete with the start itself.
  void preload_in_background();
  /// Waits until the preload has finished, at once when it never started (tests;
  /// serving never waits for it).
  void wait_preloaded();
  /// Runs the disk budget sweep now (tests; it also runs by itself every 30 s of
  /// the timer clock).
  void sweep_disk();
  /// Waits until the store's thread has done what is due by the timer clock's
  /// present time: a disk retry, the periodic sweep (tests that move a manual
  /// timer clock, to know the move has been acted on).
  void run_due_work();
  StoreUsage usage() const;

  /// Called once, with a message, when the disk fails (once per failure: again
  /// only after it has worked again).
  void on_disk_error(std::function<void(const std::string&)> hook);
  /// Called when a failed disk takes writes again: the store has emptied what it
  /// kept on disk (it missed the changes made meanwhile) and persists again.
  void on_disk_recovered(std::function<void()> hook);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nfsgw::cache
