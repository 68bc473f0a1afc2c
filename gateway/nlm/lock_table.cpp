// LockTable (lock_table.h): POSIX byte-range locks per file and owner.
#include "gateway/nlm/lock_table.h"

#include <algorithm>
#include <iterator>

namespace nfsgw::nlm {

namespace {

bool conflicts(bool a_exclusive, bool b_exclusive) { return a_exclusive || b_exclusive; }

}  // namespace

LockTable::Plan LockTable::plan(const Segs& segs, Range r, std::optional<bool> type) {
  // A new lock also looks at the segments that touch it, to merge with those of
  // its type; an unlock only at those it overlaps.
  const std::uint64_t lo = type && r.first > 0 ? r.first - 1 : r.first;
  const std::uint64_t hi = type && r.last < kEndOfFile ? r.last + 1 : r.last;
  Plan p;
  auto it = segs.upper_bound(lo);
  if (it != segs.begin() && std::prev(it)->second.last >= lo) --it;
  std::uint64_t new_first = r.first, new_last = r.last;
  for (; it != segs.end() && it->first <= hi; ++it) {
    const std::uint64_t a = it->first;
    const Seg& s = it->second;
    p.removed.push_back(a);
    const bool same = type && s.exclusive == *type;
    if (a <= r.last && s.last >= r.first) {
      if (a < r.first) {
        if (same) new_first = a;
        else p.added.push_back({a, {r.first - 1, s.exclusive}});
      }
      if (s.last > r.last) {
        if (same) new_last = s.last;
        else p.added.push_back({r.last + 1, {s.last, s.exclusive}});
      }
    } else if (same) {  // touches the range, same type: merge
      if (s.last < r.first) new_first = a;
      else new_last = s.last;
    } else {  // touches it, other type: stays as it is
      p.added.push_back({a, s});
    }
  }
  if (type) p.added.push_back({new_first, {new_last, *type}});
  return p;
}

std::optional<HeldLock> LockTable::conflict_in(const FileState& f, OwnerId owner, Range r, bool exclusive) {
  for (const auto& [other, segs] : f.owners) {
    if (other == owner) continue;
    auto it = segs.upper_bound(r.first);
    if (it != segs.begin() && std::prev(it)->second.last >= r.first) --it;
    for (; it != segs.end() && it->first <= r.last; ++it) {
      if (conflicts(exclusive, it->second.exclusive)) {
        return HeldLock{other, {it->first, it->second.last}, it->second.exclusive};
      }
    }
  }
  return std::nullopt;
}

bool LockTable::fits(std::ptrdiff_t delta) const {
  return delta <= 0 || lock_count_ + static_cast<std::size_t>(delta) <= limits_.max_locks;
}

void LockTable::count(const FileKey& file, OwnerId owner, std::ptrdiff_t by) {
  if (by == 0) return;
  OwnerState& o = owners_[owner];
  std::size_t& n = o.files[file];
  n = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(n) + by);
  if (n == 0) {
    o.files.erase(file);
    if (o.files.empty()) owners_.erase(owner);
  }
}

void LockTable::apply(const FileKey& file, OwnerId owner, const Plan& p) {
  if (p.removed.empty() && p.added.empty()) return;
  FileState& f = files_[file];
  Segs& segs = f.owners[owner];
  for (std::uint64_t k : p.removed) segs.erase(k);
  for (const auto& [k, s] : p.added) segs.emplace(k, s);
  lock_count_ = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(lock_count_) + p.delta());
  count(file, owner, p.delta());
  if (segs.empty()) f.owners.erase(owner);
  if (f.owners.empty() && f.waiters.empty()) files_.erase(file);
}

std::optional<HeldLock> LockTable::test(const FileKey& file, OwnerId owner, Range range, bool exclusive) const {
  auto f = files_.find(file);
  if (f == files_.end()) return std::nullopt;
  return conflict_in(f->second, owner, range, exclusive);
}

