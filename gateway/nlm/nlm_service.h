// nfsgw's NLM v4 service (issue 21): the locks nfsgw's clients take, held at the
// origin's lock manager in nfsgw's name (docs/design.md, "Byte-range locks").
//
// Every request goes the same way:
//   1. the handle: a gateway handle, checked like every NFS call's (HandleCheck:
//      the translator's HMAC, export and client checks). Forged or stale ->
//      NLM4_STALE_FH, a client the export refuses -> NLM4_DENIED; nothing reaches
//      the origin;
//   2. GracePeriod: in grace only reclaims (and releases), after it no reclaims;
//   3. OwnerMap: the client's owner -> one origin owner (nfsgw/<instance>/<id>);
//   4. LockTable: a conflict with another client of this nfsgw is answered here
//      (DENIED, or BLOCKED with a waiter); anything else goes to the origin
//      (OriginLocks) as the origin owner, and enters the table only when the
//      origin grants it;
//   5. UNLOCK: the file's unflushed writes to the origin first (BeforeRelease: a
//      write-back export's dirty bytes), then the UNLOCK at the origin, then the
//      table, then the file's waiters that are now free are taken at the origin
//      and granted.
//
// Waiters. nfsgw asks the origin only for non-blocking locks: a waiter (a
// blocking LOCK that could not be granted now, whether a client of this nfsgw
// or someone outside it holds the conflicting lock) is queued in the LockTable
// and answered BLOCKED. A waiter is asked for at the origin again (a non-blocking
// LOCK) when a lock of its file is released through nfsgw, and every
// `retry_interval` by retry_waiters() (a timer in the server), which is what
// frees a waiter blocked by a holder outside nfsgw: the origin's GRANTED callback
// is not relied on (it may not reach nfsgw when several servers share one
// rpcbind). The time from a release to the grant is therefore one origin round
// trip when the holder was a client of this nfsgw, and at most `retry_interval`
// plus one origin round trip when it was outside. A granted waiter's client
// learns it by NLM_GRANTED (ClientCallbacks, when given) or by its own retry of
// the LOCK (the Linux client retries a blocked lock every 30 s), which finds the
// lock held by its own owner and is answered GRANTED. A CANCEL drops a waiter, or
// releases the lock a waiter was granted that its client has not claimed yet. A
// waiter whose client went away is dropped too: its grant, neither taken nor
// claimed within unclaimed_timeout (90 s, three of Linux's retries), is released.
//
// An origin that does not answer (Outcome::NoAnswer: sent, no answer within the
// origin client's bound) gets no reply to the client: the client's RPC layer
// sends the call again, and the retransmission is executed again (NLM
// procedures are not in the duplicate cache). A LOCK or UNLOCK sent twice as the
// same origin owner is harmless at the origin, whereas an answer such as
// NLM4_DENIED_NOLOCKS would have the client give up on a lock the origin may
// have granted (Linux turns it into ENOLCK), leaving it held at the origin with
// no one knowing. An origin with no lock manager (Outcome::Unreachable: not
// sent) is answered NLM4_DENIED_NOLOCKS: retrying would not help.
//
// Bounds: max_locks and max_waiters (LockTable), max_owners (OwnerMap), answered
// NLM4_DENIED_NOLOCKS before anything reaches the origin.
//
// Status monitoring (use_monitor): a LOCK (not NM_LOCK) first has the client's
// host monitored by the host's statd (ClientMonitor: SM_MON of its caller_name,
// recorded on disk) and is refused NLM4_DENIED_NOLOCKS when that fails, as knfsd
// and nfs-ganesha refuse it: a lock whose holder's reboot nfsgw could not learn
// of could be held at the origin for ever. sweep_monitors() unmonitors the hosts
// that no longer hold or wait for anything (the server's timer). statd's
// callback (host_rebooted) releases everything the owners of that caller name
// held or waited for, from any address, as FREE_ALL does for one address.
//
// Thread-safe: one mutex over the table, the owners and the waiters, never held
// across a call to the origin.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "gateway/nlm/client_monitor.h"
#include "gateway/nlm/grace_period.h"
#include "gateway/nlm/lock_table.h"
#include "gateway/nlm/origin_locks.h"
#include "gateway/nlm/owner_map.h"
#include "protocol/nlm4_types.h"
#include "protocol/nlm_nsm_types.h"

