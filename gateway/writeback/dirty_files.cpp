#include "gateway/writeback/dirty_files.h"

#include <algorithm>


namespace nfsgw::writeback {

namespace {

nfs3::WccAttr wcc_of(const nfs3::Fattr& a) { return {a.size, a.mtime, a.ctime}; }

bool before(const nfs3::Time& a, const nfs3::Time& b) {
  return a.seconds != b.seconds ? a.seconds < b.seconds : a.nseconds < b.nseconds;
}

}  // namespace

std::size_t DirtyFiles::stripe_of(const cache::ObjectKey& k) { return cache::ObjectKeyHash{}(k) % kStripes; }

DirtyFiles::DirtyFiles(cache::DirtyLog& log, const cache::Clock& clock) : log_(log), clock_(clock) {}

WriteBackCounts DirtyFiles::counts() const {
  const cache::DirtyUsage u = log_.usage();
  WriteBackCounts c;
  c.dirty_bytes = u.dirty_bytes;
  c.dirty_files = u.dirty_files;
  c.log_bytes = u.log_bytes;
  c.budget_bytes = u.budget;
  const cache::Millis now = clock_.now_ms();
  c.oldest_dirty_age_ms = u.oldest_written_ms == 0 || u.oldest_written_ms > now ? 0 : now - u.oldest_written_ms;
  auto v = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const WriteBackMeters& m = meters_;
  c.writes_absorbed = v(m.writes_absorbed);
  c.bytes_absorbed = v(m.bytes_absorbed);
  c.flushed_bytes = v(m.flushed_bytes);
  c.flushed_files = v(m.flushed_files);
  c.flush_writes = v(m.flush_writes);
  c.flush_commits = v(m.flush_commits);
  c.retries = v(m.retries);
  c.verifier_changes = v(m.verifier_changes);
  c.conflicts = v(m.conflicts);
  c.stale_dropped = v(m.stale_dropped);
  c.budget_waits = v(m.budget_waits);
  c.budget_jukebox = v(m.budget_jukebox);
  c.log_errors = v(m.log_errors);
  return c;
}

bool DirtyFiles::has(const cache::ObjectKey& k) const {
  if (!may_have(k)) return false;
  std::lock_guard lock(mu_);
  return files_.contains(k);
}

std::vector<cache::ObjectKey> DirtyFiles::files() const {
  std::lock_guard lock(mu_);
  std::vector<cache::ObjectKey> out;
  out.reserve(files_.size());
  for (const auto& [k, e] : files_) out.push_back(k);
  return out;
}

std::optional<nfs3::Fattr> DirtyFiles::attributes(const cache::ObjectKey& k) const {
  if (!may_have(k)) return std::nullopt;
  std::lock_guard lock(mu_);
  const auto it = files_.find(k);
  if (it == files_.end()) return std::nullopt;
  return it->second.attrs;
}

nfs3::Fattr DirtyFiles::base_locked(const cache::ObjectKey& k, const nfs3::Fattr& origin) const {
  nfs3::Fattr a = origin;
  const std::optional<cache::KeptTimes> kept = log_.kept_times(k);
  if (const auto end = log_.dirty_end(k)) {
    // Bytes from an earlier run: its snapshots showed other contents under times
    // of their own, which nothing remembers. The origin's times with these bytes
    // could be one of them (a data cache would serve that version's blocks):
    // times from now on, after any that run gave, stand for these contents.
    a.size = std::max(a.size, *end);
    a.used = std::max(a.used, a.size);
    a.mtime = next_time_locked(std::max(a.mtime, a.ctime, [](auto& x, auto& y) { return before(x, y); }));
    a.ctime = a.mtime;
  }
  // Times a SETATTR set before a restart, not sent yet: shown as they were.
  if (kept) {
    if (kept->atime) a.atime = *kept->atime;
    if (kept->mtime) a.mtime = *kept->mtime;
    a.ctime = next_time_locked(std::max(a.mtime, a.ctime, [](auto& x, auto& y) { return before(x, y); }));
  }
  return a;
}

std::optional<nfs3::Fattr> DirtyFiles::fresh_attributes(const cache::ObjectKey& k) const {
  if (!may_have(k)) return std::nullopt;
  std::lock_guard lock(mu_);
  const auto it = files_.find(k);
  if (it == files_.end() || it->second.refresh) return std::nullopt;
  return it->second.attrs;
}

bool DirtyFiles::patch(const cache::ObjectKey& k, nfs3::PostOpAttr& a) {
  if (!may_have(k)) return false;
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it == files_.end()) return false;
    Entry& e = it->second;
    if (!e.attrs) {
      if (!a || a->type != nfs3::FileType::Reg) return false;
      e.attrs = base_locked(k, *a);
      e.origin = wcc_of(*a);
      e.refresh = false;  // made from this reply: as fresh as it is
    } else if (a && a->type == nfs3::FileType::Reg) {
      // Dirty bytes decide size, used and mtime; the origin everything else.
      nfs3::Fattr merged = *a;
      const nfs3::Fattr& snap = *e.attrs;
      merged.size = snap.size;
      merged.used = snap.used;
      merged.mtime = snap.mtime;
      if (log_.which_times_kept(k).atime) merged.atime = snap.atime;  // set by a SETATTR not sent yet
      if (before(a->ctime, snap.ctime)) merged.ctime = snap.ctime;
      changed = merged != snap;
      e.attrs = merged;
      e.refresh = false;
    }
    // A REMOVE or RENAME since, and no origin attributes here: the snapshot's link
    // count may be stale; the reply goes without attributes instead.
    if (e.refresh) return false;
    a = e.attrs;
  }
  if (changed) bump(k);
  return true;
}