nlm4::Stat LockTable::lock(const FileKey& file, OwnerId owner, Range range, bool exclusive) {
  static const Segs kNone;
  const Segs* segs = &kNone;
  if (auto f = files_.find(file); f != files_.end()) {
    if (conflict_in(f->second, owner, range, exclusive)) return nlm4::Stat::Denied;
    if (auto o = f->second.owners.find(owner); o != f->second.owners.end()) segs = &o->second;
  }
  Plan p = plan(*segs, range, exclusive);
  if (!fits(p.delta())) return nlm4::Stat::DeniedNoLocks;
  apply(file, owner, p);
  return nlm4::Stat::Granted;
}

nlm4::Stat LockTable::unlock(const FileKey& file, OwnerId owner, Range range) {
  auto f = files_.find(file);
  if (f == files_.end()) return nlm4::Stat::Granted;
  auto o = f->second.owners.find(owner);
  if (o == f->second.owners.end()) return nlm4::Stat::Granted;
  Plan p = plan(o->second, range, std::nullopt);
  if (!fits(p.delta())) return nlm4::Stat::DeniedNoLocks;
  apply(file, owner, p);
  return nlm4::Stat::Granted;
}

std::optional<std::ptrdiff_t> LockTable::lock_delta(const FileKey& file, OwnerId owner, Range range,
                                                   bool exclusive) const {
  static const Segs kNone;
  const Segs* segs = &kNone;
  if (auto f = files_.find(file); f != files_.end()) {
    if (conflict_in(f->second, owner, range, exclusive)) return std::nullopt;
    if (auto o = f->second.owners.find(owner); o != f->second.owners.end()) segs = &o->second;
  }
  return plan(*segs, range, exclusive).delta();
}

std::ptrdiff_t LockTable::unlock_delta(const FileKey& file, OwnerId owner, Range range) const {
  auto f = files_.find(file);
  if (f == files_.end()) return 0;
  auto o = f->second.owners.find(owner);
  if (o == f->second.owners.end()) return 0;
  return plan(o->second, range, std::nullopt).delta();
}

std::optional<WaiterId> LockTable::add_waiter(const FileKey& file, OwnerId owner, Range range, bool exclusive) {
  if (auto f = files_.find(file); f != files_.end()) {
    for (WaiterId id : f->second.waiters) {
      const Waiter& w = waiters_.at(id);
      if (w.owner == owner && w.range == range && w.exclusive == exclusive) return id;
    }
  }
  if (waiters_.size() >= limits_.max_waiters) return std::nullopt;
  const WaiterId id = next_waiter_++;
  waiters_.emplace(id, Waiter{id, file, owner, range, exclusive});
  files_[file].waiters.insert(id);
  count(file, owner, 1);
  return id;
}

void LockTable::erase_waiter(std::unordered_map<WaiterId, Waiter>::iterator it) {
  const Waiter w = std::move(it->second);
  waiters_.erase(it);
  auto f = files_.find(w.file);
  f->second.waiters.erase(w.id);
  if (f->second.owners.empty() && f->second.waiters.empty()) files_.erase(f);
  count(w.file, w.owner, -1);
}

bool LockTable::cancel_waiter(const FileKey& file, OwnerId owner, Range range, bool exclusive) {
  auto f = files_.find(file);
  if (f == files_.end()) return false;
  for (WaiterId id : f->second.waiters) {
    auto it = waiters_.find(id);
    const Waiter& w = it->second;
    if (w.owner == owner && w.range == range && w.exclusive == exclusive) {
      erase_waiter(it);
      return true;
    }
  }
  return false;
}

const Waiter* LockTable::waiter(WaiterId id) const {
  auto it = waiters_.find(id);
  return it == waiters_.end() ? nullptr : &it->second;
}

