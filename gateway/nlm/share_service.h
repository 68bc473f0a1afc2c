// NLM v4 SHARE and UNSHARE (issue 21): DOS-style share reservations (a deny mode
// and an access mode on a whole file, nlm4_shareargs), held at the origin's lock
// manager in nfsgw's name, as locks are (nlm_service.h):
//   1. the handle: a gateway handle, checked like every NLM handle (HandleCheck).
//      Forged or stale -> NLM4_STALE_FH, a client the export refuses ->
//      NLM4_DENIED; nothing reaches the origin;
//   2. grace (GracePeriod, begun with the lock service's): SHARE in grace only as
//      a reclaim, after it never as one (NLM4_DENIED_GRACE_PERIOD); UNSHARE always;
//   3. the owner: each client owner (its address, caller name, owner handle) gets
//      an origin owner of its own, "nfsgw/<instance>-s/<id>" (OwnerMap, an instance
//      of its own: share owners are never lock owners), with nfsgw's caller name,
//      so that two clients of nfsgw exclude each other at the origin as they
//      exclude clients of the origin;
//   4. the origin decides: SHARE goes to its NLM with the caller's credentials
//      (after the export's squash); its answer is the client's answer. nfsgw
//      keeps the reservations the origin granted (file, owner), to release them.
//      A reclaim goes to the origin as a new SHARE (the origin keeps no grace
//      period for nfsgw, as for locks).
//   5. UNSHARE releases the owner's whole reservation on the file at the origin
//      (every access and deny bit, as Linux's lockd releases the whole share
//      whatever the call's modes), then forgets it. An UNSHARE of nothing nfsgw
//      holds is answered GRANTED without the origin.
// An origin that does not answer: no reply (nullopt), and the client sends its
// call again (a SHARE repeated is harmless at the origin, which keeps one
// reservation per owner and file); a SHARE left unanswered is kept as held, so
// that UNSHARE, FREE_ALL or the host's reboot release it at the origin. An origin
// without a lock manager (Unreachable) -> NLM4_DENIED_NOLOCKS.
//
// Bound: at most `max_shares` reservations (and as many owners), counting those in
// flight; past it NLM4_DENIED_NOLOCKS, before the origin.
//
// A client host's reboot releases its reservations at the origin: FREE_ALL (the
// PC-NFS clients that use SHARE have no status monitor, so SHARE does not have
// the host monitored, as knfsd does not) for the owners of that caller name from
// that address, statd's callback (host_rebooted) for every address.
//
// The origin's restart (origin_restarted, from statd's callback for the origin
// host, as for locks): every reservation held there is asked for again with
// reclaim = true, inside the origin's grace period; an origin past its grace
// (DENIED_GRACE_PERIOD) is asked for it as a new one; one the origin refuses
// (another owner took the file meanwhile) is logged as lost and forgotten.
//
// Thread-safe: one mutex, never held across a call to the origin.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "gateway/nlm/grace_period.h"
#include "gateway/nlm/nlm_service.h"
#include "gateway/nlm/owner_map.h"
#include "protocol/nlm4_types.h"

namespace nfsgw::nlm {

struct ShareSettings {
  std::size_t max_shares = 4096;
  std::chrono::steady_clock::duration grace = std::chrono::seconds(0);  // from begin_grace()
  std::string caller_name = "nfsgw";  // nfsgw's caller name at the origin
  std::string instance = "0";         // this run of nfsgw (OwnerMap)
};

struct ShareCounts {
  std::uint64_t granted = 0;      // SHARE answered GRANTED by the origin
  std::uint64_t denied = 0;       // SHARE refused by the origin
  std::uint64_t stale = 0;        // handles refused
  std::uint64_t over_bound = 0;   // refused NLM4_DENIED_NOLOCKS at max_shares
  std::uint64_t no_answer = 0;    // calls left unanswered (the origin did not answer)
  std::uint64_t origin_calls = 0;
  std::uint64_t released = 0;     // reservations released by UNSHARE, FREE_ALL or a reboot
  std::uint64_t lost = 0;         // not held again after the origin restarted (refused)
};

class ShareService {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;

  ShareService(HandleCheck check, OriginFor origins, ShareSettings settings, Now now);

  /// Starts the grace period (settings.grace long) now: at nfsgw's start.
  void begin_grace();

  /// nullopt: no reply (the origin did not answer; the client sends the call again).
  Awaitable<std::optional<nlm4::ShareRes>> share(const CallContext& ctx, nlm4::ShareArgs args);
  Awaitable<std::optional<nlm4::ShareRes>> unshare(const CallContext& ctx, nlm4::ShareArgs args);
  /// FREE_ALL: the reservations of the owners of `args.name` seen from this
  /// client address are released at the origin. Returns how many.
  Awaitable<std::size_t> free_all(const CallContext& ctx, nlm4::Notify args);
  /// statd's callback: those of the owners of `caller_name`, from any address.
  Awaitable<std::size_t> host_rebooted(std::string caller_name);
  /// The origin of `exports` restarted: each reservation held there is asked for
  /// again (reclaim = true). Returns how many the origin holds again.
  Awaitable<std::size_t> origin_restarted(std::set<std::uint32_t> exports);

  std::size_t share_count() const;
  std::size_t owner_count() const;
  ShareCounts counts() const;

 private:
  /// A reservation held at the origin (or asked for with no answer).
  struct Held {
    std::uint32_t export_id = 0;
    nfs3::FileHandle origin;  // the file's handle at the origin
    Credentials cred;         // whose call took it
    std::string caller_name;  // the client host's
    nlm4::ShareMode mode = nlm4::ShareMode::DenyNone;  // as granted: asked again after the origin's restart
    nlm4::ShareAccess access = nlm4::ShareAccess::None;
  };
  using Key = std::pair<FileKey, OwnerId>;  // (file_key: export and origin handle, owner)

  /// The handle's verdict (HandleCheck), stale ones counted.
  Awaitable<CheckedHandle> checked(const CallContext& ctx, const nfs3::FileHandle& fh);
  /// UNSHARE of every bit of `owner`'s reservation at the origin; true once it answered.
  Awaitable<bool> release_at_origin(OwnerId owner, Held held);
  /// A reservation to act on outside mu_, its owner marked busy meanwhile.
  struct Taken {
    Key key;
    Held held;
    OriginOwner at_origin;
  };
  /// The reservations `which` picks (called under mu_), each owner marked busy.
  std::vector<Taken> take(const std::function<bool(OwnerId, const Held&)>& which);
  /// Releases the reservations of the owners `which` picks.
  Awaitable<std::size_t> release_owners(std::function<bool(const ClientOwner&)> which, std::string why);
  /// Forgets an owner that holds nothing and has nothing in flight (mu_ held).
  void tidy_owner(OwnerId owner);

  HandleCheck check_;
  OriginFor origins_;
  ShareSettings settings_;
  Now now_;

  mutable std::mutex mu_;
  GracePeriod grace_;
  OwnerMap owners_;
  std::map<Key, Held> held_;
  std::unordered_map<OwnerId, int> busy_;  // calls at the origin in flight per owner
  std::size_t reserved_ = 0;               // room in max_shares taken by SHAREs in flight
  ShareCounts counts_;
};

}  // namespace nfsgw::nlm
