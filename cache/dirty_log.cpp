// DirtyLog: appending, group syncs, the index of dirty bytes, taking and cleaning,
// removing dead segments, and the replay on opening. See dirty_log.h.
#include "cache/dirty_log.h"

#include <errno.h>
#include <sys/random.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace nfsgw::cache {

namespace {
constexpr std::uint64_t kEnd = std::numeric_limits<std::uint64_t>::max();
}  // namespace

std::unique_ptr<DirtyLog> DirtyLog::open(LogFiles& files, DirtyLogOptions options) {
  std::unique_ptr<DirtyLog> log(new DirtyLog(files, nullptr, options));
  log->replay();
  return log;
}

std::unique_ptr<DirtyLog> DirtyLog::open(const std::string& dir, DirtyLogOptions options) {
  auto files = open_disk_log_files(dir);
  LogFiles& ref = *files;
  std::unique_ptr<DirtyLog> log(new DirtyLog(ref, std::move(files), options));
  log->replay();
  return log;
}

DirtyLog::DirtyLog(LogFiles& files, std::unique_ptr<LogFiles> owned, DirtyLogOptions options)
    : files_(files), owned_(std::move(owned)), options_(options) {
  counters_.budget = options_.budget_bytes;
}

DirtyLog::~DirtyLog() = default;

// ---- appending ----------------------------------------------------------------------


void DirtyLog::start_segment_locked(std::uint64_t n) {
  files_.create(n);
  segments_[n] = SegmentUse{};
  current_ = n;
}

void DirtyLog::rotate_locked() {
  // Only the newest segment may end torn: this one is made durable before the
  // next one exists, and with it every record so far.
  files_.sync(current_);
  ++counters_.syncs;
  synced_seq_ = next_seq_ - 1;
  start_segment_locked(current_ + 1);
  drop_dead_segments_locked();
}

std::pair<std::uint64_t, std::uint64_t> DirtyLog::append_locked(const std::string& frame) {
  SegmentUse& cur = segments_[current_];
  if (cur.size > 0 && cur.size + frame.size() > options_.segment_bytes) rotate_locked();
  std::uint64_t at = 0;
  try {
    at = files_.append(current_, frame);
  } catch (const DirtyLogError&) {
    // A full disk: a current segment whose bytes are all clean holds space that
    // only moving past it gives back (the dead segments go). Once, then as it is.
    const SegmentUse& now = segments_[current_];
    if (now.size == 0 || now.in_use()) throw;
    rotate_locked();
    at = files_.append(current_, frame);
  }
  log_bytes_ += at + frame.size() - segments_[current_].size;
  segments_[current_].size = at + frame.size();
  return {current_, at};
}

std::optional<DirtyLog::Placed> DirtyLog::log_locked(DirtyRecord& r, bool may_refuse) {
  r.seq = next_seq_;
  std::string frame;
  encode_dirty_record(r, frame);
  if (may_refuse && log_bytes_ + frame.size() > options_.budget_bytes) {
    // A current segment whose bytes are all clean counts until the log moves past
    // it: it moves now, and the dead segments go.
    const SegmentUse& cur = segments_[current_];
    if (cur.size == 0 || cur.in_use()) return std::nullopt;
    rotate_locked();
    if (log_bytes_ + frame.size() > options_.budget_bytes) return std::nullopt;
  }
  const auto [segment, at] = append_locked(frame);
  ++next_seq_;  // only once the record is in the log
  return Placed{segment, at, r.seq};
}

DirtyLog::Appended DirtyLog::write(const ObjectKey& file, std::uint64_t offset, std::string_view data,
                                   const Writer& writer, bool stable) {
  if (data.empty()) return Appended::Ok;  // nothing to keep (a WRITE of 0 bytes)
  std::unique_lock lock(mu_);
  DirtyRecord r;
  r.kind = DirtyRecord::Kind::Write;
  r.file = file;
  r.offset = offset;
  r.writer = writer;
  r.data = data;
  const auto placed = log_locked(r, /*may_refuse=*/true);
  if (!placed) {
    ++counters_.full_refusals;
    return Appended::Full;
  }
  const auto [segment, at, seq] = *placed;
  ++counters_.writes;
  Piece p;
  p.end = offset + data.size();
  p.seq = seq;
  p.segment = segment;
  p.data_at = at + dirty_frame_head_size(r);
  p.writer = std::make_shared<const Writer>(writer);
  p.written_ms = options_.clock->now_ms();
  segments_[segment].live += data.size();
  put_locked(file, offset, p.end, std::move(p));
  FileDirty& f = files_dirty_[file];
  f.newest_segment = segment;
  written_after_times_locked(f);
  if (stable) sync_through(seq, lock);
  return Appended::Ok;
}

