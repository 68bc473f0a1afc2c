// The flusher: sends the dirty log's bytes to the origin and cleans them once the
// origin has committed them. One per nfsgw, over every cache space.
//
// A pass (every `tick`, and at once when woken) takes the due bytes from the log:
// those written at least the space's write_back_delay ago, all of them for a file
// a flush was asked for (`nfsgw flush`, a write-through export's WRITE or a
// SETATTR of a dirty file) or while the log's budget is full; at most
// `batch_bytes` of one file per attempt. A file waiting after a failed attempt is
// left alone, and so is a file while an attempt of it has WRITEs not yet sent, or
// attempts_per_file attempts out: the next attempt of a file is taken once every
// WRITE of the one before has been sent, while those WRITEs' answers and that
// attempt's COMMIT are still out, so the link does not stand idle between
// batches (the take reads the next batch from the log meanwhile) nor while the
// origin commits (a COMMIT of a large batch is the origin's fsync of it). Two
// WRITEs of the same bytes are never in flight at once: a WRITE of bytes written
// again since an earlier attempt took them waits until that attempt's WRITE of
// them is answered (the origin applies WRITEs in the order they arrive).
//
// Each file's taken extents go through the metadata cache of an export of its
// space (set_space), so that the metadata cache learns the origin's attributes
// from the replies, with the credentials of the extent's writer:
//   - UNSTABLE WRITEs of at most the origin's wtmax (FSINFO), several in flight;
//   - then one COMMIT. Only when every WRITE's verifier equals the COMMIT's are the
//     extents cleaned (the log keeps bytes written again since they were taken).
//     Otherwise (the origin restarted between them) they are untaken and sent
//     again in the next pass.
//   - STALE: the file is gone at the origin; its bytes are dropped from the log.
//   - Any other failure (JUKEBOX, an unreachable origin, an error): untaken and
//     tried again after a delay that doubles from 1 s to 30 s, counted.
//   - The first WRITE's pre-op attributes differing from what nfsgw last saw of
//     the origin is a conflict: the origin's copy changed behind nfsgw's back.
//     nfsgw's bytes still win; the conflict is counted and logged. (Not checked by
//     an attempt that starts while another of the file is out: that one's WRITEs
//     changed the attributes. What nfsgw saw is taken from the COMMIT of the
//     attempt started last.)
// Times a SETATTR set on a dirty file (kept in the dirty log: DirtyLog::keep_times) are sent
// as one SETATTR, as the one who set them, after the COMMIT that leaves the file
// without a dirty byte (or, with no bytes left to send, in an attempt of their
// own, due as bytes would be). Once a file has no dirty byte nor kept times left
// (DirtyFiles::settle), its snapshot goes and clients see the origin's attributes
// again.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "cache/clock.h"
#include "cache/disk_pool.h"
#include "gateway/nfs3_program.h"
#include "gateway/writeback/dirty_files.h"
#include "gateway/writeback/write_back_types.h"

namespace nfsgw::writeback {

struct FlusherSettings {
  std::chrono::milliseconds tick{200};
  /// Taken from the log and not yet cleaned, at most.
  std::uint64_t bytes_in_flight = 256ull << 20;
  /// One extent taken, at most (split again at the origin's wtmax).
  std::uint64_t extent_bytes = 1ull << 20;
  /// One attempt of one file (its WRITEs, then one COMMIT) takes about this much at
  /// most. Two attempts of a file may be out at once, so keep it at most half of
  /// bytes_in_flight.
  std::uint64_t batch_bytes = 64ull << 20;
  /// WRITEs of one attempt in flight, at most.
  std::uint32_t writes_per_file = 8;
  /// Attempts of one file out at once, at most (see above).
  std::uint32_t attempts_per_file = 3;
  cache::Millis retry_first_ms = 1000, retry_max_ms = 30000;
};

class Flusher {
 public:
  /// `pool` runs the log's calls; all references must outlive this, and the
  /// io_context must have stopped (and drained) before it is destroyed.
  Flusher(boost::asio::io_context& io, DirtyFiles& files, cache::DiskPool& pool, const cache::Clock& clock,
          FlusherSettings settings = {});

  /// The files of `space` are sent through `via` (the metadata cache of one of its
  /// exports) once written `delay` ago. A reload calls it again. Thread-safe.
  void set_space(std::uint32_t space, Nfs3Program* via, cache::Millis delay);
  void start();
  /// No new pass starts; flushes in flight end with their calls.
  void stop();

  /// Flushes the file's dirty bytes now, whatever the delay; true once it has none,
  /// false when an attempt failed (the origin did not take them) or nfsgw stops.
  Awaitable<bool> flush_file(const cache::ObjectKey& k);
  /// `nfsgw flush`: every file of `space` (nullopt: of every space) dirty now,
  /// until each has no byte written before the call left. Returns at once; `done`
  /// is called once, from any thread. Waits through origin outages (as a hard
  /// mount does); ends early, not ok, when nfsgw stops.
  void flush_all(std::optional<std::uint32_t> space, std::shared_ptr<FlushProgress> progress,
                 std::function<void(FlushOutcome)> done);
  /// The budget is full: every byte written until now is due now.
  void urgent();