namespace nfsgw::nlm {

/// The verdict on a client's file handle (the translator's, in the server).
struct CheckedHandle {
  /// Granted: admitted. StaleFh: forged, damaged or stale. Denied: the export
  /// refuses this client. Failed: nfsgw could not tell (its handle store failed).
  nlm4::Stat verdict = nlm4::Stat::StaleFh;
  std::uint32_t export_id = 0;
  nfs3::FileHandle origin;  // the origin's handle of the file
  Credentials cred;         // the caller's, after the export's squash
};
using HandleCheck = std::function<Awaitable<CheckedHandle>(const CallContext&, const nfs3::FileHandle&)>;

/// The origin's lock manager for an export; nullptr when it has none.
using OriginFor = std::function<OriginLocks*(std::uint32_t export_id)>;

/// A lock was granted on the file: its cached attributes are to be asked of the
/// origin again (docs/configuration.md, "Locks and caches").
using OnGranted = std::function<void(std::uint32_t export_id, const nfs3::FileHandle& origin)>;

/// Before an UNLOCK goes to the origin: the file's data written through nfsgw and
/// not yet at the origin (a write-back export's dirty bytes) is flushed there, so
/// that the lock's next owner, through any gateway, reads what was written under
/// it. False: it could not be now (the origin did not take it); the UNLOCK then
/// gets no reply and the client's retransmission asks again.
using BeforeRelease = std::function<Awaitable<bool>(std::uint32_t export_id, const nfs3::FileHandle& origin)>;

/// Sends NLM_GRANTED to a client whose waiter was granted. True when the client
/// answered it GRANTED (it takes the lock); false when it refused or did not answer
/// (the lock stays granted: the client's retry or CANCEL settles it).
class ClientCallbacks {
 public:
  virtual ~ClientCallbacks() = default;
  virtual Awaitable<bool> granted(std::string client_address, nlm4::TestArgs args) = 0;
};

struct NlmSettings {
  LockLimits limits;              // max_locks, max_waiters
  std::size_t max_owners = 4096;  // client owners with a lock or a waiter
  /// Set when the grace period is begun (begin_grace).
  std::chrono::steady_clock::duration grace = std::chrono::seconds(0);
  /// How often waiters are asked for at the origin again (the server's timer).
  std::chrono::steady_clock::duration retry_interval = std::chrono::seconds(1);
  /// A reclaim the origin answers DENIED in the grace period is asked again this
  /// many times, this far apart (the origin may still hold nfsgw's lock from before
  /// the restart, which it is about to drop).
  int reclaim_retries = 25;
  std::chrono::milliseconds reclaim_retry_delay{200};
  /// After the origin restarted: how long a lock's reclaim there is asked again
  /// while the origin does not answer (its lock manager not up yet), and how many
  /// files are reclaimed at a time.
  std::chrono::steady_clock::duration origin_reclaim_window = std::chrono::seconds(120);
  std::size_t origin_reclaim_parallel = 16;
  /// A lock granted to a waiter that its client neither took (NLM_GRANTED) nor
  /// claimed by retrying its LOCK (Linux retries a blocked lock every 30 s) within
  /// this long is released: its client is taken to have gone.
  std::chrono::steady_clock::duration unclaimed_timeout = std::chrono::seconds(90);
  /// nfsgw's caller_name at the origin (the host name the origin's statd monitors).
  std::string caller_name = "nfsgw";
  /// This run of nfsgw: part of every origin owner handle (OwnerMap).
  std::string instance = "0";
};

/// Counters, for logs, metrics and tests.
struct NlmCounts {
  std::uint64_t granted = 0;         // LOCKs answered GRANTED (waiters included)
  std::uint64_t denied_local = 0;    // conflicts answered without the origin
  std::uint64_t denied_origin = 0;   // DENIED by the origin
  std::uint64_t blocked = 0;         // BLOCKED answers
  std::uint64_t waiters_granted = 0; // waiters turned into locks
  std::uint64_t no_answer = 0;       // calls left unanswered because the origin did not answer
  std::uint64_t origin_calls = 0;    // calls sent to the origin
  std::uint64_t stale = 0;           // handles refused
  std::uint64_t not_monitored = 0;   // LOCKs refused because the client's host could not be monitored
  std::uint64_t reboots = 0;         // statd callbacks: a monitored client host rebooted
  std::uint64_t grants_told = 0;     // NLM_GRANTED the client answered GRANTED
  std::uint64_t grants_untold = 0;   // NLM_GRANTED refused or not answered
  std::uint64_t reclaims_retried = 0;  // reclaims asked of the origin again after its DENIED
  std::uint64_t unclaimed_dropped = 0;  // granted waiters never claimed, released (client gone)
  std::uint64_t origin_restarts = 0;     // an origin's statd said it restarted
  std::uint64_t origin_reclaimed = 0;    // locks taken again at a restarted origin
  std::uint64_t origin_reclaims_lost = 0;  // locks a restarted origin did not give back (logged)
};

/// What one origin restart came to (NlmService::origin_restarted).
struct OriginReclaim {
  std::size_t locks = 0;       // locks nfsgw held there for its clients
  std::size_t reclaimed = 0;   // taken again in the origin's grace period (reclaim = true)
  std::size_t retaken = 0;     // taken again as new locks: the origin kept no grace period
  std::size_t refused = 0;     // the origin gave the range to another owner, or no longer has the file
  std::size_t unanswered = 0;  // no answer within settings.origin_reclaim_window
};

class NlmService {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  NlmService(HandleCheck check, OriginFor origins, NlmSettings settings, Now now);
  ~NlmService();