void DirtyLog::sync() {
  std::unique_lock lock(mu_);
  sync_through(next_seq_ - 1, lock);
}

void DirtyLog::sync_through(std::uint64_t seq, std::unique_lock<std::mutex>& lock) {
  while (synced_seq_ < seq) {
    if (syncing_) {
      synced_cv_.wait(lock);
      continue;
    }
    // This caller syncs for everyone: every record appended so far is in the
    // current segment or in an older one, synced when the current one started.
    syncing_ = true;
    const std::uint64_t target = next_seq_ - 1;
    const std::uint64_t segment = current_;
    lock.unlock();
    try {
      files_.sync(segment);
    } catch (...) {
      lock.lock();
      syncing_ = false;
      synced_cv_.notify_all();
      // A rotation meanwhile synced this segment with everything in it and may have
      // removed it once dead: what was asked for is durable, the failure is moot.
      if (synced_seq_ >= seq) return;
      throw;
    }
    lock.lock();
    syncing_ = false;
    ++counters_.syncs;
    synced_seq_ = std::max(synced_seq_, target);
    synced_cv_.notify_all();
  }
}

void DirtyLog::begin_run_locked(std::optional<std::uint64_t> kept, std::uint64_t last,
                                std::unique_lock<std::mutex>& lock) {
  if (kept) {
    verifier_ = *kept;
  } else {
    std::uint64_t v = 0;
    if (::getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v))
      throw DirtyLogError(std::string("dirty log: no random write verifier: ") + std::strerror(errno), errno);
    // Never the last run's, even by chance.
    verifier_ = v == last ? v + 1 : v;
  }
  DirtyRecord r;
  r.kind = DirtyRecord::Kind::Start;
  r.offset = verifier_;
  const auto placed = *log_locked(r, /*may_refuse=*/false);
  sync_through(placed.seq, lock);
}

void DirtyLog::close_clean() {
  std::unique_lock lock(mu_);
  DirtyRecord r;
  r.kind = DirtyRecord::Kind::CleanStop;
  r.offset = verifier_;
  const auto placed = *log_locked(r, /*may_refuse=*/false);
  sync_through(placed.seq, lock);
}

void DirtyLog::truncate(const ObjectKey& file, std::uint64_t size) {
  undo(DirtyRecord::Kind::Truncate, file, size);
}

void DirtyLog::drop(const ObjectKey& file) { undo(DirtyRecord::Kind::Drop, file, 0); }

void DirtyLog::undo(DirtyRecord::Kind kind, const ObjectKey& file, std::uint64_t from) {
  std::unique_lock lock(mu_);
  // No record of the file in the log: nothing a replay could bring back.
  if (files_dirty_.find(file) == files_dirty_.end()) return;
  DirtyRecord r;
  r.kind = kind;
  r.file = file;
  r.offset = from;
  // Undoing bytes is never refused for room: it is what frees it.
  const auto [segment, at, seq] = *log_locked(r, /*may_refuse=*/false);
  FileDirty& f = files_dirty_[file];
  cut_locked(f, from, kEnd);
  if (kind == DirtyRecord::Kind::Drop) set_times_locked(f, std::nullopt, segment);
  f.newest_segment = segment;
  sync_through(seq, lock);
  drop_dead_segments_locked();
}

// ---- kept times -----------------------------------------------------------------------

void DirtyLog::set_times_locked(FileDirty& f, std::optional<KeptTimes> t, std::uint64_t segment) {
  if (f.times) {
    auto s = segments_.find(f.times_segment);
    if (s != segments_.end() && s->second.held > 0) --s->second.held;
  }
  if (t && !t->atime && !t->mtime) t.reset();
  f.times = std::move(t);
  if (f.times) {
    ++segments_[segment].held;
    f.times_segment = segment;
  }
}

void DirtyLog::written_after_times_locked(FileDirty& f) {
  if (!f.times || !f.times->mtime) return;
  // The record stays where it is (its atime still counts on a replay, which
  // applies this write after it); only the index changes.
  KeptTimes t = *f.times;
  t.mtime.reset();
  set_times_locked(f, std::move(t), f.times_segment);
}

