#include "gateway/datacache/read_ahead.h"

#include <algorithm>

namespace nfsgw::datacache {

namespace {

std::string key_of(const nfs3::FileHandle& fh) {
  return {reinterpret_cast<const char*>(fh.bytes.data()), fh.len};
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

ReadAhead::ReadAhead(std::uint32_t block_bytes, std::uint64_t window_bytes, std::size_t max_files)
    : block_(std::max<std::uint32_t>(block_bytes, 1)), window_(window_bytes), max_files_(std::max<std::size_t>(max_files, 1)) {}

BlockRange ReadAhead::on_read(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t offset,
                              std::uint64_t end, std::uint64_t max_blocks) {
  std::lock_guard lock(mu_);
  std::string key = key_of(fh);
  bool sequential = false;
  auto it = files_.find(key);
  if (it == files_.end()) {
    if (files_.size() >= max_files_) {
      files_.erase(lru_.back().key);
      lru_.pop_back();
    }
    lru_.push_front(File{key, stamp, 0, 0});
    it = files_.emplace(std::move(key), lru_.begin()).first;
    sequential = offset == 0;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second);
    const std::uint64_t last = it->second->last_end;
    sequential = (offset >= last ? offset - last : last - offset) <= block_;
  }
  File& f = *it->second;
  if (f.stamp != stamp) {
    f.stamp = stamp;
    f.started_until = 0;
  }
  f.last_end = end;
  if (!sequential) f.started_until = 0;
  if (!sequential || window_ == 0 || max_blocks == 0) return {};

  const std::uint64_t limit = std::min(stamp.size, end + window_);
  BlockRange r{std::max(ceil_div(end, block_), f.started_until), ceil_div(limit, block_)};
  if (r.size() == 0) return {};
  r.end = std::min(r.end, r.first + max_blocks);
  f.started_until = r.end;
  return r;
}

void ReadAhead::forget(const nfs3::FileHandle& fh) {
  std::lock_guard lock(mu_);
  auto it = files_.find(key_of(fh));
  if (it == files_.end()) return;
  lru_.erase(it->second);
  files_.erase(it);
}

void ReadAhead::clear() {
  std::lock_guard lock(mu_);
  files_.clear();
  lru_.clear();
}

std::size_t ReadAhead::files() const {
  std::lock_guard lock(mu_);
  return files_.size();
}

}  // namespace nfsgw::datacache