  void on_granted(OnGranted hook) { on_granted_ = std::move(hook); }
  void before_release(BeforeRelease hook) { before_release_ = std::move(hook); }
  void use_callbacks(ClientCallbacks* callbacks) { callbacks_ = callbacks; }
  /// Status monitoring of client hosts. `my_name_for(client address)`: the name
  /// that client knows nfsgw by (the server address it sends its calls to).
  void use_monitor(ClientMonitor* monitor, std::function<std::string(const std::string&)> my_name_for) {
    monitor_ = monitor;
    my_name_for_ = std::move(my_name_for);
  }

  /// Starts the grace period (settings.grace long) now: at nfsgw's start.
  void begin_grace();
  const GracePeriod& grace() const { return grace_; }

  // The procedures. nullopt: no reply (the origin did not answer; the client
  // sends the call again).
  Awaitable<std::optional<nlm4::TestRes>> test(const CallContext& ctx, nlm4::TestArgs args);
  /// `monitor`: false for NM_LOCK (a client without a status monitor).
  Awaitable<std::optional<nlm4::Res>> lock(const CallContext& ctx, nlm4::LockArgs args, bool monitor = true);
  Awaitable<std::optional<nlm4::Res>> cancel(const CallContext& ctx, nlm4::CancelArgs args);
  Awaitable<std::optional<nlm4::Res>> unlock(const CallContext& ctx, nlm4::UnlockArgs args);
  /// NLM_GRANTED from the origin: nfsgw never asks the origin for a blocking lock,
  /// so there is nothing it waits for; answered NLM4_DENIED, which tells the origin
  /// to release what it granted.
  nlm4::Res granted(const CallContext& ctx, const nlm4::TestArgs& args);
  /// FREE_ALL: the host `args.name` rebooted; everything its owners held or waited
  /// for through this client address goes (released at the origin).
  Awaitable<void> free_all(const CallContext& ctx, nlm4::Notify args);
  /// statd's callback: the client host `st.mon_name` rebooted; everything its
  /// owners held or waited for goes (released at the origin), whatever their address.
  Awaitable<void> host_rebooted(nsm::Status st);
  /// The origin of `exports` restarted (its statd's SM_NOTIFY, through the host's
  /// statd; design.md, issue 21, item 9): it has dropped every lock nfsgw held
  /// there, so each lock of the table on those exports' files is taken again, in
  /// the origin's grace period: LOCK with reclaim = true, as the same origin owner
  /// (non-blocking; an origin in no grace period refuses a reclaim, and the lock
  /// is then asked for as a new one). The client's lock does not change: the table
  /// keeps it whatever the origin answers, since NLM cannot take a lock back from
  /// a client; a lock the origin gave to someone else meanwhile is logged as lost
  /// at the origin and counted. Requests of clients on those files wait until
  /// their file is reclaimed, so that a reclaim never re-takes a range its client
  /// let go meanwhile. Files are reclaimed `origin_reclaim_parallel` at a time.
  Awaitable<OriginReclaim> origin_restarted(std::set<std::uint32_t> exports, std::string origin);

  /// SM_UNMON of the monitored client hosts that hold and wait for nothing now.
  /// Returns how many.
  Awaitable<std::size_t> sweep_monitors();

  /// Asks the origin again for every waiter no client of nfsgw blocks (the
  /// server's timer, every retry_interval), after releasing the granted waiters
  /// their clients did not claim in time (drop_unclaimed). Returns how many were
  /// granted.
  Awaitable<std::size_t> retry_waiters();

  NlmCounts counts() const;
  std::size_t lock_count() const;
  std::size_t waiter_count() const;
  std::size_t owner_count() const;
  const NlmSettings& settings() const { return settings_; }

 private:
  struct FileInfo;
  struct WaiterInfo;
  struct Entered;
  class ReclaimMark;

