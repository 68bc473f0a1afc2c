// The dirty files: what every write-back layer and the flusher share about the
// files that have bytes in the dirty log (cache/dirty_log.h) or a WRITE on its way
// there. One per nfsgw, over every export: a file is its cache space and ORIGIN
// handle, so every export of one origin sees the same entry.
//
// For each such file an entry holds:
// - the attributes nfsgw answers for it (its snapshot): the origin's when the file
//   first became dirty (or, after a restart, when first asked), with the size
//   grown to where the dirty bytes end and mtime/ctime moved by every WRITE, kept
//   strictly increasing so that each WRITE's WCC data differs;
// - the origin's attributes as nfsgw last saw them (size, mtime, ctime), so that a
//   flush can tell the origin's copy changed behind nfsgw's back (a conflict);
// - the WRITEs on their way into the log, so that the entry is never dropped
//   under one;
// - a clean count that moves whenever the flusher cleans any of its bytes, so
//   that a READ that read the origin and then the log can tell whether a flush
//   landed in between.
//
// The answer memo watches a file's stripe counter (one of kStripes): it moves
// whenever the file's entry changes, before the change is visible to any reply.
// Every method is thread-safe; none does file I/O (the log's calls that do are
// the callers', on a disk pool), but several read the log's index in memory.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/clock.h"
#include "cache/dirty_log.h"
#include "cache/metadata_records.h"
#include "gateway/writeback/write_back_types.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::writeback {

/// The counters every layer and the flusher add to (WriteBackCounts, without the
/// log's usage).
struct WriteBackMeters {
  std::atomic<std::uint64_t> writes_absorbed{0}, bytes_absorbed{0}, flushed_bytes{0}, flushed_files{0},
      flush_writes{0}, flush_commits{0}, retries{0}, verifier_changes{0}, conflicts{0}, stale_dropped{0},
      budget_waits{0}, budget_jukebox{0}, log_errors{0};
  static void add(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
};

class DirtyFiles {
 public:
  static constexpr std::size_t kStripes = 64;

  DirtyFiles(cache::DirtyLog& log, const cache::Clock& clock);

  cache::DirtyLog& log() { return log_; }
  WriteBackMeters& meters() { return meters_; }
  /// The counts for `nfsgw stats` and the metrics (reads the log's usage).
  WriteBackCounts counts() const;

  /// The file's stripe counter (see above).
  const std::atomic<std::uint64_t>& stripe(const cache::ObjectKey& k) const { return stripes_[stripe_of(k)].changes; }
  /// Whether the file has an entry. Without a lock while no file of its stripe has
  /// one (two atomic loads), so the hit path of clean files takes no shared lock.
  bool has(const cache::ObjectKey& k) const;
  /// Whether any file has an entry.
  bool any() const { return entries_.load(std::memory_order_acquire) != 0; }
  /// The files with an entry.
  std::vector<cache::ObjectKey> files() const;

  /// The snapshot, when the file has an entry that has one.
  std::optional<nfs3::Fattr> attributes(const cache::ObjectKey& k) const;
  /// The snapshot, unless an origin change may have made its origin part stale
  /// (origin_may_have_changed()): then the caller asks the layer below first.
  std::optional<nfs3::Fattr> fresh_attributes(const cache::ObjectKey& k) const;
  /// Replaces `a` by the file's snapshot when it has an entry. The snapshot first
  /// takes from `a` (the origin's, from a reply) what dirty bytes do not decide:
  /// everything but size, used and mtime (nlink after a LINK, mode, owner), and
  /// the later ctime. An entry without a snapshot yet (bytes found in the log at
  /// start) takes `a` as its base. Returns whether `a` was replaced.
  bool patch(const cache::ObjectKey& k, nfs3::PostOpAttr& a);
  /// A REMOVE or RENAME went through: the link count of any dirty file may have
  /// changed at the origin, and its reply did not say which. Each snapshot is
  /// refreshed from the layer below at its next GETATTR (fresh_attributes()).
  void origin_may_have_changed();
  /// Gives an entry without a snapshot `origin` as its base (no entry: nothing).
  void adopt(const cache::ObjectKey& k, const nfs3::Fattr& origin);

  /// A WRITE is on its way into the log: the entry is made when missing, from
  /// `origin` (the file's attributes as the layer below answers them), and kept
  /// until end_write() or abort_write().
  void begin_write(const cache::ObjectKey& k, const nfs3::Fattr& origin);
  /// The WRITE of [offset, offset + count) is in the log: the snapshot grows and
  /// its times move. Returns the WRITE's WCC data.
  nfs3::WccData end_write(const cache::ObjectKey& k, std::uint64_t offset, std::uint64_t count);
  /// The WRITE did not reach the log.
  void abort_write(const cache::ObjectKey& k);