KeptTimes DirtyLog::keep_times(const ObjectKey& file, const std::optional<nfs3::Time>& atime,
                               const std::optional<nfs3::Time>& mtime, const Writer& writer) {
  std::unique_lock lock(mu_);
  const auto found = files_dirty_.find(file);
  const std::optional<KeptTimes> was = found == files_dirty_.end() ? std::nullopt : found->second.times;
  DirtyRecord r;
  r.kind = DirtyRecord::Kind::Times;
  r.file = file;
  r.writer = writer;
  r.atime = atime ? atime : (was ? was->atime : std::nullopt);
  r.mtime = mtime ? mtime : (was ? was->mtime : std::nullopt);
  const auto [segment, at, seq] = *log_locked(r, /*may_refuse=*/false);
  KeptTimes now{r.atime, r.mtime, writer, was ? was->since : options_.clock->now_ms(), seq};
  FileDirty& f = files_dirty_[file];
  set_times_locked(f, now, segment);
  f.newest_segment = segment;
  sync_through(seq, lock);
  return now;
}

std::optional<KeptTimes> DirtyLog::kept_times(const ObjectKey& file) const {
  std::lock_guard lock(mu_);
  const auto it = files_dirty_.find(file);
  if (it == files_dirty_.end()) return std::nullopt;
  return it->second.times;
}

DirtyLog::KeptWhich DirtyLog::which_times_kept(const ObjectKey& file) const {
  std::lock_guard lock(mu_);
  const auto it = files_dirty_.find(file);
  if (it == files_dirty_.end() || !it->second.times) return {};
  return {it->second.times->atime.has_value(), it->second.times->mtime.has_value()};
}

void DirtyLog::times_sent(const ObjectKey& file, std::uint64_t seq) {
  std::unique_lock lock(mu_);
  const auto it = files_dirty_.find(file);
  if (it == files_dirty_.end() || !it->second.times || it->second.times->seq != seq) return;
  DirtyRecord r;
  r.kind = DirtyRecord::Kind::Times;  // with no time: none kept any more
  r.file = file;
  const auto placed = *log_locked(r, /*may_refuse=*/false);
  set_times_locked(it->second, std::nullopt, placed.segment);
  it->second.newest_segment = placed.segment;
  sync_through(placed.seq, lock);
  drop_dead_segments_locked();
}

std::vector<ObjectKey> DirtyLog::files_with_times() const {
  std::lock_guard lock(mu_);
  std::vector<ObjectKey> out;
  for (const auto& [key, f] : files_dirty_)
    if (f.times) out.push_back(key);
  return out;
}

// ---- the index ------------------------------------------------------------------------

void DirtyLog::forget_piece_bytes_locked(const Piece& p, std::uint64_t bytes) {
  auto s = segments_.find(p.segment);
  if (s != segments_.end()) s->second.live -= std::min(s->second.live, bytes);
  dirty_bytes_ -= std::min(dirty_bytes_, bytes);
}

void DirtyLog::cut_locked(FileDirty& f, std::uint64_t from, std::uint64_t to) {
  if (from >= to) return;
  auto it = f.pieces.upper_bound(from);
  if (it != f.pieces.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > from) it = prev;
  }
  while (it != f.pieces.end() && it->first < to) {
    const std::uint64_t start = it->first;
    Piece p = it->second;
    it = f.pieces.erase(it);
    const std::uint64_t cut_from = std::max(start, from), cut_to = std::min(p.end, to);
    forget_piece_bytes_locked(p, cut_to - cut_from);
    if (start < from) {  // the part before the cut stays
      Piece left = p;
      left.end = from;
      f.pieces.emplace(start, std::move(left));
    }
    if (p.end > to) {  // and the part after it
      Piece right = p;
      right.data_at += to - start;
      it = f.pieces.emplace(to, std::move(right)).first;
      ++it;
    }
  }
}

void DirtyLog::put_locked(const ObjectKey& file, std::uint64_t offset, std::uint64_t end, Piece piece) {
  FileDirty& f = files_dirty_[file];
  cut_locked(f, offset, end);
  dirty_bytes_ += end - offset;
  f.pieces.emplace(offset, std::move(piece));
}

