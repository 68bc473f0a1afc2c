// The dirty log: the bytes that write-back exports have acknowledged to clients and
// not yet had committed by the origin, kept durably on local disk until they are.
//
// Shape: a log of records (dirty_record.h) in numbered segments (log_files.h),
// only ever appended to, and an index in memory of each file's dirty bytes: for
// every byte, the newest write of it and where its data lies in the log. A file is
// its cache space (the origin's, so every export of that origin sees the same
// bytes) and ORIGIN handle.
//
// Durability:
// - write(stable = true) returns only after its record is synced; write(stable =
//   false) leaves it to the next sync() (an NFS COMMIT), so a power loss may lose
//   it; the caller's write verifier must then differ (nfsgw's changes at every
//   start). Syncs are shared: callers that ask at once wait for one fdatasync.
// - A segment is synced before the next one is created, so only the newest can
//   end in a torn record.
// - truncate() and drop() are synced before they return: once the origin has been
//   told (a SETATTR, a REMOVE), no restart brings the dropped bytes back.
// - Opening replays every segment in order (reading them all once, checked
//   frame by frame): Write records put bytes back in the index, Truncate and Drop
//   records take them out. A torn or corrupt frame ends its segment: in the newest
//   the tail is cut off (counted as torn_dropped), in an older one the rest is
//   counted as corrupt_dropped and logged by the caller.
//
// The write verifier: each run of the log has one, which WRITE and COMMIT replies
// carry. Opening logs a Start record with it (synced before open() returns, so
// before anything is acknowledged); close_clean() syncs everything and logs a
// CleanStop record with it. A run that finds a CleanStop as the log's last record
// keeps its verifier; any other (after kill -9, a power loss, a log that lost its
// records) picks a new random one. So the verifier changes exactly when UNSTABLE
// writes may have been lost, and clients resend them (RFC 1813, COMMIT).
//
// Cleaning: the flusher take()s dirty extents, sends them, and once the origin's
// COMMIT shows the bytes are stable there calls cleaned(), which logs a synced
// Clean record (so no replay brings them back); bytes written again since the take
// stay dirty (sequence numbers tell). A segment whose every byte is clean
// or overwritten is dead; dead segments are removed oldest first, and only while
// every older one is gone too, so a Truncate or Drop record never disappears
// before the writes it undoes.
//
// Kept times: a SETATTR of a dirty file's atime or mtime is answered at once and
// sent to the origin after the file's data (gateway/writeback). keep_times() logs
// a synced Times record with the times kept now, so a crash cannot take back a
// SETATTR that was answered. A Write record after it leaves the mtime unkept (the
// file's mtime is that write's from then on), a Drop all of it, and times_sent()
// logs a Times record with none once the origin has them. A segment holding the
// Times record of times still kept is not dead, whatever its bytes.
//
// Budget: the segments' total size (dead bytes in a live segment included) is
// bounded by budget_bytes; a write that would pass it is refused (Appended::Full)
// and logs nothing. The caller waits for the flush, or answers JUKEBOX.
//
// Threads: every method is safe from any number of threads; they read and write
// files, so the gateway calls them on its disk pool, never on an Asio thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/clock.h"
#include "cache/dirty_record.h"
#include "cache/key_hash.h"
#include "cache/log_files.h"

namespace nfsgw::cache {

struct DirtyLogOptions {
  /// The segments' total size at most ([cache] dirty_max_gb).
  std::uint64_t budget_bytes = 8ull << 30;
  /// A new segment is started once the current one holds this much.
  std::uint64_t segment_bytes = 64ull << 20;
  const Clock* clock = &wall_clock();
};

struct DirtyUsage {
  std::uint64_t dirty_bytes = 0;  // bytes not yet clean (each byte once, however often written)
  std::uint64_t dirty_files = 0;
  std::uint64_t log_bytes = 0;    // the segments' total size, counted against the budget
  std::uint64_t budget = 0;
  std::uint64_t segments = 0;
  /// When the oldest dirty byte was written (wall ms), 0 when none is dirty; bytes
  /// found on opening count as written then.
  Millis oldest_written_ms = 0;
  std::uint64_t writes = 0, syncs = 0, full_refusals = 0;
  /// Opening: the records replayed, the bytes of a torn tail cut off the newest
  /// segment, the bytes after a corrupt frame in an older one (not replayed).
  std::uint64_t replayed_records = 0, torn_bytes = 0, corrupt_bytes = 0;
};

/// Dirty bytes of one file, taken for a flush.
struct DirtyExtent {
  ObjectKey file;
  std::uint64_t offset = 0;
  std::string data;
  /// The newest write among these bytes: cleaned() leaves alone any byte written
  /// after it.
  std::uint64_t seq = 0;
  Writer writer;  // of the newest write of these bytes
  Millis written_ms = 0;
};

/// Times kept for a file (see above).
struct KeptTimes {
  std::optional<nfs3::Time> atime, mtime;  // at least one
  Writer writer;          // who set them last: the SETATTR goes to the origin as them
  Millis since = 0;       // when first kept (on opening: when found)
  std::uint64_t seq = 0;  // the record holding them: names this version
  friend bool operator==(const KeptTimes&, const KeptTimes&) = default;
};

class DirtyLog {
 public:
  /// Opens the log in `files` (which must outlive it) and replays it. Throws
  /// DirtyLogError when the files cannot be read or a segment started.
  static std::unique_ptr<DirtyLog> open(LogFiles& files, DirtyLogOptions options);
  /// Same on disk, in `dir` (created when missing).
  static std::unique_ptr<DirtyLog> open(const std::string& dir, DirtyLogOptions options);
  ~DirtyLog();
  DirtyLog(const DirtyLog&) = delete;
  DirtyLog& operator=(const DirtyLog&) = delete;