  /// A SETATTR went through to the origin (`after`, its post-op attributes) while
  /// the file had an entry: mode, owner and times are taken from the origin, the
  /// size too when `size_set` (the log was cut to it first), else kept.
  void after_setattr(const cache::ObjectKey& k, const nfs3::Fattr& after, bool size_set);

  /// A SETATTR of the file's times (atime, mtime: each DontChange, ServerTime or
  /// ClientTime), to be kept instead of sent. Two steps, so that nothing shows
  /// before it is durable: resolve_times() gives the times to keep (the server's
  /// time resolved to now, after every time the snapshot shows; nullopt when the
  /// file has no snapshot: the SETATTR then goes to the origin as it is); the
  /// caller logs them (DirtyLog::keep_times, on the disk pool), then show_times()
  /// puts them in the snapshot (ctime moves on) and gives the SETATTR's WCC data
  /// (nullopt when the snapshot went meanwhile). The log keeps them until the
  /// flusher has sent them after the file's dirty bytes.
  struct TimesToKeep {
    std::optional<nfs3::Time> atime, mtime;
  };
  std::optional<TimesToKeep> resolve_times(const cache::ObjectKey& k, const nfs3::SetTime& atime,
                                           const nfs3::SetTime& mtime) const;
  std::optional<nfs3::WccData> show_times(const cache::ObjectKey& k, const TimesToKeep& times);
  /// The times kept for the file (the log's), if any.
  std::optional<cache::KeptTimes> pending_times(const cache::ObjectKey& k) const;
  /// The files with times kept and no dirty byte nor WRITE on its way (only their
  /// times are left to send).
  std::vector<cache::ObjectKey> times_only() const;

  // ---- the flusher ----------------------------------------------------------------
  /// The origin's attributes as last seen (the base's, then each flush WRITE's
  /// post-op); nullopt when unknown.
  std::optional<nfs3::WccAttr> origin_seen(const cache::ObjectKey& k) const;
  void set_origin_seen(const cache::ObjectKey& k, const nfs3::WccAttr& a);
  /// Call before the log's cleaned() for the file (see the clean count above).
  void cleaning(const cache::ObjectKey& k);
  /// The clean count; nullopt when the file has no entry.
  std::optional<std::uint64_t> clean_count(const cache::ObjectKey& k) const;
  /// Drops the entry when the log has no dirty byte nor kept time of the file and
  /// no WRITE is on its way; returns whether the file is clean now.
  bool settle(const cache::ObjectKey& k);
  /// The file is gone at the origin (its bytes dropped from the log): the entry goes.
  void forget(const cache::ObjectKey& k);
  /// Entries made for files with bytes or times in the log (at start, after replay).
  void load_from_log();

 private:
  struct Entry {
    std::optional<nfs3::Fattr> attrs;
    std::optional<nfs3::WccAttr> origin;
    std::uint32_t writing = 0;
    std::uint64_t cleans = 0;
    bool refresh = false;  // the origin part of attrs may be stale (see origin_may_have_changed)
  };
  struct alignas(64) Stripe {
    std::atomic<std::uint64_t> changes{0};
    std::atomic<std::uint32_t> entries{0};  // entries of this stripe's files; changed under mu_
  };

  static std::size_t stripe_of(const cache::ObjectKey& k);
  void bump(const cache::ObjectKey& k) { stripes_[stripe_of(k)].changes.fetch_add(1, std::memory_order_acq_rel); }
  /// False when the file surely has no entry (no file of its stripe has one): the
  /// lock-free test every reader makes before it takes mu_.
  bool may_have(const cache::ObjectKey& k) const {
    return any() && stripes_[stripe_of(k)].entries.load(std::memory_order_acquire) != 0;
  }
  /// The snapshot's base: `origin` with the size grown to the dirty bytes' end. mu_ held.
  nfs3::Fattr base_locked(const cache::ObjectKey& k, const nfs3::Fattr& origin) const;
  /// A time after `t` and not before now. mu_ held.
  nfs3::Time next_time_locked(const nfs3::Time& t) const;
  Entry& make_locked(const cache::ObjectKey& k);
  void erase_locked(std::unordered_map<cache::ObjectKey, Entry, cache::ObjectKeyHash>::iterator it);

  cache::DirtyLog& log_;
  const cache::Clock& clock_;
  WriteBackMeters meters_;
  std::array<Stripe, kStripes> stripes_{};
  std::atomic<std::uint64_t> entries_{0};
  mutable std::mutex mu_;
  std::unordered_map<cache::ObjectKey, Entry, cache::ObjectKeyHash> files_;
};

}  // namespace nfsgw::writeback
