// The data block store (block_store.h): block bytes in BlockFiles, the index in
// three KvStore families (block_index_codec.h).
//
// Nothing grows in memory with the cache: no map of files or blocks. A read costs
// two point gets (the file record, the block record: RocksDB's block cache keeps
// the hot ones) and one pread; the page cache keeps the hot bytes. Usage totals
// are counted as the index changes and summed from the file records at open.
//
// Locking: a file's calls take one of kStripes reader/writer locks, chosen by the
// file key: reads share it, every change (a block write, a restamp, a drop) holds
// it alone, so a reader never sees a block half-written and the file record and
// its blocks change together. Eviction takes one file's lock at a time, never
// while holding another.
//
// Order of writes: block bytes first, then one atomic index batch (WAL, no
// fsync). After a crash, an index record whose bytes did not reach the disk fails
// its CRC and is a miss; bytes whose record was lost are not found, and a data
// file no record names is removed at the next open.
#include "cache/block_store.h"

#include <algorithm>
#include <cstring>
#include <array>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>
#include <utility>

#include "cache/block_files.h"
#include "cache/block_index_codec.h"
#include "cache/crc32c.h"
#include "cache/hot_blocks.h"
#include "cache/metadata_codec.h"

namespace nfsgw::cache {

const std::vector<std::string>& block_families() {
  static const std::vector<std::string> names = {"data_files", "data_blocks", "data_lru"};
  return names;
}

namespace {

using codec::BlockRecord;
using codec::FileRecord;
using Batch = KvStore::Batch;

constexpr std::size_t kStripes = 64;
constexpr std::size_t kEvictChunk = 64;   // LRU keys read per scan
constexpr std::size_t kDropChunk = 256;   // files per scan of drop_export

/// Turns the KvStore's std::runtime_error into BlockStoreError.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const BlockStoreError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw BlockStoreError(std::string("data cache index: ") + e.what(), 0);
  }
}

class IndexedBlockStore final : public BlockStore {
 public:
  IndexedBlockStore(std::unique_ptr<KvStore> owned, KvStore& kv, std::unique_ptr<BlockFiles> files,
                    BlockStoreOptions o)
      : owned_(std::move(owned)), kv_(kv), files_(std::move(files)), o_(o),
        files_fam_(kv.family(block_families()[0])), blocks_fam_(kv.family(block_families()[1])),
        lru_fam_(kv.family(block_families()[2])) {
    if (o_.block_bytes == 0) throw std::invalid_argument("block store: block_bytes is 0");
    guarded([&] { load(); });
  }

  std::uint32_t block_bytes() const override { return o_.block_bytes; }