  enum class Appended { Ok, Full };
  /// Logs `data` written at `offset` of `file` by `writer`; with `stable`, durable
  /// when this returns. Full: the budget has no room; nothing was logged. Throws
  /// DirtyLogError (then nothing was logged either).
  Appended write(const ObjectKey& file, std::uint64_t offset, std::string_view data, const Writer& writer,
                 bool stable);
  /// Makes every write logged before the call durable (an NFS COMMIT).
  void sync();
  /// This run's write verifier (see above).
  std::uint64_t write_verifier() const { return verifier_; }
  /// An orderly stop: syncs everything and logs that nothing was lost, so that
  /// the next run keeps the verifier. Call it last; a write after it starts a new
  /// run's worth of risk, so the next open picks a new verifier.
  void close_clean();
  /// The file's size became `size` at the origin: its dirty bytes at or past it are
  /// gone. Durable when this returns.
  void truncate(const ObjectKey& file, std::uint64_t size);
  /// The file is gone (its last name removed): its dirty bytes with it. Durable when
  /// this returns.
  void drop(const ObjectKey& file);

  /// Keeps the given times for the file (each replaces the kept one; nullopt
  /// leaves it), set by `writer`. Durable when this returns (never refused for
  /// room: the record is small and the times belong to bytes already logged).
  /// Returns what is kept now; throws DirtyLogError (then the index is unchanged).
  KeptTimes keep_times(const ObjectKey& file, const std::optional<nfs3::Time>& atime,
                       const std::optional<nfs3::Time>& mtime, const Writer& writer);
  /// The times kept for the file, if any.
  std::optional<KeptTimes> kept_times(const ObjectKey& file) const;
  /// Which times are kept for the file, without copying them (the snapshot of
  /// every reply about a dirty file asks this).
  struct KeptWhich {
    bool atime = false, mtime = false;
    explicit operator bool() const { return atime || mtime; }
  };
  KeptWhich which_times_kept(const ObjectKey& file) const;
  /// The origin took the times of version `seq` (or refused them for good): no
  /// longer kept, unless kept again since. Durable when this returns: once the file
  /// is clean its times may change at the origin (a write-through export's WRITE),
  /// and a replay that sent the old ones again would take that back.
  void times_sent(const ObjectKey& file, std::uint64_t seq);
  /// The files with times kept.
  std::vector<ObjectKey> files_with_times() const;

  /// Where the file's dirty bytes end (the least size they imply); nullopt when
  /// it has none.
  std::optional<std::uint64_t> dirty_end(const ObjectKey& file) const;
  /// Copies the file's dirty bytes in [offset, offset + out.size()) over `out`,
  /// leaving the other bytes as they are; returns how many it copied.
  std::uint64_t overlay(const ObjectKey& file, std::uint64_t offset, std::span<char> out) const;

  /// Dirty bytes last written at or before `written_before` and not taken
  /// already, until about `max_bytes`: files by their oldest such byte, each file's
  /// bytes in offset order, one extent per run of adjacent bytes of one writer (at
  /// most `max_extent` bytes each). They stay dirty, and are not taken again, until
  /// cleaned() or untake().
  std::vector<DirtyExtent> take(Millis written_before, std::uint64_t max_bytes, std::uint64_t max_extent);
  /// The same with a cut-off per file: `written_before(file)` (nullopt: none of
  /// its bytes now), so that each export's delay applies to its own space and a
  /// file already being flushed is left alone.
  using Cutoff = std::function<std::optional<Millis>(const ObjectKey&)>;
  std::vector<DirtyExtent> take(const Cutoff& written_before, std::uint64_t max_bytes, std::uint64_t max_extent);
  /// The extent's bytes are stable at the origin: clean, but for any written again
  /// since it was taken.
  void cleaned(const DirtyExtent& e);
  /// The same for several extents, with one sync: a Clean record is logged for each
  /// and synced before the bytes leave the index, so no replay brings them back.
  void cleaned(std::span<const DirtyExtent> extents);
  /// The extent's flush did not complete: its bytes may be taken again.
  void untake(const DirtyExtent& e);
  /// The files with dirty bytes.
  std::vector<ObjectKey> dirty_files() const;
  /// When the file's oldest dirty byte was written (wall ms; on opening for bytes
  /// found then); nullopt when it has none.
  std::optional<Millis> oldest_written(const ObjectKey& file) const;
  DirtyUsage usage() const;