 private:
  struct Space {
    Nfs3Program* via = nullptr;
    cache::Millis delay = 0;
    std::uint32_t wtmax = 0;  // 0 until FSINFO answered
  };
  /// A file's attempts out now (at most attempts_per_file).
  struct Running {
    std::uint32_t attempts = 0;
    std::uint64_t writing = 0;  // the attempt whose WRITEs are not all sent (0: none)
    std::uint64_t latest = 0;   // the attempt started last
    struct Unanswered {
      std::uint64_t attempt, from, to;  // a WRITE of [from, to) of the file
    };
    std::vector<Unanswered> unanswered;  // the file's WRITEs out, of every attempt
  };
  struct FileState {
    cache::Millis retry_at = 0;
    cache::Millis backoff = 0;
    std::uint64_t failures = 0;  // attempts that failed
  };

  Awaitable<void> run();
  Awaitable<void> pass();
  /// Attempt `attempt` (a number no other attempt has) of file k; `alone`: no other
  /// attempt of the file was out when it started.
  Awaitable<void> flush_one(cache::ObjectKey k, std::vector<cache::DirtyExtent> extents, std::uint64_t attempt,
                            bool alone);
  Awaitable<std::uint32_t> wtmax_of(std::uint32_t space, Nfs3Program& via, const nfs3::FileHandle& fh);
  /// Every WRITE of the attempt has been sent: the file's next may start.
  void written(const cache::ObjectKey& k, std::uint64_t attempt);
  /// Records a WRITE of [from, to) of k by `attempt` as out, unless a WRITE of
  /// another attempt of any of those bytes is unanswered (then false, nothing
  /// recorded); answered() takes it out.
  bool claim(const cache::ObjectKey& k, std::uint64_t attempt, std::uint64_t from, std::uint64_t to);
  void answered(const cache::ObjectKey& k, std::uint64_t attempt, std::uint64_t from);
  /// Whether no attempt of k started after `attempt`.
  bool latest(const cache::ObjectKey& k, std::uint64_t attempt);
  /// An attempt ended; `ok` false: tried again after the backoff (already set when
  /// `backed_off`).
  void finished(const cache::ObjectKey& k, std::uint64_t attempt, std::uint64_t bytes, bool ok,
                bool backed_off = false);
  /// The file's next attempt waits for its backoff (doubled). mu_ held.
  void back_off_locked(const cache::ObjectKey& k);
  /// Whether the file waits for a backoff at `now` (the take asks it from the pool).
  bool backing_off(const cache::ObjectKey& k, cache::Millis now);
  /// flush_all()'s wait, progress and answer.
  Awaitable<void> watch_flush(std::uint64_t key, cache::Millis started, std::uint64_t flushed_at_start,
                              std::vector<cache::ObjectKey> scope,
                              std::shared_ptr<FlushProgress> progress, std::function<void(FlushOutcome)> done);
  Awaitable<void> untake(std::vector<cache::DirtyExtent> extents);
  /// Sends the file's kept SETATTR times once it has no dirty byte; false when
  /// the origin did not answer (tried again after the backoff).
  Awaitable<bool> send_times(const cache::ObjectKey& k, Nfs3Program& via);
  void wake();
  std::uint64_t failures(const cache::ObjectKey& k);

  boost::asio::io_context& io_;
  DirtyFiles& files_;
  cache::DiskPool& pool_;
  const cache::Clock& clock_;
  FlusherSettings settings_;
  boost::asio::steady_timer timer_;

  mutable std::mutex mu_;
  std::map<std::uint32_t, Space> spaces_;
  std::map<cache::ObjectKey, FileState, cache::ObjectKeyLess> state_;
  std::map<cache::ObjectKey, Running, cache::ObjectKeyLess> attempts_out_;
  std::uint64_t attempts_ = 0;  // attempts started, ever (numbers them)
  /// Files asked for by flush_file(), with how many callers wait; spaces asked for
  /// by flush_all() (kAll: every space), with how many flushes.
  std::map<cache::ObjectKey, std::uint32_t, cache::ObjectKeyLess> forced_files_;
  std::map<std::uint64_t, std::uint32_t> forced_spaces_;
  static constexpr std::uint64_t kAll = 1ull << 32;
  /// Bytes written before it are due (the log was full then).
  cache::Millis urgent_before_ = 0;
  cache::Millis urgent_told_ = -60'000;
  std::uint64_t bytes_in_flight_ = 0;
  std::atomic<bool> stopped_{false};
  /// wake() was called: the next pass starts without waiting for the tick (a wake
  /// during a pass would otherwise be lost, its timer not being waited on then).
  std::atomic<bool> woken_{false};
  bool running_ = false;
};

}  // namespace nfsgw::writeback