std::optional<std::uint64_t> DirtyLog::dirty_end(const ObjectKey& file) const {
  std::lock_guard lock(mu_);
  auto it = files_dirty_.find(file);
  if (it == files_dirty_.end() || it->second.pieces.empty()) return std::nullopt;
  return it->second.pieces.rbegin()->second.end;
}

std::uint64_t DirtyLog::overlay(const ObjectKey& file, std::uint64_t offset, std::span<char> out) const {
  std::lock_guard lock(mu_);
  auto fit = files_dirty_.find(file);
  if (fit == files_dirty_.end() || out.empty()) return 0;
  const auto& pieces = fit->second.pieces;
  const std::uint64_t end = offset + out.size();
  auto it = pieces.upper_bound(offset);
  if (it != pieces.begin() && std::prev(it)->second.end > offset) --it;
  std::uint64_t copied = 0;
  for (; it != pieces.end() && it->first < end; ++it) {
    const std::uint64_t from = std::max(it->first, offset), to = std::min(it->second.end, end);
    if (!files_.read(it->second.segment, it->second.data_at + (from - it->first), out.data() + (from - offset),
                     to - from))
      throw DirtyLogError("dirty log: segment " + std::to_string(it->second.segment) + " is shorter than its index",
                          EIO);
    copied += to - from;
  }
  return copied;
}

// ---- flushing ---------------------------------------------------------------------------

std::vector<DirtyExtent> DirtyLog::take(Millis written_before, std::uint64_t max_bytes, std::uint64_t max_extent) {
  return take([written_before](const ObjectKey&) -> std::optional<Millis> { return written_before; }, max_bytes,
              max_extent);
}

std::vector<DirtyExtent> DirtyLog::take(const Cutoff& written_before, std::uint64_t max_bytes,
                                        std::uint64_t max_extent) {
  std::lock_guard lock(mu_);
  // Files with due bytes, by their oldest due byte.
  std::vector<Due> due;
  for (const auto& [key, f] : files_dirty_) {
    const std::optional<Millis> cutoff = written_before(key);
    if (!cutoff) continue;
    Millis oldest = kNever;
    for (const auto& [start, p] : f.pieces)
      if (!p.taken && p.written_ms <= *cutoff) oldest = std::min(oldest, p.written_ms);
    if (oldest != kNever) due.push_back(Due{oldest, *cutoff, &key});
  }
  std::sort(due.begin(), due.end(), [](const Due& a, const Due& b) { return a.oldest < b.oldest; });

  std::vector<DirtyExtent> out;
  max_extent = std::max<std::uint64_t>(max_extent, 1);
  try {
    take_locked(due, max_bytes, max_extent, out);
  } catch (...) {
    for (const auto& e : out) untake_locked(e);  // a disk that failed mid-way: none stays taken
    throw;
  }
  return out;
}

void DirtyLog::take_locked(const std::vector<Due>& due, std::uint64_t max_bytes, std::uint64_t max_extent, std::vector<DirtyExtent>& out) {
  std::uint64_t total = 0;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  for (const Due& d : due) {
    const ObjectKey* key = d.key;
    const Millis written_before = d.written_before;
    FileDirty& f = files_dirty_.at(*key);
    std::size_t open = kNone;  // the extent the next adjacent bytes may join
    for (auto& [start, p] : f.pieces) {
      if (total >= max_bytes) break;
      if (p.taken || p.written_ms > written_before) {
        open = kNone;
        continue;
      }
      std::uint64_t at = start;
      while (at < p.end) {
        const bool joins = open != kNone && out[open].offset + out[open].data.size() == at &&
                           out[open].data.size() < max_extent && out[open].writer == *p.writer;
        if (!joins) {
          out.push_back(DirtyExtent{*key, at, {}, 0, *p.writer, p.written_ms});
          open = out.size() - 1;
        }
        DirtyExtent& e = out[open];
        const std::uint64_t n = std::min(p.end - at, max_extent - e.data.size());
        const std::size_t was = e.data.size();
        e.data.resize(was + n);
        if (!files_.read(p.segment, p.data_at + (at - start), e.data.data() + was, n))
          throw DirtyLogError("dirty log: segment " + std::to_string(p.segment) + " is shorter than its index", EIO);
        e.seq = std::max(e.seq, p.seq);
        e.written_ms = std::min(e.written_ms, p.written_ms);
        total += n;
        at += n;
        if (e.data.size() >= max_extent) open = kNone;
      }
      p.taken = true;
    }
    if (total >= max_bytes) break;
  }
}