 private:
  struct Piece {
    std::uint64_t end = 0;
    std::uint64_t seq = 0;
    std::uint64_t segment = 0;
    std::uint64_t data_at = 0;  // where the piece's first byte is in its segment
    std::shared_ptr<const Writer> writer;
    Millis written_ms = 0;
    bool taken = false;
  };
  struct FileDirty {
    std::map<std::uint64_t, Piece> pieces;  // by start; never overlapping
    std::optional<KeptTimes> times;
    std::uint64_t times_segment = 0;  // where the record of `times` is
    /// The newest segment holding a record of the file: while it is there, a
    /// replay would see the file, so truncate() and drop() must log.
    std::uint64_t newest_segment = 0;
  };

  DirtyLog(LogFiles& files, std::unique_ptr<LogFiles> owned, DirtyLogOptions options);
  void replay();
  /// Picks this run's verifier (`kept`: the last run stopped in good order with
  /// it; else a random one other than `last`, the last run's) and logs a synced
  /// Start record. mu_ held.
  void begin_run_locked(std::optional<std::uint64_t> kept, std::uint64_t last, std::unique_lock<std::mutex>& lock);
  /// Logs a Truncate (bytes from `from` on) or Drop (all: `from` 0) record, syncs
  /// it and cuts the bytes, when the log holds any record of the file.
  void undo(DirtyRecord::Kind kind, const ObjectKey& file, std::uint64_t from);
  /// Appends a frame to the current segment (rotating first when it is full);
  /// returns its segment and offset. mu_ held.
  std::pair<std::uint64_t, std::uint64_t> append_locked(const std::string& frame);
  /// Where a record went: its segment, the frame's offset there, its sequence number.
  struct Placed {
    std::uint64_t segment = 0, at = 0, seq = 0;
  };
  /// Numbers `r` (its seq), encodes and appends it; nullopt when `may_refuse` and
  /// the budget has no room for it (then nothing is logged or numbered). mu_ held.
  std::optional<Placed> log_locked(DirtyRecord& r, bool may_refuse);
  void start_segment_locked(std::uint64_t n);
  /// Syncs the current segment and starts the next; the dead ones go. mu_ held.
  void rotate_locked();
  /// Waits until every record up to `seq` is durable (one caller syncs for all).
  void sync_through(std::uint64_t seq, std::unique_lock<std::mutex>& lock);
  /// Cuts [from, to) out of the file's pieces (live bytes of their segments go).
  void cut_locked(FileDirty& f, std::uint64_t from, std::uint64_t to);
  /// Cuts the bytes of [offset, end) written by records up to `upto`.
  void clean_locked(FileDirty& f, std::uint64_t offset, std::uint64_t end, std::uint64_t upto);
  void put_locked(const ObjectKey& file, std::uint64_t offset, std::uint64_t end, Piece piece);
  void forget_piece_bytes_locked(const Piece& p, std::uint64_t bytes);
  /// The file's kept times become `t` (none when it has no time), held by its
  /// record in `segment`. mu_ held.
  void set_times_locked(FileDirty& f, std::optional<KeptTimes> t, std::uint64_t segment);
  /// A write of the file was logged: its mtime is no longer kept. mu_ held.
  void written_after_times_locked(FileDirty& f);
  /// Removes the dead segments at the head of the log, then forgets the files whose
  /// records all went with them (only when one went).
  void drop_dead_segments_locked();
  /// Files in `due` with their cut-off, oldest first.
  struct Due {
    Millis oldest = 0, written_before = 0;
    const ObjectKey* key = nullptr;
  };
  void take_locked(const std::vector<Due>& due,
                   std::uint64_t max_bytes, std::uint64_t max_extent, std::vector<DirtyExtent>& out);
  void untake_locked(const DirtyExtent& e);

  LogFiles& files_;
  std::unique_ptr<LogFiles> owned_;
  DirtyLogOptions options_;

  mutable std::mutex mu_;
  std::condition_variable synced_cv_;
  std::unordered_map<ObjectKey, FileDirty, ObjectKeyHash> files_dirty_;
  /// Every segment there is: its size and how many of its data bytes are still the
  /// newest dirty copy.
  struct SegmentUse {
    std::uint64_t size = 0;
    std::uint64_t live = 0;
    std::uint64_t held = 0;  // Times records of times still kept
    bool in_use() const { return live > 0 || held > 0; }
  };
  std::map<std::uint64_t, SegmentUse> segments_;
  std::uint64_t current_ = 0;    // the segment appended to
  std::uint64_t next_seq_ = 1;
  std::uint64_t synced_seq_ = 0;  // every record up to it is durable
  bool syncing_ = false;
  std::uint64_t dirty_bytes_ = 0;
  std::uint64_t log_bytes_ = 0;  // the segments' sizes added up (the budget's count)
  std::uint64_t verifier_ = 0;
  DirtyUsage counters_;
};

}  // namespace nfsgw::cache
