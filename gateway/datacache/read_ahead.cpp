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

ReadAhead::Decision ReadAhead::decide(const File* f, const cache::Stamp& stamp, std::uint64_t offset,
                                      std::uint64_t end) const {
  Decision d;
  if (f == nullptr) {
    d.sequential = offset == 0;
  } else {
    const std::uint64_t last = f->last_end;
    d.sequential = (offset >= last ? offset - last : last - offset) <= block_;
  }
  if (!d.sequential || window_ == 0) return d;
  const std::uint64_t started = f != nullptr && f->stamp == stamp ? f->started_until : 0;
  const std::uint64_t limit = std::min(stamp.size, end + window_);
  d.due = BlockRange{std::max(ceil_div(end, block_), started), ceil_div(limit, block_)};
  return d;
}

ReadAhead::File& ReadAhead::note(std::string key, const cache::Stamp& stamp, std::uint64_t end, bool sequential) {
  auto it = files_.find(key);
  if (it == files_.end()) {
    if (files_.size() >= max_files_) {
      files_.erase(lru_.back().key);
      lru_.pop_back();
    }
    lru_.push_front(File{key, stamp, 0, 0});
    it = files_.emplace(std::move(key), lru_.begin()).first;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second);
  }
  File& f = *it->second;
  if (f.stamp != stamp) {
    f.stamp = stamp;
    f.started_until = 0;
  }
  f.last_end = end;
  if (!sequential) f.started_until = 0;
  return f;
}

BlockRange ReadAhead::on_read(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t offset,
                              std::uint64_t end, std::uint64_t max_blocks) {
  std::lock_guard lock(mu_);
  std::string key = key_of(fh);
  const auto it = files_.find(key);
  const Decision d = decide(it == files_.end() ? nullptr : &*it->second, stamp, offset, end);
  File& f = note(std::move(key), stamp, end, d.sequential);
  if (d.due.size() == 0 || max_blocks == 0) return {};
  BlockRange r = d.due;
  r.end = std::min(r.end, r.first + max_blocks);
  f.started_until = r.end;
  return r;
}

bool ReadAhead::on_read_if_none_due(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t offset,
                                    std::uint64_t end) {
  std::lock_guard lock(mu_);
  std::string key = key_of(fh);
  const auto it = files_.find(key);
  const Decision d = decide(it == files_.end() ? nullptr : &*it->second, stamp, offset, end);
  if (d.due.size() > 0) return false;
  note(std::move(key), stamp, end, d.sequential);
  return true;
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