  Now read_now(const ObjectKey& file, const Stamp& stamp, std::uint64_t index, Part part,
               AnswerBasis& basis) override {
    if (part.from > part.length || part.out.size() > part.length - part.from) return Now::WouldWait;
    try {
      // One key buffer per thread: a hit allocates nothing once it has grown.
      thread_local std::string key_buffer;
      key_buffer.clear();
      codec::append_file_key(key_buffer, file);
      const std::string_view fkey = key_buffer;
      // Before anything is read: a change that starts after this moves it.
      basis.rests_on(hot_.watch(fkey));
      const Millis now_ms = o_.clock->now_ms();
      // Without the file's lock: every change of the file forgets its copies
      // before it changes anything, under that lock, so a copy found is the
      // file's as it was before any change still under way. Copied out under the
      // hot tier's shard lock (no reference to the copy is taken).
      if (const HotBlocks::Found copy = hot_.copy_out(fkey, index, stamp, part.length, part.from, part.out);
          copy.found) {
        // The pool path refreshes the use time that eviction goes by.
        if (now_ms - copy.last_used >= o_.touch_interval_ms) return Now::WouldWait;
        if (copy.length != part.length) {  // not the block the caller's version has
          ++misses_;
          return Now::Miss;
        }
        ++hits_;
        return Now::Hit;
      }
      std::shared_lock lock(stripe(fkey), std::try_to_lock);
      if (!lock.owns_lock()) return Now::WouldWait;  // a writer holds the file
      std::string v;
      if (const auto answer = from_memory(files_fam_, fkey, v)) return *answer;
      const auto f = codec::decode_file(v);
      if (!f) return Now::WouldWait;
      if (!(f->stamp == stamp)) {
        ++misses_;
        return Now::Miss;
      }
      if (now_ms - f->last_used >= o_.touch_interval_ms) return Now::WouldWait;
      if (const auto answer = from_memory(blocks_fam_, codec::block_key(fkey, index), v)) return *answer;
      const auto b = codec::decode_block(v);
      if (!b || b->file_id != f->id || b->length == 0 || b->length > o_.block_bytes) return Now::WouldWait;
      if (b->length != part.length) {  // not the block the caller's version has
        ++misses_;
        return Now::Miss;
      }
      // The whole block, checked, then the part asked for. Straight into the
      // caller's memory when that is the whole block and no copy is kept.
      const bool whole = part.from == 0 && part.out.size() == part.length;
      std::shared_ptr<std::string> bytes;
      char* into = part.out.data();
      if (hot_.enabled() || !whole) {
        bytes = std::make_shared<std::string>(part.length, '\0');
        into = bytes->data();
      }
      const auto n = files_->read_now(f->id, offset_of(index), into, part.length);
      if (!n || *n != part.length || crc32c(0, into, part.length) != b->crc) return Now::WouldWait;
      if (bytes) {
        std::memcpy(part.out.data(), bytes->data() + part.from, part.out.size());
        hot_.keep(fkey, index, stamp, std::move(bytes), f->last_used);
      }
      ++hits_;
      return Now::Hit;
    } catch (const std::exception&) {
      return Now::WouldWait;  // read() meets the same error and reports it
    }
  }

  /// An index record for read_now, from memory only: nullopt when found (in `v`),
  /// else read_now's answer (Miss: the index says there is none).
  std::optional<Now> from_memory(KvStore::Family fam, std::string_view key, std::string& v) {
    switch (kv_.get(fam, key, v, KvStore::Tier::MemoryOnly)) {
      case KvStore::Found::Yes:
        return std::nullopt;
      case KvStore::Found::No:
        ++misses_;
        return Now::Miss;
      case KvStore::Found::NotInMemory:
        break;
    }
    return Now::WouldWait;
  }

  bool no_blocks_now(const ObjectKey& file) override {
    try {
      std::string v;
      return kv_.get(files_fam_, codec::file_key(file), v, KvStore::Tier::MemoryOnly) == KvStore::Found::No;
    } catch (const std::exception&) {
      return false;  // the caller takes the usual path, which reports the error
    }
  }

  bool contains(const ObjectKey& file, const Stamp& stamp, std::uint64_t index) override {
    return guarded([&] {
      const std::string fkey = codec::file_key(file);
      std::shared_lock lock(stripe(fkey));
      auto f = get_file(fkey);
      if (!f || !(f->stamp == stamp)) return false;
      auto b = get_block(codec::block_key(fkey, index));
      return b && b->file_id == f->id;
    });
  }

