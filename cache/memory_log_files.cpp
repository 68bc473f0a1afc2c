// MemoryLogFiles: the dirty log's segments in memory, with what a power loss keeps.
#include <errno.h>

#include <algorithm>
#include <cstring>

#include "cache/log_files.h"

namespace nfsgw::cache {

MemoryLogFiles::Segment& MemoryLogFiles::at(std::uint64_t n) {
  for (auto& [number, s] : segments_)
    if (number == n) return s;
  throw DirtyLogError("memory log: no segment " + std::to_string(n), ENOENT);
}

void MemoryLogFiles::check_failure() const {
  if (fail_code_ != 0) throw DirtyLogError("memory log: failing as told", fail_code_);
}

std::vector<std::uint64_t> MemoryLogFiles::list() {
  std::lock_guard lock(mu_);
  std::vector<std::uint64_t> out;
  for (const auto& s : segments_) out.push_back(s.first);
  return out;
}

void MemoryLogFiles::create(std::uint64_t n) {
  std::lock_guard lock(mu_);
  check_failure();
  for (const auto& s : segments_)
    if (s.first == n) throw DirtyLogError("memory log: segment exists", EEXIST);
  auto it = std::lower_bound(segments_.begin(), segments_.end(), n,
                             [](const auto& s, std::uint64_t v) { return s.first < v; });
  segments_.insert(it, {n, Segment{}});
}

std::uint64_t MemoryLogFiles::append(std::uint64_t n, std::string_view bytes) {
  std::lock_guard lock(mu_);
  check_failure();
  if (capacity_ > 0) {
    std::uint64_t used = bytes.size();
    for (const auto& seg : segments_) used += seg.second.bytes.size();
    if (used > capacity_) throw DirtyLogError("memory log: no space left", ENOSPC);
  }
  Segment& s = at(n);
  const std::uint64_t offset = s.bytes.size();
  s.bytes.append(bytes);
  return offset;
}

void MemoryLogFiles::sync(std::uint64_t n) {
  std::lock_guard lock(mu_);
  check_failure();
  Segment& s = at(n);
  s.synced = s.bytes.size();
  ++syncs_;
}

bool MemoryLogFiles::read(std::uint64_t n, std::uint64_t offset, char* out, std::size_t size) {
  std::lock_guard lock(mu_);
  const Segment& s = at(n);
  if (offset > s.bytes.size() || s.bytes.size() - offset < size) return false;
  std::memcpy(out, s.bytes.data() + offset, size);
  return true;
}

std::uint64_t MemoryLogFiles::size(std::uint64_t n) {
  std::lock_guard lock(mu_);
  return at(n).bytes.size();
}

void MemoryLogFiles::truncate(std::uint64_t n, std::uint64_t size) {
  std::lock_guard lock(mu_);
  check_failure();
  Segment& s = at(n);
  if (size < s.bytes.size()) s.bytes.resize(size);
  s.synced = std::min<std::size_t>(s.synced, s.bytes.size());
}

void MemoryLogFiles::remove(std::uint64_t n) {
  std::lock_guard lock(mu_);
  check_failure();
  std::erase_if(segments_, [n](const auto& s) { return s.first == n; });
}

void MemoryLogFiles::power_loss(Loss loss) {
  std::lock_guard lock(mu_);
  for (auto& [n, s] : segments_) {
    const std::size_t unsynced = s.bytes.size() - s.synced;
    switch (loss) {
      case Loss::All: s.bytes.resize(s.synced); break;
      case Loss::Half: s.bytes.resize(s.synced + unsynced / 2); break;
      case Loss::HoleInside:
        if (unsynced >= 3) {
          const std::size_t from = s.synced + unsynced / 3;
          std::fill(s.bytes.begin() + static_cast<std::ptrdiff_t>(from),
                    s.bytes.begin() + static_cast<std::ptrdiff_t>(from + unsynced / 3), '\0');
        }
        break;
    }
    s.synced = s.bytes.size();
  }
  fail_code_ = 0;
}

void MemoryLogFiles::fail_with(int code) {
  std::lock_guard lock(mu_);
  fail_code_ = code;
}

void MemoryLogFiles::set_capacity(std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  capacity_ = bytes;
}

void MemoryLogFiles::flip_bit(std::uint64_t n, std::uint64_t offset) {
  std::lock_guard lock(mu_);
  Segment& s = at(n);
  if (offset < s.bytes.size()) s.bytes[offset] = static_cast<char>(s.bytes[offset] ^ 0x10);
}

std::uint64_t MemoryLogFiles::syncs() const {
  std::lock_guard lock(mu_);
  return syncs_;
}

std::uint64_t MemoryLogFiles::synced_size(std::uint64_t n) const {
  std::lock_guard lock(mu_);
  for (const auto& [number, s] : segments_)
    if (number == n) return s.synced;
  return 0;
}

}  // namespace nfsgw::cache
