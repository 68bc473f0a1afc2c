// The data cache's hot blocks: copies in memory of blocks read lately, checked
// once, when they were filled, so that a READ of a hot block costs neither a
// pread nor a checksum (the block store's read_now() and read()).
//
// A copy is found by its file key (block_index_codec.h), its index and the Stamp
// its file is stored under. It is only ever filled from bytes the store has just
// read and checked (or written), while the store holds the file's lock, and the
// store forgets a file's copies (or one block's) in every change of the file's
// index records, under the same lock. So a copy is always what the store would
// read from disk.
//
// Bounded: at most `budget_bytes` in all, counting each copy's bytes and a fixed
// cost per file and per block (kFileCost, kBlockCost), split over kShards shards
// by file key. A file's copies are kept and forgotten together, least recently
// used file first (as a CLOCK: a find only marks the file, so that a hit writes
// no list); one file holds at most half a shard's share (a block that
// would take it over that replaces the file's other copies; one larger than that
// is not kept). The budget is a share of [cache] memory_mb (docs/design.md,
// "Memory"). Safe from any thread; a shard's lock is held only to find, add or
// remove copies, never while bytes are copied out.
#pragma once

#include <array>
#include <functional>
#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/answer_basis.h"
#include "cache/clock.h"
#include "cache/metadata_records.h"

namespace nfsgw::cache {

class HotBlocks {
 public:
  static constexpr std::size_t kShards = 8;
  /// What a file and a block cost beside the bytes: the file's key and record, the
  /// map and list nodes, a shared block's control block (rounded up).
  static constexpr std::size_t kFileCost = 192;
  static constexpr std::size_t kBlockCost = 96;

  /// `budget_bytes` 0: keeps nothing.
  explicit HotBlocks(std::size_t budget_bytes);

  /// A kept copy: the block's bytes and the file's last-used time when it was kept.
  struct Copy {
    std::shared_ptr<const std::string> bytes;
    Millis last_used = 0;
    explicit operator bool() const { return bytes != nullptr; }
  };
  /// The copy of block `index` of `fkey` stored under `stamp`; empty when there is
  /// none (or one under another stamp).
  Copy find(std::string_view fkey, std::uint64_t index, const Stamp& stamp);
  /// What copy_out() found.
  struct Found {
    bool found = false;           // a copy under `stamp` is kept
    std::size_t length = 0;       // its bytes (copied only when `length` was asked for)
    Millis last_used = 0;         // the file's last-used time when it was kept
  };
  /// Like find(), but copies bytes [from, from + out.size()) of the copy into `out`
  /// while the shard's lock is held, when the copy is `length` bytes long: no
  /// reference to the copy is taken (a READ hit's path: no shared count moves).
  Found copy_out(std::string_view fkey, std::uint64_t index, const Stamp& stamp, std::size_t length,
                 std::size_t from, std::span<char> out);
  /// Keeps (or replaces) a copy. `last_used`: the file record's. A copy under
  /// another stamp than the file's others replaces them all.
  void keep(std::string_view fkey, std::uint64_t index, const Stamp& stamp,
            std::shared_ptr<const std::string> bytes, Millis last_used);
  /// The file's use time moved on (the store touched its record).
  void touched(std::string_view fkey, Millis last_used);
  /// Forgets every copy of a file / one block of it / everything. Each also moves
  /// the file's change counter (watch()), whether the tier is enabled or not: the
  /// store calls one of them before every change of a file's blocks.
  void forget_file(std::string_view fkey);
  void forget_block(std::string_view fkey, std::uint64_t index);
  void forget_all();

  /// The change counter of `fkey`'s blocks as it is now (cache/answer_basis.h): it
  /// moves before any change of the file's stored blocks, so an answer built from
  /// them (read after this) still holds while it stays. Shared by the files whose
  /// keys hash alike (kChangeCounters of them): a change of one voids the others'
  /// answers too, never the other way round.
  Watch watch(std::string_view fkey) const {
    const auto& c = changes_[KeyHash{}(fkey) % kChangeCounters];
    return {&c, c.load(std::memory_order_acquire)};
  }

  bool enabled() const { return shard_budget_ > 0; }
  std::size_t budget() const { return shard_budget_ * kShards; }
  /// Bytes counted now (copies' bytes and their fixed costs).
  std::size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  std::size_t blocks() const { return blocks_.load(std::memory_order_relaxed); }
  std::uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }

 private:
  /// Found by a key's view, without making a string of it.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
  };
  struct File;
  using Lru = std::list<File*>;  // most recently used first
  struct File {
    std::string key;
    Stamp stamp;
    Millis last_used = 0;
    std::map<std::uint64_t, std::shared_ptr<const std::string>> blocks;
    std::size_t bytes = 0;  // counted: kFileCost + each block's bytes and kBlockCost
    bool referenced = false;  // found since it was last moved to the front
    Lru::iterator in_lru;
  };
  struct Shard {
    std::mutex mu;
    std::unordered_map<std::string, std::unique_ptr<File>, KeyHash, std::equal_to<>> files;
    Lru lru;
    std::size_t bytes = 0;
  };

  Shard& shard_of(std::string_view fkey);
  /// Runs `use(bytes, last_used)` on the copy of block `index` of `fkey` kept under
  /// `stamp`, with its shard's lock held, and marks the file found; false when
  /// there is none.
  template <typename Use>
  bool with_copy(std::string_view fkey, std::uint64_t index, const Stamp& stamp, Use&& use);
  /// Removes a file's copies from `s` (its lock held); `drop` also the file.
  void clear_blocks(Shard& s, File& f);
  void erase(Shard& s, File* f);
  void add_bytes(Shard& s, File& f, std::ptrdiff_t n);

  static constexpr std::size_t kChangeCounters = 256;
  void changing(std::string_view fkey) {
    changes_[KeyHash{}(fkey) % kChangeCounters].fetch_add(1, std::memory_order_acq_rel);
  }

  std::size_t shard_budget_;
  std::array<Shard, kShards> shards_;
  std::array<std::atomic<std::uint64_t>, kChangeCounters> changes_{};
  std::atomic<std::size_t> bytes_{0}, blocks_{0};
  std::atomic<std::uint64_t> hits_{0};
};

}  // namespace nfsgw::cache