  std::optional<std::string> read(const ObjectKey& file, const Stamp& stamp,
                                  std::uint64_t index) override {
    return guarded([&]() -> std::optional<std::string> {
      const std::string fkey = codec::file_key(file);
      std::optional<std::string> out;
      std::optional<BlockRecord> bad;
      Millis last_used = 0;
      {
        std::shared_lock lock(stripe(fkey));
        if (const HotBlocks::Copy copy = hot_.find(fkey, index, stamp)) {
          out = *copy.bytes;
          last_used = copy.last_used;
        } else if (auto f = get_file(fkey); f && f->stamp == stamp) {
          auto b = get_block(codec::block_key(fkey, index));
          if (!b) {
            ++misses_;
            return std::nullopt;
          }
          std::string data(std::min(b->length, o_.block_bytes), '\0');
          if (b->file_id == f->id && b->length == data.size() && !data.empty() &&
              files_->read(f->id, offset_of(index), data.data(), data.size()) == data.size() &&
              crc32c(data) == b->crc) {
            last_used = f->last_used;
            if (hot_.enabled()) hot_.keep(fkey, index, stamp, std::make_shared<const std::string>(data), last_used);
            out = std::move(data);
          } else {
            bad = b;
          }
        } else {
          ++misses_;
          return std::nullopt;
        }
      }
      if (bad) {
        ++misses_;
        ++corrupt_;
        drop_block_if(fkey, index, *bad);
        return std::nullopt;
      }
      ++hits_;
      if (o_.clock->now_ms() - last_used >= o_.touch_interval_ms) touch_file(fkey);
      return out;
    });
  }

  void write(const ObjectKey& file, const Stamp& stamp, std::uint64_t index,
             std::string_view data) override {
    if (data.empty() || data.size() > o_.block_bytes)
      throw std::invalid_argument("block store: a block of " + std::to_string(data.size()) + " bytes");
    guarded([&] {
      const std::string fkey = codec::file_key(file), bkey = codec::block_key(fkey, index);
      {
        std::unique_lock lock(stripe(fkey));
        const Millis now = o_.clock->now_ms();
        auto current = get_file(fkey);
        std::optional<FileRecord> replaced;  // stored under another stamp
        if (current && current->stamp != stamp) replaced = std::exchange(current, std::nullopt);
        FileRecord rec = current ? *current : FileRecord{stamp, next_id_++, now, 0, 0};
        auto old = current ? get_block(bkey) : std::nullopt;
        // Before the bytes change: a copy is never what the disk no longer holds.
        if (replaced) hot_.forget_file(fkey);
        else hot_.forget_block(fkey, index);
        try {
          files_->write(rec.id, offset_of(index), data);  // the bytes before the index
        } catch (...) {
          if (!current) files_->remove(rec.id);
          else if (old) drop_block_locked(fkey, *current, index, *old);
          throw;
        }
        Batch batch;
        if (replaced) {
          batch.erase_range(blocks_fam_, fkey, codec::prefix_end(fkey));
          batch.erase(lru_fam_, codec::lru_key(replaced->last_used, fkey));
        }
        if (!current) batch.put(lru_fam_, codec::lru_key(now, fkey), {});
        else if (now - rec.last_used >= o_.touch_interval_ms) move_lru(batch, fkey, rec, now);
        rec.blocks += old ? 0 : 1;
        rec.bytes += data.size() - (old ? old->length : 0);
        batch.put(blocks_fam_, bkey,
                  codec::encode(BlockRecord{rec.id, static_cast<std::uint32_t>(data.size()), crc32c(data)}));
        batch.put(files_fam_, fkey, codec::encode(rec));
        write_index(batch);
        hot_.touched(fkey, rec.last_used);  // the file's other copies
        if (replaced) {
          account(*replaced, -1);
          files_->remove(replaced->id);
        }
        account(rec, +1);
        if (current) account(*current, -1);
      }
      if (bytes_.load() > o_.disk_bytes) evict();
    });
  }

  bool restamp(const ObjectKey& file, const Stamp& before, const Stamp& after) override {
    return change(file, before, after, 0, {});
  }

  bool apply_write(const ObjectKey& file, const Stamp& before, const Stamp& after,
                   std::uint64_t offset, std::string_view data) override {
    return change(file, before, after, offset, data);
  }

  void drop_file(const ObjectKey& file) override {
    guarded([&] {
      const std::string fkey = codec::file_key(file);
      std::unique_lock lock(stripe(fkey));
      if (auto f = get_file(fkey)) drop_locked(fkey, *f, false);
    });
  }

