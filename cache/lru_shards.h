// One shard of the metadata store's memory layer: records by key, least recently
// used first out, within a byte budget. Not thread-safe: the owner locks.
//
// Values are type-erased shared_ptr<const void> (the record kind is in the entry),
// so a hit hands out a reference, never a copy of a big listing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "cache/key_hash.h"

namespace nfsgw::cache {

struct MemEntry {
  std::string key;                    // kind byte + encoded key
  std::shared_ptr<const void> value;  // the record, of the entry's kind
  std::size_t size = 0;               // approximate bytes charged to the budget
  std::uint32_t used_s = 0;           // last-used time the disk copy carries (or will)
  std::uint8_t kind = 0;
  bool touched = false;               // served since it entered the memory layer
};

class LruShard {
 public:
  static constexpr std::size_t kKinds = 6;
  struct KindCount {
    std::uint64_t entries = 0, bytes = 0;
  };

  explicit LruShard(std::size_t budget) : budget_(budget) {}
  LruShard(const LruShard&) = delete;
  LruShard& operator=(const LruShard&) = delete;

  /// The entry, moved to the front (most recently used); nullptr when absent.
  MemEntry* find(std::string_view key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return &*it->second;
  }
  /// The entry without changing its place.
  MemEntry* peek(std::string_view key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &*it->second;
  }

  /// Inserts or replaces, then evicts least recently used entries until the shard
  /// is within budget, handing each to `evicted(MemEntry&&)`. A record bigger than
  /// the whole shard budget is not kept (the old entry is removed silently).
  template <typename F>
  void insert(MemEntry e, F&& evicted) {
    erase(e.key);
    if (e.size > budget_) return;
    add(e.kind, e.size);
    lru_.push_front(std::move(e));
    index_.emplace(std::string_view(lru_.front().key), lru_.begin());
    while (bytes_ > budget_) {
      auto last = std::prev(lru_.end());
      MemEntry out = std::move(*last);
      index_.erase(std::string_view(out.key));
      lru_.erase(last);
      remove(out.kind, out.size);
      evicted(std::move(out));
    }
  }

  bool erase(std::string_view key) {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    auto node = it->second;
    index_.erase(it);  // before the node: the index's key views the node's string
    remove(node->kind, node->size);
    lru_.erase(node);
    return true;
  }

  /// Removes every entry `pred` selects; returns how many.
  template <typename Pred>
  std::size_t erase_if(Pred&& pred) {
    std::size_t n = 0;
    for (auto it = lru_.begin(); it != lru_.end();) {
      if (!pred(static_cast<const MemEntry&>(*it))) {
        ++it;
        continue;
      }
      index_.erase(std::string_view(it->key));
      remove(it->kind, it->size);
      it = lru_.erase(it);
      ++n;
    }
    return n;
  }

  template <typename F>
  void for_each(F&& f) const {
    for (const auto& e : lru_) f(e);
  }

  std::size_t bytes() const { return bytes_; }
  std::size_t budget() const { return budget_; }
  const std::array<KindCount, kKinds>& counts() const { return counts_; }

 private:
  void add(std::uint8_t kind, std::size_t size) {
    bytes_ += size;
    counts_[kind].entries += 1;
    counts_[kind].bytes += size;
  }
  void remove(std::uint8_t kind, std::size_t size) {
    bytes_ -= size;
    counts_[kind].entries -= 1;
    counts_[kind].bytes -= size;
  }

  const std::size_t budget_;
  std::size_t bytes_ = 0;
  std::array<KindCount, kKinds> counts_{};
  std::list<MemEntry> lru_;  // front: most recently used
  std::unordered_map<std::string_view, std::list<MemEntry>::iterator, KeyHash> index_;
};

}  // namespace nfsgw::cache