  /// Steps 1-3 for a request: the handle, the file's key, the client owner.
  Awaitable<std::optional<Entered>> enter(const CallContext& ctx, const nlm4::Lock& lock, nlm4::Stat& refusal);
  nlm4::Lock at_origin(const Entered& e, const nlm4::Lock& lock, OwnerId owner) const;
  /// The `state` of every LOCK nfsgw sends the origin: nfsgw's own NSM state, for
  /// at the origin nfsgw is the lock client (a client's state means nothing there).
  /// An origin that keeps it with the lock (nfs-ganesha) keeps this run's locks when
  /// a late callback for this run's restart notice arrives. 0 without a monitor.
  std::int32_t own_state() const;
  /// Every LOCK nfsgw sends the origin goes through here (it sets own_state()).
  Awaitable<OriginReply<nlm4::Res>> lock_at_origin(OriginLocks& origin, const Credentials& cred,
                                                   nlm4::LockArgs args) const;
  /// The lock as the origin is asked for it: nfsgw's caller name, the origin's
  /// handle, the origin owner (none: no owner handle, svid 0).
  nlm4::Lock origin_lock(const nfs3::FileHandle& fh, const std::optional<OriginOwner>& owner, std::uint64_t offset,
                         std::uint64_t length) const;
  /// Forgets an owner that holds and waits for nothing and has nothing in flight.
  void tidy_owner(OwnerId owner);
  /// Forgets a file with no locks and no waiters left.
  void tidy_file(const FileKey& key);
  /// Takes the file's ready waiters at the origin and grants them.
  Awaitable<std::size_t> wake(FileKey file);
  /// Releases the locks granted to waiters and not claimed within
  /// settings.unclaimed_timeout. Returns how many.
  Awaitable<std::size_t> drop_unclaimed();
  /// Waits (bounded) while `key`'s locks are being reclaimed at a restarted origin.
  /// False when they still are at the bound.
  Awaitable<bool> wait_for_reclaim(FileKey key);
  /// Takes `key`'s locks again at its restarted origin (origin_restarted).
  Awaitable<void> reclaim_file(FileKey key, OriginReclaim& report, std::unique_ptr<ReclaimMark> mark);
  /// Tells the waiter's client (ClientCallbacks) that it was granted.
  Awaitable<void> tell_granted(WaiterInfo w);
  /// Releases everything of the owners `which` picks among those of `caller_name`.
  Awaitable<std::size_t> release_owners(std::string caller_name, std::function<bool(const ClientOwner&)> which,
                                        std::string why);
  /// Unlocks `range` of `owner` at the origin (release_owner, CANCEL of a granted
  /// waiter); the table is the caller's business.
  Awaitable<bool> release_at_origin(const FileInfo& f, OwnerId owner, Range range, const Credentials& cred);

  HandleCheck check_;
  OriginFor origins_;
  NlmSettings settings_;
  Now now_;
  OnGranted on_granted_;
  BeforeRelease before_release_;
  ClientCallbacks* callbacks_ = nullptr;
  ClientMonitor* monitor_ = nullptr;
  std::function<std::string(const std::string&)> my_name_for_;

  mutable std::mutex mu_;
  GracePeriod grace_;
  OwnerMap owners_;
  LockTable table_;
  /// What the origin needs to know of each file with locks or waiters.
  std::unordered_map<FileKey, std::shared_ptr<FileInfo>> files_;
  /// What a waiter's LOCK carried, to ask the origin and tell the client.
  std::unordered_map<WaiterId, std::shared_ptr<WaiterInfo>> waiter_info_;
  /// Locks granted from a waiter whose client has not claimed them yet (its
  /// retry of the LOCK, or an acknowledged NLM_GRANTED): a CANCEL releases them.
  struct Unclaimed {
    FileKey file;
    OwnerId owner = 0;
    Range range;
    bool exclusive = false;
    friend bool operator<(const Unclaimed& a, const Unclaimed& b) {
      return std::tie(a.file, a.owner, a.range.first, a.range.last, a.exclusive) <
             std::tie(b.file, b.owner, b.range.first, b.range.last, b.exclusive);
    }
  };
  /// With the time each was granted: one not claimed within unclaimed_timeout
  /// is released (drop_unclaimed).
  std::map<Unclaimed, Clock::time_point> unclaimed_;
  /// Calls at the origin in flight per owner (an owner is not forgotten meanwhile).
  std::unordered_map<OwnerId, int> busy_;
  /// Owners whose call the origin did not answer: they may hold a lock there that
  /// the table does not know, so they are kept for their client's UNLOCK.
  std::set<OwnerId> doubtful_;
  /// Files whose locks are being taken again at their restarted origin.
  /// (A multiset: a second notice of the same origin may come during a reclaim.)
  std::multiset<FileKey> reclaiming_;
  /// reclaiming_.size(), read without mu_: a request skips wait_for_reclaim when 0.
  std::atomic<std::size_t> reclaim_marks_{0};
  /// Room in max_locks taken by calls at the origin in flight.
  std::size_t reserved_ = 0;
  NlmCounts counts_;
};

}  // namespace nfsgw::nlm