  void drop_export(std::uint32_t export_id) override {
    guarded([&] {
      const std::string begin = codec::export_prefix(export_id), end = codec::prefix_end(begin);
      for (;;) {
        std::vector<std::string> keys;
        kv_.scan(files_fam_, begin, end, [&](std::string_view k, std::string_view) {
          keys.emplace_back(k);
          return keys.size() < kDropChunk;
        });
        if (keys.empty()) return;
        for (const auto& fkey : keys) {
          std::unique_lock lock(stripe(fkey));
          if (auto f = get_file(fkey)) drop_locked(fkey, *f, false);
          else drop_index_of(fkey);  // a record that does not decode
        }
      }
    });
  }

  void evict() override {
    std::unique_lock only_one(evict_mu_, std::try_to_lock);
    if (!only_one.owns_lock()) return;
    guarded([&] {
      const auto target = static_cast<std::uint64_t>(double(o_.disk_bytes) * kEvictTarget);
      while (bytes_.load() > target) {
        std::vector<std::string> keys;
        kv_.scan(lru_fam_, "", "", [&](std::string_view k, std::string_view) {
          keys.emplace_back(k);
          return keys.size() < kEvictChunk;
        });
        if (keys.empty()) return;
        for (const auto& key : keys) {
          if (bytes_.load() <= target) return;
          evict_one(key);
        }
      }
    });
  }

  BlockUsage usage() const override {
    BlockUsage u;
    u.files = files_count_.load();
    u.blocks = blocks_.load();
    u.bytes = bytes_.load();
    u.budget = o_.disk_bytes;
    u.read_hits = hits_.load();
    u.read_misses = misses_.load();
    u.corrupt_dropped = corrupt_.load();
    u.evicted_files = evicted_files_.load();
    u.evicted_blocks = evicted_blocks_.load();
    u.evicted_bytes = evicted_bytes_.load();
    u.memory_budget = hot_.budget();
    u.memory_bytes = hot_.bytes();
    u.memory_blocks = hot_.blocks();
    u.memory_hits = hot_.hits();
    return u;
  }

 private:
  std::uint64_t offset_of(std::uint64_t index) const { return index * o_.block_bytes; }

  std::shared_mutex& stripe(std::string_view fkey) {
    return stripes_[std::hash<std::string_view>{}(fkey) % kStripes];
  }

  std::optional<FileRecord> get_file(std::string_view fkey) {
    std::string v;
    if (kv_.get(files_fam_, fkey, v, KvStore::Tier::Any) != KvStore::Found::Yes) return std::nullopt;
    return codec::decode_file(v);
  }
  std::optional<BlockRecord> get_block(std::string_view bkey) {
    std::string v;
    if (kv_.get(blocks_fam_, bkey, v, KvStore::Tier::Any) != KvStore::Found::Yes) return std::nullopt;
    return codec::decode_block(v);
  }

  /// Adds (sign +1) or removes (-1) a file record's share of the totals.
  void account(const FileRecord& r, int sign) {
    if (sign > 0) {
      ++files_count_;
      blocks_ += r.blocks;
      bytes_ += r.bytes;
    } else {
      --files_count_;
      blocks_ -= r.blocks;
      bytes_ -= r.bytes;
    }
  }

  /// Every index write. After a failed one, the KvStore is asked to recover first:
  /// RocksDB refuses every write after a failed WAL or flush write until it is
  /// resumed, and resumes by itself only after ENOSPC, not after EROFS or EIO. While
  /// the disk still fails, recover() throws and the caller gets that error.
  void write_index(const Batch& batch) {
    if (index_failed_.load()) {
      std::lock_guard lock(recover_mu_);
      if (index_failed_.load()) {
        kv_.recover();
        index_failed_.store(false);
      }
    }
    try {
      kv_.write(batch, KvStore::Durability::Unsynced);
    } catch (const std::runtime_error&) {
      index_failed_.store(true);
      throw;
    }
  }