void DirtyFiles::origin_may_have_changed() {
  if (!any()) return;
  {
    std::lock_guard lock(mu_);
    for (auto& [k, e] : files_) e.refresh = true;
  }
  for (auto& s : stripes_) s.changes.fetch_add(1, std::memory_order_acq_rel);
}

void DirtyFiles::adopt(const cache::ObjectKey& k, const nfs3::Fattr& origin) {
  nfs3::PostOpAttr a = origin;
  patch(k, a);
}

DirtyFiles::Entry& DirtyFiles::make_locked(const cache::ObjectKey& k) {
  auto [it, made] = files_.try_emplace(k);
  if (made) {
    stripes_[stripe_of(k)].entries.fetch_add(1, std::memory_order_acq_rel);
    entries_.fetch_add(1, std::memory_order_acq_rel);
  }
  return it->second;
}

void DirtyFiles::erase_locked(std::unordered_map<cache::ObjectKey, Entry, cache::ObjectKeyHash>::iterator it) {
  stripes_[stripe_of(it->first)].entries.fetch_sub(1, std::memory_order_acq_rel);
  entries_.fetch_sub(1, std::memory_order_acq_rel);
  files_.erase(it);
}

void DirtyFiles::begin_write(const cache::ObjectKey& k, const nfs3::Fattr& origin) {
  {
    std::lock_guard lock(mu_);
    Entry& e = make_locked(k);
    if (!e.attrs) {
      e.attrs = base_locked(k, origin);
      e.origin = wcc_of(origin);
    }
    ++e.writing;
  }
  bump(k);
}

nfs3::Time DirtyFiles::next_time_locked(const nfs3::Time& t) const {
  const cache::Millis now = clock_.now_ms();
  nfs3::Time n{static_cast<std::uint32_t>(now / 1000), static_cast<std::uint32_t>(now % 1000) * 1000000u};
  if (before(t, n)) return n;
  // Not after the last one: one nanosecond later.
  n = t;
  if (++n.nseconds == 1000000000u) {
    n.nseconds = 0;
    ++n.seconds;
  }
  return n;
}

nfs3::WccData DirtyFiles::end_write(const cache::ObjectKey& k, std::uint64_t offset, std::uint64_t count) {
  nfs3::WccData wcc;
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it == files_.end()) return wcc;  // forgotten meanwhile (the file is gone at the origin)
    Entry& e = it->second;
    if (e.writing > 0) --e.writing;
    if (e.attrs) {
      nfs3::Fattr& a = *e.attrs;
      wcc.before = wcc_of(a);
      a.size = std::max(a.size, offset + count);
      a.used = std::max(a.used, a.size);
      a.mtime = next_time_locked(std::max(a.mtime, a.ctime, [](auto& x, auto& y) { return before(x, y); }));
      a.ctime = a.mtime;
      wcc.after = a;
    }
  }
  bump(k);
  return wcc;
}

void DirtyFiles::abort_write(const cache::ObjectKey& k) {
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it == files_.end()) return;
    if (it->second.writing > 0) --it->second.writing;
    if (it->second.writing == 0 && !log_.which_times_kept(k) && !log_.dirty_end(k)) erase_locked(it);
  }
  bump(k);
}

void DirtyFiles::after_setattr(const cache::ObjectKey& k, const nfs3::Fattr& after, bool size_set) {
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it == files_.end() || !it->second.attrs) return;
    nfs3::Fattr& a = *it->second.attrs;
    const std::uint64_t size = a.size;
    const nfs3::Time mtime = a.mtime;
    const nfs3::Time last = std::max(a.mtime, a.ctime, [](auto& x, auto& y) { return before(x, y); });
    const nfs3::Time atime = a.atime;
    a = after;
    if (!size_set) a.size = std::max(size, after.size);
    // The dirty bytes' mtime stays (a SETATTR of the mode does not undo a WRITE),
    // and so do times kept to be sent after the data.
    const cache::DirtyLog::KeptWhich kept = log_.which_times_kept(k);
    if (before(a.mtime, mtime) || kept.mtime) a.mtime = mtime;
    if (kept.atime) a.atime = atime;
    // Never back in time for the clients that saw the dirty times.
    if (!before(last, a.ctime)) a.ctime = next_time_locked(last);
    it->second.origin = wcc_of(after);
  }
  bump(k);
}

