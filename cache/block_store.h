// The data cache's storage: blocks of origin files on local disk.
//
// A block is found by its file (export id and ORIGIN handle, as in the metadata
// cache) and its index; block i holds the file's bytes [i * block_bytes,
// (i + 1) * block_bytes), and only the file's last block may be shorter.
//
// Validity: each file has one record holding the Stamp (metadata_records.h) its
// blocks were fetched under. A read passes the stamp the caller believes now and is
// a hit only when it equals the stored one; storing a block under another stamp
// drops the file's blocks first. restamp() and apply_write() move the stamp in O(1)
// after a change made through the gateway.
//
// Integrity: every block carries a CRC32C, checked on every read from disk. A
// block that is missing, short, torn or corrupt is never returned: it is dropped,
// counted (corrupt_dropped) and reported as a miss. Data is written before its
// index record and neither is synced: after `kill -9` or a power cut a block is
// either served intact or a miss.
//
// Budget: the blocks' bytes are bounded by `disk_bytes` (data_max_gb). When a
// write goes over it, whole files are dropped, least recently used first, until
// the usage is at most kEvictTarget of the budget. Use times are kept per file,
// coarsely (refreshed at most every `touch_interval_ms`), and persisted, so the
// order survives restarts. Eviction never touches any family but the store's own.
//
// Threads: every method is safe from any number of threads (the gateway calls
// it from a small disk pool, never from Asio threads: calls read and write files).
// Reads of a block and writes of it exclude each other, so a reader never sees a
// half-written block; two writes of one block leave the last one, intact.
//
// Errors: a failing disk (ENOSPC, EROFS, EIO, a RocksDB I/O error, ...) throws
// BlockStoreError from any method; the store stays usable (the next call tries
// again; after a failed index write it first asks the index to recover, which
// RocksDB needs after EROFS or EIO) and the gateway should forward to the origin
// and log once. Missing,
// short or corrupt data is never an error: it is a miss.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cache/answer_basis.h"
#include "cache/clock.h"
#include "cache/kv_store.h"
#include "cache/metadata_records.h"

namespace nfsgw::cache {

/// A disk error; `code` is the errno when there is one (0 for RocksDB errors).
class BlockStoreError : public std::runtime_error {
 public:
  BlockStoreError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

struct BlockStoreOptions {
  std::uint32_t block_bytes = 1u << 20;            // [cache] block_kb * 1024
  std::uint64_t disk_bytes = 16ull << 30;          // [cache] data_max_gb
  Millis touch_interval_ms = 60'000;               // use-time granularity
  const Clock* clock = &wall_clock();              // for use times
  /// The hot tier in memory (hot_blocks.h), a share of [cache] memory_mb; 0: none.
  std::uint64_t memory_bytes = 0;
  /// RocksDB's block cache of the index opened by open_file_block_store(dir, ...),
  /// its memtables charged to it (a quarter of it flushes them): a share of memory_mb.
  std::size_t index_memory_bytes = 16u << 20;
};

struct BlockUsage {
  std::uint64_t files = 0, blocks = 0, bytes = 0;  // now (bytes: the blocks' lengths)
  std::uint64_t budget = 0;
  std::uint64_t read_hits = 0, read_misses = 0;    // misses include corrupt ones
  std::uint64_t corrupt_dropped = 0;               // missing, short or bad checksum
  std::uint64_t evicted_files = 0, evicted_blocks = 0, evicted_bytes = 0;
  /// The hot tier in memory (hot_blocks.h): its budget, what it holds, the reads it
  /// answered (counted in read_hits too).
  std::uint64_t memory_budget = 0, memory_bytes = 0, memory_blocks = 0, memory_hits = 0;
};

class BlockStore {
 public:
  /// Usage is brought down to this share of the budget when it goes over it.
  static constexpr double kEvictTarget = 0.9;

  virtual ~BlockStore() = default;

  virtual std::uint32_t block_bytes() const = 0;