  void move_lru(Batch& batch, std::string_view fkey, FileRecord& rec, Millis now) {
    batch.erase(lru_fam_, codec::lru_key(rec.last_used, fkey));
    batch.put(lru_fam_, codec::lru_key(now, fkey), {});
    rec.last_used = now;
  }

  void touch_file(const std::string& fkey) {
    std::unique_lock lock(stripe(fkey));
    const Millis now = o_.clock->now_ms();
    auto f = get_file(fkey);
    if (!f || now - f->last_used < o_.touch_interval_ms) return;
    Batch batch;
    FileRecord rec = *f;
    move_lru(batch, fkey, rec, now);
    batch.put(files_fam_, fkey, codec::encode(rec));
    write_index(batch);
    hot_.touched(fkey, now);
  }

  /// Drops block `index` if its record is still `seen` (a reader found it bad).
  void drop_block_if(const std::string& fkey, std::uint64_t index, const BlockRecord& seen) {
    std::unique_lock lock(stripe(fkey));
    auto f = get_file(fkey);
    auto b = f ? get_block(codec::block_key(fkey, index)) : std::nullopt;
    if (b && *b == seen) drop_block_locked(fkey, *f, index, *b);
  }

  void drop_block_locked(const std::string& fkey, const FileRecord& f, std::uint64_t index,
                         const BlockRecord& b) {
    hot_.forget_block(fkey, index);
    FileRecord rec = f;
    rec.blocks -= 1;
    rec.bytes -= b.length;
    Batch batch;
    batch.erase(blocks_fam_, codec::block_key(fkey, index));
    batch.put(files_fam_, fkey, codec::encode(rec));
    write_index(batch);
    account(f, -1);
    account(rec, +1);
    files_->punch(f.id, offset_of(index), o_.block_bytes);
  }

  void drop_locked(const std::string& fkey, const FileRecord& f, bool evicted) {
    hot_.forget_file(fkey);
    Batch batch;
    batch.erase_range(blocks_fam_, fkey, codec::prefix_end(fkey));
    batch.erase(files_fam_, fkey);
    batch.erase(lru_fam_, codec::lru_key(f.last_used, fkey));
    write_index(batch);
    account(f, -1);
    files_->remove(f.id);
    if (evicted) {
      ++evicted_files_;
      evicted_blocks_ += f.blocks;
      evicted_bytes_ += f.bytes;
    }
  }

  /// Erases a file key's index entries when its record does not decode.
  void drop_index_of(const std::string& fkey) {
    hot_.forget_file(fkey);
    Batch batch;
    batch.erase_range(blocks_fam_, fkey, codec::prefix_end(fkey));
    batch.erase(files_fam_, fkey);
    write_index(batch);
  }

  void evict_one(const std::string& key) {
    Millis used = 0;
    std::string fkey;
    if (codec::split_lru_key(key, used, fkey)) {
      std::unique_lock lock(stripe(fkey));
      auto f = get_file(fkey);
      if (f && f->last_used == used) return drop_locked(fkey, *f, true);
    }
    Batch batch;  // not a file's current position: left by an older version
    batch.erase(lru_fam_, key);
    write_index(batch);
  }

  /// restamp (data empty) and apply_write.
  bool change(const ObjectKey& file, const Stamp& before, const Stamp& after, std::uint64_t offset,
              std::string_view data) {
    return guarded([&] {
      const std::string fkey = codec::file_key(file);
      std::unique_lock lock(stripe(fkey));
      auto f = get_file(fkey);
      if (!f) return false;
      hot_.forget_file(fkey);  // patched or restamped: kept again by the next read
      if (f->stamp != before) {
        drop_locked(fkey, *f, false);
        return false;
      }
      FileRecord rec = *f;
      Batch batch;
      // Blocks this call rewrote (nullopt: dropped), as the index will have them.
      std::map<std::uint64_t, std::optional<BlockRecord>> changed;
      if (!data.empty()) patch(fkey, rec, offset, data, batch, changed);
      std::vector<std::uint64_t> punched;
      if (before.size != after.size) fit_to_size(fkey, rec, before, after, batch, changed, punched);
      rec.stamp = after;
      batch.put(files_fam_, fkey, codec::encode(rec));
      write_index(batch);
      account(*f, -1);
      account(rec, +1);
      for (auto index : punched) files_->punch(rec.id, offset_of(index), o_.block_bytes);
      return true;
    });
  }

