// The byte-range locks nfsgw's NLM clients hold, and the blocked requests waiting
// for them, per file. POSIX semantics, as fcntl() locks and NLM have them:
//   - a lock is shared or exclusive over an inclusive 64-bit byte range
//     (lock_range.h: length 0 runs to the end of the file);
//   - locks of different owners conflict when they overlap and either is
//     exclusive; an owner never conflicts with itself;
//   - an owner's new lock replaces whatever it held in that range (upgrade or
//     downgrade, splitting what it held around it), and its locks of one type
//     that touch or overlap merge into one;
//   - unlocking a range releases that range of the owner's locks, splitting a
//     lock that covers more.
// Each owner's locks on a file are kept in that canonical form (sorted, disjoint,
// no two of the same type touching), so a count of locks is a count of ranges.
//
// Bounds: at most max_locks ranges over all files and owners, and max_waiters
// queued requests. A lock, an unlock that would split a range, or a waiter past
// its bound is refused with NLM4_DENIED_NOLOCKS and changes nothing.
//
// Pure logic: the NLM service decides what to ask (and the origin's answer); this
// table keeps what is held. Not thread-safe: its owner serializes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gateway/nlm/lock_range.h"
#include "protocol/nfs3_types.h"
#include "gateway/nlm/owner_map.h"
#include "protocol/nlm4_types.h"

namespace nfsgw::nlm {

/// Which file: the bytes of its (gateway) file handle.
using FileKey = std::string;
/// The key of a file nfsgw locks or shares: its export and its handle at the origin.
FileKey file_key(std::uint32_t export_id, const nfs3::FileHandle& origin);

struct HeldLock {
  OwnerId owner = 0;
  Range range;
  bool exclusive = false;
  friend bool operator==(const HeldLock&, const HeldLock&) = default;
};

using WaiterId = std::uint64_t;

/// A blocked LOCK request, waiting for conflicting locks to go.
struct Waiter {
  WaiterId id = 0;
  FileKey file;
  OwnerId owner = 0;
  Range range;
  bool exclusive = false;
};

struct LockLimits {
  std::size_t max_locks = 65536;
  std::size_t max_waiters = 4096;
};

class LockTable {
 public:
  explicit LockTable(LockLimits limits) : limits_(limits) {}

  /// The lock of another owner that keeps `owner` from taking this one (the one
  /// of the lowest owner id, then the lowest offset), or nullopt.
  std::optional<HeldLock> test(const FileKey& file, OwnerId owner, Range range, bool exclusive) const;

  /// Granted (held now), Denied (another owner's lock conflicts) or DeniedNoLocks
  /// (past max_locks). Nothing changes unless Granted.
  nlm4::Stat lock(const FileKey& file, OwnerId owner, Range range, bool exclusive);

  /// Granted (also when nothing was held there), or DeniedNoLocks when the split
  /// it needs would pass max_locks (nothing changes then).
  nlm4::Stat unlock(const FileKey& file, OwnerId owner, Range range);

  /// How many ranges lock() would add (negative: take away) if called now; nullopt
  /// when another owner's lock conflicts. For a caller that must know a lock fits
  /// before it asks the origin for it.
  std::optional<std::ptrdiff_t> lock_delta(const FileKey& file, OwnerId owner, Range range, bool exclusive) const;
  /// The same for unlock().
  std::ptrdiff_t unlock_delta(const FileKey& file, OwnerId owner, Range range) const;

  /// Queues a blocked request; a request already queued (same file, owner, range
  /// and type: a client's retransmission) keeps its id. nullopt past max_waiters.
  std::optional<WaiterId> add_waiter(const FileKey& file, OwnerId owner, Range range, bool exclusive);
  /// Removes the queued request that matches (CANCEL); false when none does.
  bool cancel_waiter(const FileKey& file, OwnerId owner, Range range, bool exclusive);
  /// nullptr for an id no longer queued.
  const Waiter* waiter(WaiterId id) const;
  /// The file's waiters that could be granted now, in arrival order. Each is
  /// checked against the locks held and against the ready waiters before it, so
  /// granting all of them (in this order) succeeds, bounds permitting.
  std::vector<WaiterId> ready_waiters(const FileKey& file) const;
  /// Turns a waiter into a held lock: Granted (the waiter is gone), Denied (it
  /// still conflicts) or DeniedNoLocks (past max_locks); it stays queued then.
  nlm4::Stat grant_waiter(WaiterId id);
  void drop_waiter(WaiterId id);

  struct Released {
    std::vector<std::pair<FileKey, HeldLock>> locks;  // to release at the origin
    std::vector<Waiter> waiters;                      // dropped
  };
  /// Everything the owner holds or waits for, gone (a client that rebooted, or
  /// FREE_ALL). The files in `locks` are the ones whose waiters may now be ready.
  Released release_owner(OwnerId owner);

  /// The owner's locks on the file, sorted by offset (canonical form).
  std::vector<HeldLock> locks_of(const FileKey& file, OwnerId owner) const;
  /// Every lock on the file, by owner id then offset.
  std::vector<HeldLock> locks(const FileKey& file) const;
  /// The file's waiters in arrival order.
  std::vector<Waiter> waiters(const FileKey& file) const;
  /// Whether the owner holds a lock or waits anywhere (else its OwnerMap entry may go).
  bool holds_anything(OwnerId owner) const { return owners_.contains(owner); }

  std::size_t lock_count() const { return lock_count_; }
  std::size_t waiter_count() const { return waiters_.size(); }
  std::size_t file_count() const { return files_.size(); }
  const LockLimits& limits() const { return limits_; }

 private:
  struct Seg {
    std::uint64_t last = 0;
    bool exclusive = false;
  };
  /// One owner's locks on one file, by first byte: disjoint, no two of one type touching.
  using Segs = std::map<std::uint64_t, Seg>;
  struct FileState {
    std::map<OwnerId, Segs> owners;
    std::set<WaiterId> waiters;  // ids grow: arrival order
  };
  struct OwnerState {
    std::unordered_map<FileKey, std::size_t> files;  // locks + waiters per file
  };
  /// What replacing `range` of `segs` with a lock of `type` (nullopt: nothing)
  /// takes out and puts in.
  struct Plan {
    std::vector<std::uint64_t> removed;  // keys of segs
    std::vector<std::pair<std::uint64_t, Seg>> added;
    std::ptrdiff_t delta() const {
      return static_cast<std::ptrdiff_t>(added.size()) - static_cast<std::ptrdiff_t>(removed.size());
    }
  };

  static Plan plan(const Segs& segs, Range range, std::optional<bool> type);
  static std::optional<HeldLock> conflict_in(const FileState& f, OwnerId owner, Range range, bool exclusive);
  bool fits(std::ptrdiff_t delta) const;
  void apply(const FileKey& file, OwnerId owner, const Plan& p);
  void count(const FileKey& file, OwnerId owner, std::ptrdiff_t by);
  void erase_waiter(std::unordered_map<WaiterId, Waiter>::iterator it);

  LockLimits limits_;
  std::unordered_map<FileKey, FileState> files_;
  std::unordered_map<WaiterId, Waiter> waiters_;
  std::unordered_map<OwnerId, OwnerState> owners_;
  std::size_t lock_count_ = 0;
  WaiterId next_waiter_ = 1;
};

}  // namespace nfsgw::nlm