std::optional<DirtyFiles::TimesToKeep> DirtyFiles::resolve_times(const cache::ObjectKey& k,
                                                                  const nfs3::SetTime& atime,
                                                                  const nfs3::SetTime& mtime) const {
  std::lock_guard lock(mu_);
  const auto it = files_.find(k);
  if (it == files_.end() || !it->second.attrs) return std::nullopt;
  const nfs3::Fattr& a = *it->second.attrs;
  const nfs3::Time now = next_time_locked(std::max(a.mtime, a.ctime, [](auto& x, auto& y) { return before(x, y); }));
  auto resolve = [&](const nfs3::SetTime& t) -> std::optional<nfs3::Time> {
    if (t.how == nfs3::TimeHow::DontChange) return std::nullopt;
    return t.how == nfs3::TimeHow::ClientTime ? t.time : now;
  };
  return TimesToKeep{resolve(atime), resolve(mtime)};
}

std::optional<nfs3::WccData> DirtyFiles::show_times(const cache::ObjectKey& k, const TimesToKeep& times) {
  nfs3::WccData wcc;
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it == files_.end() || !it->second.attrs) return std::nullopt;
    nfs3::Fattr& a = *it->second.attrs;
    wcc.before = wcc_of(a);
    const nfs3::Time last = std::max(a.mtime, a.ctime, [](auto& x, auto& y) { return before(x, y); });
    if (times.atime) a.atime = *times.atime;
    if (times.mtime) a.mtime = *times.mtime;
    a.ctime = next_time_locked(last);  // a change of the file's attributes
    wcc.after = a;
  }
  bump(k);
  return wcc;
}

std::optional<cache::KeptTimes> DirtyFiles::pending_times(const cache::ObjectKey& k) const {
  if (!may_have(k)) return std::nullopt;
  return log_.kept_times(k);
}

std::vector<cache::ObjectKey> DirtyFiles::times_only() const {
  std::vector<cache::ObjectKey> out;
  if (!any()) return out;
  const std::vector<cache::ObjectKey> kept = log_.files_with_times();
  std::lock_guard lock(mu_);
  for (const cache::ObjectKey& k : kept) {
    const auto it = files_.find(k);
    if (it != files_.end() && it->second.writing == 0 && !log_.dirty_end(k)) out.push_back(k);
  }
  return out;
}

std::optional<nfs3::WccAttr> DirtyFiles::origin_seen(const cache::ObjectKey& k) const {
  std::lock_guard lock(mu_);
  const auto it = files_.find(k);
  if (it == files_.end()) return std::nullopt;
  return it->second.origin;
}

void DirtyFiles::set_origin_seen(const cache::ObjectKey& k, const nfs3::WccAttr& a) {
  std::lock_guard lock(mu_);
  const auto it = files_.find(k);
  if (it != files_.end()) it->second.origin = a;
}

void DirtyFiles::cleaning(const cache::ObjectKey& k) {
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it != files_.end()) ++it->second.cleans;
  }
  bump(k);
}

std::optional<std::uint64_t> DirtyFiles::clean_count(const cache::ObjectKey& k) const {
  if (!may_have(k)) return std::nullopt;
  std::lock_guard lock(mu_);
  const auto it = files_.find(k);
  if (it == files_.end()) return std::nullopt;
  return it->second.cleans;
}

bool DirtyFiles::settle(const cache::ObjectKey& k) {
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it == files_.end()) return true;
    if (it->second.writing > 0 || log_.which_times_kept(k) || log_.dirty_end(k)) return false;
    erase_locked(it);
  }
  bump(k);
  return true;
}

void DirtyFiles::forget(const cache::ObjectKey& k) {
  {
    std::lock_guard lock(mu_);
    const auto it = files_.find(k);
    if (it == files_.end()) return;
    erase_locked(it);
  }
  bump(k);
}

void DirtyFiles::load_from_log() {
  std::vector<cache::ObjectKey> keys = log_.dirty_files();
  for (cache::ObjectKey& k : log_.files_with_times()) keys.push_back(std::move(k));
  for (const cache::ObjectKey& k : keys) {
    {
      std::lock_guard lock(mu_);
      make_locked(k);
    }
    bump(k);
  }
}

}  // namespace nfsgw::writeback