  /// Writes `data` at `offset` into the cached blocks it overlaps.
  void patch(const std::string& fkey, FileRecord& rec, std::uint64_t offset, std::string_view data,
             Batch& batch, std::map<std::uint64_t, std::optional<BlockRecord>>& changed) {
    const std::uint64_t bs = o_.block_bytes, end = offset + data.size();
    for (std::uint64_t index = offset / bs; index * bs < end; ++index) {
      const std::string bkey = codec::block_key(fkey, index);
      auto b = get_block(bkey);
      if (!b) continue;
      std::string bytes(std::min<std::uint64_t>(b->length, bs), '\0');
      const bool good = b->file_id == rec.id && b->length == bytes.size() &&
                        files_->read(rec.id, index * bs, bytes.data(), bytes.size()) == bytes.size() &&
                        crc32c(bytes) == b->crc;
      rec.blocks -= 1;
      rec.bytes -= b->length;
      if (!good) {
        ++corrupt_;
        batch.erase(blocks_fam_, bkey);
        changed[index] = std::nullopt;
        continue;
      }
      const std::uint64_t from = std::max(offset, index * bs), to = std::min(end, (index + 1) * bs);
      if (bytes.size() < to - index * bs) bytes.resize(to - index * bs, '\0');  // a gap reads as zeros
      bytes.replace(from - index * bs, to - from, data.substr(from - offset, to - from));
      files_->write(rec.id, index * bs, bytes);
      BlockRecord nb{rec.id, static_cast<std::uint32_t>(bytes.size()), crc32c(bytes)};
      batch.put(blocks_fam_, bkey, codec::encode(nb));
      changed[index] = nb;
      rec.blocks += 1;
      rec.bytes += nb.length;
    }
  }

  /// After a size change: drops the blocks from the smaller end on whose length
  /// no longer matches the new size (past the end, or a short block that is not
  /// the last one any more or has become too long).
  void fit_to_size(const std::string& fkey, FileRecord& rec, const Stamp& before, const Stamp& after,
                   Batch& batch, std::map<std::uint64_t, std::optional<BlockRecord>>& changed,
                   std::vector<std::uint64_t>& punched) {
    const std::uint64_t bs = o_.block_bytes;
    std::map<std::uint64_t, std::optional<BlockRecord>> blocks;
    kv_.scan(blocks_fam_, codec::block_key(fkey, std::min(before.size, after.size) / bs),
             codec::prefix_end(fkey), [&](std::string_view k, std::string_view v) {
               blocks[codec::block_index_of(k)] = codec::decode_block(v);
               return true;
             });
    for (auto& [index, b] : changed) blocks[index] = b;
    for (const auto& [index, b] : blocks) {
      if (!b) continue;
      const std::uint64_t start = index * bs;
      const std::uint64_t want = after.size > start ? std::min<std::uint64_t>(bs, after.size - start) : 0;
      if (b->length == want) continue;
      batch.erase(blocks_fam_, codec::block_key(fkey, index));
      rec.blocks -= 1;
      rec.bytes -= b->length;
      punched.push_back(index);
    }
  }

