#include "cache/hot_blocks.h"

#include <cstring>
#include <functional>
#include <utility>

namespace nfsgw::cache {

HotBlocks::HotBlocks(std::size_t budget_bytes) : shard_budget_(budget_bytes / kShards) {}

HotBlocks::Shard& HotBlocks::shard_of(std::string_view fkey) {
  // Bits above the ones the shard's table uses (it takes the hash modulo its size).
  return shards_[(KeyHash{}(fkey) >> 48) % kShards];
}

void HotBlocks::add_bytes(Shard& s, File& f, std::ptrdiff_t n) {
  f.bytes += n;
  s.bytes += n;
  bytes_.fetch_add(static_cast<std::size_t>(n), std::memory_order_relaxed);  // wraps for n < 0
}

template <typename Use>
bool HotBlocks::with_copy(std::string_view fkey, std::uint64_t index, const Stamp& stamp, Use&& use) {
  if (!enabled()) return false;
  Shard& s = shard_of(fkey);
  std::lock_guard lock(s.mu);
  const auto it = s.files.find(fkey);
  if (it == s.files.end()) return false;
  File& f = *it->second;
  if (!(f.stamp == stamp)) return false;
  const auto b = f.blocks.find(index);
  if (b == f.blocks.end()) return false;
  f.referenced = true;  // moved to the front only when eviction comes by (CLOCK)
  hits_.fetch_add(1, std::memory_order_relaxed);
  use(b->second, f.last_used);
  return true;
}

HotBlocks::Copy HotBlocks::find(std::string_view fkey, std::uint64_t index, const Stamp& stamp) {
  Copy copy;
  with_copy(fkey, index, stamp, [&copy](const std::shared_ptr<const std::string>& bytes, Millis last_used) {
    copy = {bytes, last_used};
  });
  return copy;
}

HotBlocks::Found HotBlocks::copy_out(std::string_view fkey, std::uint64_t index, const Stamp& stamp,
                                     std::size_t length, std::size_t from, std::span<char> out) {
  Found found;
  with_copy(fkey, index, stamp, [&](const std::shared_ptr<const std::string>& bytes, Millis last_used) {
    if (bytes->size() == length && from <= length && out.size() <= length - from)
      std::memcpy(out.data(), bytes->data() + from, out.size());
    found = {true, bytes->size(), last_used};
  });
  return found;
}

void HotBlocks::keep(std::string_view fkey, std::uint64_t index, const Stamp& stamp,
                     std::shared_ptr<const std::string> bytes, Millis last_used) {
  const std::size_t file_limit = shard_budget_ / 2;
  if (!bytes || bytes->size() + kBlockCost + kFileCost > file_limit) return;
  Shard& s = shard_of(fkey);
  std::lock_guard lock(s.mu);
  auto it = s.files.find(fkey);
  if (it == s.files.end()) {
    it = s.files.emplace(std::string(fkey), std::make_unique<File>()).first;
    File& f = *it->second;
    f.key = fkey;
    f.stamp = stamp;
    s.lru.push_front(&f);
    f.in_lru = s.lru.begin();
    add_bytes(s, f, kFileCost);
  }
  File& f = *it->second;
  s.lru.splice(s.lru.begin(), s.lru, f.in_lru);
  if (!(f.stamp == stamp)) {
    clear_blocks(s, f);
    f.stamp = stamp;
  }
  f.last_used = last_used;
  if (const auto old = f.blocks.find(index); old != f.blocks.end()) {
    add_bytes(s, f, -static_cast<std::ptrdiff_t>(old->second->size() + kBlockCost));
    f.blocks.erase(old);
    blocks_.fetch_sub(1, std::memory_order_relaxed);
  }
  const std::size_t cost = bytes->size() + kBlockCost;
  if (f.bytes + cost > file_limit) clear_blocks(s, f);
  f.blocks.emplace(index, std::move(bytes));
  blocks_.fetch_add(1, std::memory_order_relaxed);
  add_bytes(s, f, static_cast<std::ptrdiff_t>(cost));
  // The least recently used files go first (one found since it came to the front
  // goes to the front again); never the one just kept (it fits: at most half the
  // shard's share).
  while (s.bytes > shard_budget_ && s.lru.back() != &f) {
    File* last = s.lru.back();
    if (last->referenced) {
      last->referenced = false;
      s.lru.splice(s.lru.begin(), s.lru, last->in_lru);
    } else {
      erase(s, last);
    }
  }
}

void HotBlocks::clear_blocks(Shard& s, File& f) {
  std::ptrdiff_t freed = 0;
  for (const auto& [index, bytes] : f.blocks) freed += static_cast<std::ptrdiff_t>(bytes->size() + kBlockCost);
  blocks_.fetch_sub(f.blocks.size(), std::memory_order_relaxed);
  f.blocks.clear();
  add_bytes(s, f, -freed);
}

void HotBlocks::erase(Shard& s, File* f) {
  clear_blocks(s, *f);
  add_bytes(s, *f, -static_cast<std::ptrdiff_t>(kFileCost));
  s.lru.erase(f->in_lru);
  s.files.erase(s.files.find(f->key));  // destroys *f (not erase(f->key): a key inside the element)
}

void HotBlocks::touched(std::string_view fkey, Millis last_used) {
  if (!enabled()) return;
  Shard& s = shard_of(fkey);
  std::lock_guard lock(s.mu);
  if (const auto it = s.files.find(fkey); it != s.files.end()) it->second->last_used = last_used;
}

void HotBlocks::forget_file(std::string_view fkey) {
  changing(fkey);
  if (!enabled()) return;
  Shard& s = shard_of(fkey);
  std::lock_guard lock(s.mu);
  const auto it = s.files.find(fkey);
  if (it != s.files.end()) erase(s, it->second.get());
}

void HotBlocks::forget_block(std::string_view fkey, std::uint64_t index) {
  changing(fkey);
  if (!enabled()) return;
  Shard& s = shard_of(fkey);
  std::lock_guard lock(s.mu);
  const auto it = s.files.find(fkey);
  if (it == s.files.end()) return;
  File& f = *it->second;
  const auto b = f.blocks.find(index);
  if (b == f.blocks.end()) return;
  add_bytes(s, f, -static_cast<std::ptrdiff_t>(b->second->size() + kBlockCost));
  f.blocks.erase(b);
  blocks_.fetch_sub(1, std::memory_order_relaxed);
}

void HotBlocks::forget_all() {
  for (auto& c : changes_) c.fetch_add(1, std::memory_order_acq_rel);
  for (Shard& s : shards_) {
    std::lock_guard lock(s.mu);
    while (!s.lru.empty()) erase(s, s.lru.back());
  }
}

}  // namespace nfsgw::cache
