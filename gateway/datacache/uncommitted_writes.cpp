#include "gateway/datacache/uncommitted_writes.h"

#include <span>

namespace nfsgw::datacache {

std::string UncommittedWrites::key(const nfs3::FileHandle& fh) {
  const auto v = fh.view();
  return std::string(v.begin(), v.end());
}

Forget UncommittedWrites::on_verifier(const nfs3::WriteVerf& verf) {
  Forget drop;
  if (verf_ && *verf_ == verf) return drop;
  if (verf_) {
    ++changes_;
    drop.verifier_changed = true;
    drop.files.reserve(files_.size());
    for (const auto& k : files_) {
      drop.files.emplace_back(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(k.data()), k.size()));
    }
    files_.clear();
  }
  verf_ = verf;
  return drop;
}

Forget UncommittedWrites::written(const nfs3::FileHandle& fh, const nfs3::WriteVerf& verf, bool unstable) {
  std::lock_guard lock(mu_);
  Forget drop = on_verifier(verf);
  if (!unstable) return drop;
  std::string k = key(fh);
  if (files_.count(k) != 0) return drop;
  if (files_.size() >= max_files_) {
    drop.files.push_back(fh);  // not tracked: its blocks go now
    return drop;
  }
  files_.insert(std::move(k));
  return drop;
}

Forget UncommittedWrites::committed(const nfs3::FileHandle& fh, const nfs3::WriteVerf& verf, bool whole_file) {
  std::lock_guard lock(mu_);
  Forget drop = on_verifier(verf);
  if (whole_file) files_.erase(key(fh));
  return drop;
}

std::size_t UncommittedWrites::files() const {
  std::lock_guard lock(mu_);
  return files_.size();
}

std::size_t UncommittedWrites::verifier_changes() const {
  std::lock_guard lock(mu_);
  return changes_;
}

}  // namespace nfsgw::datacache