  /// Sums the usage from the file records; removes data files no record names.
  void load() {
    forget_other_block_size();
    std::unordered_set<std::uint64_t> ids;
    std::vector<std::string> undecodable;
    std::uint64_t max_id = 0;
    kv_.scan(files_fam_, "", "", [&](std::string_view k, std::string_view v) {
      auto r = codec::decode_file(v);
      if (!r) {
        undecodable.emplace_back(k);
        return true;
      }
      account(*r, +1);
      ids.insert(r->id);
      max_id = std::max(max_id, r->id);
      return true;
    });
    for (const auto& k : undecodable) drop_index_of(k);
    next_id_ = max_id + 1;
    files_->remove_unknown([&](std::uint64_t id) { return ids.contains(id); });
  }

  /// Blocks are addressed by index x block size: blocks stored under another
  /// block_kb would be read at the wrong offsets (their CRC would catch that, but
  /// only as a 32-bit check), so a change of block size drops them all.
  void forget_other_block_size() {
    static constexpr std::string_view kSizeKey = "data/block_bytes";  // default family
    const std::string mine = std::to_string(o_.block_bytes);
    std::string stored;
    const auto found = kv_.get(KvStore::kDefault, kSizeKey, stored, KvStore::Tier::Any);
    if (found == KvStore::Found::Yes && stored == mine) return;
    KvStore::Batch b;
    if (found == KvStore::Found::Yes) {
      for (auto fam : {files_fam_, blocks_fam_, lru_fam_}) b.erase_range(fam, "", "");
    }
    b.put(KvStore::kDefault, kSizeKey, mine);
    kv_.write(b, KvStore::Durability::Synced);
    // With no file records left, load() removes every data file.
  }

  std::unique_ptr<KvStore> owned_;  // when the store opened its own index
  KvStore& kv_;
  std::unique_ptr<BlockFiles> files_;
  const BlockStoreOptions o_;
  const KvStore::Family files_fam_, blocks_fam_, lru_fam_;
  std::array<std::shared_mutex, kStripes> stripes_;
  // Copies of blocks read lately; changed only under the file's stripe lock.
  HotBlocks hot_{static_cast<std::size_t>(o_.memory_bytes)};
  std::mutex evict_mu_;
  std::atomic<std::uint64_t> next_id_{1};
  std::atomic<bool> index_failed_{false};  // the last index write failed: recover() first
  std::mutex recover_mu_;
  std::atomic<std::uint64_t> files_count_{0}, blocks_{0}, bytes_{0};
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, corrupt_{0};
  std::atomic<std::uint64_t> evicted_files_{0}, evicted_blocks_{0}, evicted_bytes_{0};
};

std::string blocks_dir(const std::string& data_dir) { return data_dir + "/blocks"; }

}  // namespace

std::unique_ptr<BlockStore> open_file_block_store(const std::string& data_dir, KvStore& index,
                                                  BlockStoreOptions options) {
  return std::make_unique<IndexedBlockStore>(nullptr, index, open_disk_block_files(blocks_dir(data_dir)),
                                             options);
}

std::unique_ptr<BlockStore> open_file_block_store(const std::string& data_dir, BlockStoreOptions options) {
  auto files = open_disk_block_files(blocks_dir(data_dir));  // creates data_dir too
  std::unique_ptr<KvStore> kv;
  try {
    kv = open_rocksdb_store(data_dir + "/index",
                            RocksDbMemory{options.index_memory_bytes, options.index_memory_bytes / 4},
                            block_families());
  } catch (const std::runtime_error& e) {
    throw BlockStoreError(std::string("data cache index: ") + e.what(), 0);
  }
  KvStore& ref = *kv;
  return std::make_unique<IndexedBlockStore>(std::move(kv), ref, std::move(files), options);
}

std::unique_ptr<BlockStore> make_memory_block_store(BlockStoreOptions options) {
  auto kv = make_memory_store(block_families());
  KvStore& ref = *kv;
  return std::make_unique<IndexedBlockStore>(std::move(kv), ref, make_memory_block_files(), options);
}

}  // namespace nfsgw::cache