void DirtyLog::cleaned(const DirtyExtent& e) { cleaned(std::span<const DirtyExtent>(&e, 1)); }

void DirtyLog::cleaned(std::span<const DirtyExtent> extents) {
  std::unique_lock lock(mu_);
  // A Clean record for each extent, synced before the bytes leave the index: a
  // replay must not bring back bytes the origin has, since what it holds may
  // change from then on without the log (a SETATTR of the size, a write-through
  // export's WRITE).
  std::uint64_t last = 0;
  for (const DirtyExtent& e : extents) {
    auto fit = files_dirty_.find(e.file);
    if (fit == files_dirty_.end()) continue;
    DirtyRecord r;
    r.kind = DirtyRecord::Kind::Clean;
    r.file = e.file;
    r.offset = e.offset;
    r.length = e.data.size();
    r.upto = e.seq;
    const auto placed = *log_locked(r, /*may_refuse=*/false);
    fit->second.newest_segment = placed.segment;
    last = placed.seq;
  }
  if (last != 0) sync_through(last, lock);
  for (const DirtyExtent& e : extents) {
    auto fit = files_dirty_.find(e.file);
    if (fit != files_dirty_.end()) clean_locked(fit->second, e.offset, e.offset + e.data.size(), e.seq);
  }
  drop_dead_segments_locked();
}

void DirtyLog::clean_locked(FileDirty& f, std::uint64_t offset, std::uint64_t end, std::uint64_t upto) {
  // The runs written no later than `upto`: those are the bytes the origin now holds.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> clean;
  auto it = f.pieces.upper_bound(offset);
  if (it != f.pieces.begin() && std::prev(it)->second.end > offset) --it;
  for (; it != f.pieces.end() && it->first < end; ++it)
    if (it->second.seq <= upto) clean.emplace_back(std::max(it->first, offset), std::min(it->second.end, end));
  for (const auto& [from, to] : clean) cut_locked(f, from, to);
}

void DirtyLog::untake(const DirtyExtent& e) {
  std::lock_guard lock(mu_);
  untake_locked(e);
}

void DirtyLog::untake_locked(const DirtyExtent& e) {
  auto fit = files_dirty_.find(e.file);
  if (fit == files_dirty_.end()) return;
  const std::uint64_t end = e.offset + e.data.size();
  auto& pieces = fit->second.pieces;
  auto it = pieces.upper_bound(e.offset);
  if (it != pieces.begin() && std::prev(it)->second.end > e.offset) --it;
  for (; it != pieces.end() && it->first < end; ++it)
    if (it->second.seq <= e.seq) it->second.taken = false;
}

void DirtyLog::drop_dead_segments_locked() {
  bool removed = false;
  while (!segments_.empty()) {
    auto oldest = segments_.begin();
    if (oldest->first == current_ || oldest->second.in_use()) break;
    try {
      // A segment may be dead because newer writes replaced its bytes: those must
      // be durable before it goes, or a power loss would lose both (a stable write
      // replaced by an UNSTABLE one not yet committed).
      if (synced_seq_ + 1 < next_seq_) {
        files_.sync(current_);
        ++counters_.syncs;
        synced_seq_ = next_seq_ - 1;
      }
      files_.remove(oldest->first);
    } catch (const DirtyLogError&) {
      return;  // tried again after the next clean
    }
    log_bytes_ -= oldest->second.size;
    segments_.erase(oldest);
    removed = true;
  }
  if (!removed) return;
  // A file with no dirty bytes whose every record was in removed segments is
  // forgotten: nothing a replay could bring back.
  const std::uint64_t first = segments_.empty() ? 0 : segments_.begin()->first;
  std::erase_if(files_dirty_, [first](const auto& kv) {
    return kv.second.pieces.empty() && !kv.second.times && kv.second.newest_segment < first;
  });
}

std::vector<ObjectKey> DirtyLog::dirty_files() const {
  std::lock_guard lock(mu_);
  std::vector<ObjectKey> out;
  for (const auto& [key, f] : files_dirty_)
    if (!f.pieces.empty()) out.push_back(key);
  return out;
}

std::optional<Millis> DirtyLog::oldest_written(const ObjectKey& file) const {
  std::lock_guard lock(mu_);
  const auto it = files_dirty_.find(file);
  if (it == files_dirty_.end() || it->second.pieces.empty()) return std::nullopt;
  Millis oldest = kNever;
  for (const auto& [start, p] : it->second.pieces) oldest = std::min(oldest, p.written_ms);
  return oldest;
}