  /// Block `index` of `file` when it was stored under `stamp`; nullopt otherwise
  /// (a miss). A hit refreshes the file's use time and keeps a copy in the hot tier.
  virtual std::optional<std::string> read(const ObjectKey& file, const Stamp& stamp,
                                          std::uint64_t index) = 0;
  /// read() without waiting for the disk, for a caller that must not block (an
  /// Asio thread): the block from the hot tier in memory (hot_blocks.h), else the
  /// index only from memory and the bytes only from the page cache through a
  /// descriptor a read() left open; and the file's use time not due for a refresh.
  /// `part.length` is the block's length under `stamp` (all of block_bytes, or the
  /// file's short last block); `part.out` receives its bytes [part.from,
  /// part.from + out.size()), checked like read()'s (length and CRC32C) when they
  /// come from the disk, which also keeps a copy in the hot tier. Hit: `out` holds
  /// them; Miss: the index, in memory, says there is no such block (or one of
  /// another length); WouldWait: call read() off the thread (a block that fails its
  /// check also answers WouldWait, with `out` overwritten: read() drops and counts
  /// it). Never throws.
  enum class Now { Hit, Miss, WouldWait };
  struct Part {
    std::uint64_t length = 0;
    std::uint64_t from = 0;
    std::span<char> out;
  };
  /// A Hit rests on the file's blocks staying as they are: `basis` gets the change
  /// counter that every change of them moves first (hot_blocks.h, watch()).
  virtual Now read_now(const ObjectKey& file, const Stamp& stamp, std::uint64_t index, Part part,
                       AnswerBasis& basis) = 0;
  /// The whole block into `out` (out.size() is its length), for a caller that
  /// keeps no answer built from it.
  Now read_now(const ObjectKey& file, const Stamp& stamp, std::uint64_t index, std::span<char> out) {
    AnswerBasis unkept;
    return read_now(file, stamp, index, Part{out.size(), 0, out}, unkept);
  }
  /// Whether the index, from memory alone, says `file` has no blocks at all (no
  /// record of it): then apply_write(), restamp() and drop_file() would find
  /// nothing to do, and a caller on an Asio thread may skip them. False when it
  /// has some, or when the answer would need the disk. Never throws.
  virtual bool no_blocks_now(const ObjectKey& file) = 0;
  /// Whether the index holds block `index` of `file` under `stamp`, without reading
  /// or checking its bytes (read() may still find it corrupt): for read-ahead,
  /// which only needs to know whether to fetch.
  virtual bool contains(const ObjectKey& file, const Stamp& stamp, std::uint64_t index) = 0;
  /// Stores block `index` of `file`, fetched under `stamp` (1..block_bytes bytes;
  /// a short one must be the file's last). When the file is stored under another
  /// stamp, its blocks are dropped first and `stamp` becomes the file's. May evict.
  virtual void write(const ObjectKey& file, const Stamp& stamp, std::uint64_t index,
                     std::string_view data) = 0;
  /// After a change through the gateway that left the file's cached bytes valid
  /// (e.g. a SETATTR of the mode): when the file is stored under `before`, it is now
  /// stored under `after` and true is returned. When the sizes differ, the blocks
  /// past the smaller size are dropped, and so is the block holding the old end
  /// when it was short. When the file is under another stamp, its blocks are
  /// dropped and false is returned. Not stored at all: false.
  virtual bool restamp(const ObjectKey& file, const Stamp& before, const Stamp& after) = 0;
  /// After a WRITE through the gateway whose WCC pre-op attributes are `before` and
  /// post-op attributes `after`: when the file is stored under `before`, the cached
  /// blocks that `data` at `offset` overlaps are patched (a short last block grows,
  /// any gap zero-filled), blocks not cached stay uncached, the stamp moves to
  /// `after` (as restamp) and true is returned. Otherwise as restamp: dropped, false.
  /// Atomic with respect to readers of the file.
  virtual bool apply_write(const ObjectKey& file, const Stamp& before, const Stamp& after,
                           std::uint64_t offset, std::string_view data) = 0;
  /// Drops every block of one file / of one export.
  virtual void drop_file(const ObjectKey& file) = 0;
  virtual void drop_export(std::uint32_t export_id) = 0;

  /// Drops least recently used files until within kEvictTarget of the budget, if
  /// over it (writes do this by themselves; for tests and tools).
  virtual void evict() = 0;
  virtual BlockUsage usage() const = 0;
};

/// The column families the block store's index needs in its KvStore.
const std::vector<std::string>& block_families();

/// The store on local disk: one sparse file per origin file under `data_dir`
/// (created when missing), and its index (files, blocks, use order) in `index`,
/// which must have been opened with block_families() and outlive the store.
/// Opening sums the usage from the index and removes data files it does not know.
/// Throws BlockStoreError.
std::unique_ptr<BlockStore> open_file_block_store(const std::string& data_dir, KvStore& index,
                                                  BlockStoreOptions options);
/// Same, with its own small RocksDB index in `data_dir`/index: `<[cache] dir>/data`
/// is the intended place, apart from the metadata database.
std::unique_ptr<BlockStore> open_file_block_store(const std::string& data_dir,
                                                  BlockStoreOptions options);
/// The same logic with the data and the index in memory (unit tests).
std::unique_ptr<BlockStore> make_memory_block_store(BlockStoreOptions options);

}  // namespace nfsgw::cache