std::vector<WaiterId> LockTable::ready_waiters(const FileKey& file) const {
  std::vector<WaiterId> ready;
  auto f = files_.find(file);
  if (f == files_.end()) return ready;
  std::vector<const Waiter*> taken;
  for (WaiterId id : f->second.waiters) {
    const Waiter& w = waiters_.at(id);
    if (conflict_in(f->second, w.owner, w.range, w.exclusive)) continue;
    bool blocked = false;
    for (const Waiter* t : taken) {
      if (t->owner != w.owner && t->range.overlaps(w.range) && conflicts(t->exclusive, w.exclusive)) {
        blocked = true;
        break;
      }
    }
    if (blocked) continue;
    taken.push_back(&w);
    ready.push_back(id);
  }
  return ready;
}

nlm4::Stat LockTable::grant_waiter(WaiterId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return nlm4::Stat::Denied;
  const Waiter w = it->second;
  // The queued waiter keeps the file's state alive while lock() runs; only a
  // granted waiter leaves the queue.
  const nlm4::Stat s = lock(w.file, w.owner, w.range, w.exclusive);
  if (s == nlm4::Stat::Granted) erase_waiter(waiters_.find(id));
  return s;
}

void LockTable::drop_waiter(WaiterId id) {
  auto it = waiters_.find(id);
  if (it != waiters_.end()) erase_waiter(it);
}

LockTable::Released LockTable::release_owner(OwnerId owner) {
  Released out;
  auto o = owners_.find(owner);
  if (o == owners_.end()) return out;
  std::vector<FileKey> files;
  for (const auto& [file, n] : o->second.files) files.push_back(file);
  std::sort(files.begin(), files.end());
  for (const FileKey& file : files) {
    FileState& f = files_.at(file);
    if (auto s = f.owners.find(owner); s != f.owners.end()) {
      for (const auto& [first, seg] : s->second) {
        out.locks.push_back({file, HeldLock{owner, {first, seg.last}, seg.exclusive}});
      }
      lock_count_ -= s->second.size();
      f.owners.erase(s);
    }
    for (auto w = f.waiters.begin(); w != f.waiters.end();) {
      auto it = waiters_.find(*w);
      if (it->second.owner == owner) {
        out.waiters.push_back(std::move(it->second));
        waiters_.erase(it);
        w = f.waiters.erase(w);
      } else {
        ++w;
      }
    }
    if (f.owners.empty() && f.waiters.empty()) files_.erase(file);
  }
  owners_.erase(owner);
  return out;
}

std::vector<HeldLock> LockTable::locks_of(const FileKey& file, OwnerId owner) const {
  std::vector<HeldLock> out;
  auto f = files_.find(file);
  if (f == files_.end()) return out;
  auto o = f->second.owners.find(owner);
  if (o == f->second.owners.end()) return out;
  for (const auto& [first, seg] : o->second) out.push_back({owner, {first, seg.last}, seg.exclusive});
  return out;
}

std::vector<HeldLock> LockTable::locks(const FileKey& file) const {
  std::vector<HeldLock> out;
  auto f = files_.find(file);
  if (f == files_.end()) return out;
  for (const auto& [owner, segs] : f->second.owners) {
    for (const auto& [first, seg] : segs) out.push_back({owner, {first, seg.last}, seg.exclusive});
  }
  return out;
}

std::vector<Waiter> LockTable::waiters(const FileKey& file) const {
  std::vector<Waiter> out;
  auto f = files_.find(file);
  if (f == files_.end()) return out;
  for (WaiterId id : f->second.waiters) out.push_back(waiters_.at(id));
  return out;
}

FileKey file_key(std::uint32_t export_id, const nfs3::FileHandle& origin) {
  FileKey k(4, '\0');
  for (int i = 0; i < 4; ++i) k[static_cast<std::size_t>(i)] = static_cast<char>((export_id >> (8 * i)) & 0xFF);
  k.append(reinterpret_cast<const char*>(origin.bytes.data()), origin.len);
  return k;
}

}  // namespace nfsgw::nlm