DirtyUsage DirtyLog::usage() const {
  std::lock_guard lock(mu_);
  DirtyUsage u = counters_;
  u.dirty_bytes = dirty_bytes_;
  u.log_bytes = log_bytes_;
  u.segments = segments_.size();
  Millis oldest = kNever;
  for (const auto& [key, f] : files_dirty_) {
    if (f.pieces.empty()) continue;
    ++u.dirty_files;
    for (const auto& [start, p] : f.pieces) oldest = std::min(oldest, p.written_ms);
  }
  u.oldest_written_ms = oldest == kNever ? 0 : oldest;
  return u;
}

// ---- opening ------------------------------------------------------------------------------

void DirtyLog::replay() {
  std::unique_lock lock(mu_);
  const std::vector<std::uint64_t> numbers = files_.list();
  if (numbers.empty()) {
    start_segment_locked(1);
    begin_run_locked(std::nullopt, 0, lock);
    return;
  }
  // The verifier of a CleanStop record that no record followed.
  std::optional<std::uint64_t> clean_stop;
  std::uint64_t last_start = 0;  // the verifier of the last run that began
  const Millis now = options_.clock->now_ms();
  std::string bytes;
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const std::uint64_t n = numbers[i];
    const bool newest = i + 1 == numbers.size();
    const std::uint64_t size = files_.size(n);
    segments_[n] = SegmentUse{size, 0};
    log_bytes_ += size;
    bytes.resize(size);
    if (!files_.read(n, 0, bytes.data(), size))
      throw DirtyLogError("dirty log: cannot read segment " + std::to_string(n), EIO);
    const std::string_view view(bytes);
    std::uint64_t pos = 0;
    while (pos < size) {
      auto d = decode_dirty_frame(view.substr(pos));
      if (!d) {
        if (newest) {
          // A tail torn by a crash: never synced, so never acknowledged as stable.
          counters_.torn_bytes += size - pos;
          files_.truncate(n, pos);
          log_bytes_ -= size - pos;
          segments_[n].size = pos;
        } else {
          counters_.corrupt_bytes += size - pos;
        }
        break;
      }
      const DirtyRecord& r = d->record;
      next_seq_ = std::max(next_seq_, r.seq + 1);
      const std::uint64_t at = pos;
      ++counters_.replayed_records;
      pos += d->frame_bytes;
      clean_stop.reset();
      if (r.kind == DirtyRecord::Kind::Start) last_start = r.offset;
      if (r.kind == DirtyRecord::Kind::CleanStop) clean_stop = r.offset;
      if (r.kind == DirtyRecord::Kind::Start || r.kind == DirtyRecord::Kind::CleanStop) continue;
      FileDirty& f = files_dirty_[r.file];
      f.newest_segment = n;
      switch (r.kind) {
        case DirtyRecord::Kind::Write: {
          if (r.data.empty()) break;
          Piece p;
          p.end = r.offset + r.data.size();
          p.seq = r.seq;
          p.segment = n;
          p.data_at = at + d->data_at;
          p.writer = std::make_shared<const Writer>(r.writer);
          p.written_ms = now;
          segments_[n].live += r.data.size();
          put_locked(r.file, r.offset, p.end, std::move(p));
          written_after_times_locked(f);
          break;
        }
        case DirtyRecord::Kind::Truncate: cut_locked(f, r.offset, kEnd); break;
        case DirtyRecord::Kind::Clean: clean_locked(f, r.offset, r.offset + r.length, r.upto); break;
        case DirtyRecord::Kind::Drop:
          cut_locked(f, 0, kEnd);
          set_times_locked(f, std::nullopt, n);
          break;
        case DirtyRecord::Kind::Times:
          set_times_locked(f, KeptTimes{r.atime, r.mtime, r.writer, now, r.seq}, n);
          break;
        case DirtyRecord::Kind::Start:
        case DirtyRecord::Kind::CleanStop: break;  // above
      }
    }
    if (pos < size) clean_stop.reset();  // a record after it was torn or lost
  }
  current_ = numbers.back();
  // What a crash of the process left in the page cache is made durable now.
  files_.sync(current_);
  synced_seq_ = next_seq_ - 1;
  drop_dead_segments_locked();
  begin_run_locked(clean_stop, last_start, lock);
}

}  // namespace nfsgw::cache
