// What nfsgw's NLM service asks of the origin's lock manager (issue 21): the four
// NLM v4 calls a lock needs, SHARE and UNSHARE (share_service.h), and telling the
// origin's statd that nfsgw restarted.
//
// The service speaks in the origin's names: the file handle is the origin's (the
// translator has unwrapped the client's gateway handle), the owner is the origin
// owner OwnerMap gave (nfsgw locks in its own name at the origin), and the
// caller_name is nfsgw's own (the name the origin's statd monitors). The
// credentials are the caller's AUTH_SYS credentials after the export's squash,
// as for every call nfsgw forwards.
//
// Implemented by gateway/upstream (OriginNlm: libnfs's NLM 4 and NSM 1 client
// calls on a context of its own, the origin's NLM port from the origin's rpcbind
// or from the configuration), and by fakes in unit tests. Every call ends: an
// origin that does not answer within the implementation's bound gives
// Outcome::NoAnswer, never a hang.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "protocol/nlm4_types.h"

namespace nfsgw::nlm {

/// Whether the origin answered.
enum class Outcome {
  Answered,    // `reply` holds the origin's answer (whatever its nlm4_stats)
  NoAnswer,    // sent, and no answer within the bound (origin frozen or gone mid-call)
  Unreachable, // not sent: no NLM port at the origin's rpcbind, or no connection
};

template <typename Reply>
struct OriginReply {
  Outcome outcome = Outcome::Unreachable;
  std::optional<Reply> reply;  // set exactly when outcome == Answered
  std::string error;           // for logs when not answered: what failed
};

class OriginLocks {
 public:
  virtual ~OriginLocks() = default;

  virtual Awaitable<OriginReply<nlm4::TestRes>> test(const Credentials& cred, nlm4::TestArgs args) = 0;
  /// A blocking LOCK (args.block) may be answered BLOCKED; the origin then sends
  /// NLM_GRANTED to nfsgw's NLM service when it grants it (the service maps the
  /// origin owner back with OwnerMap::find(OriginOwner)).
  virtual Awaitable<OriginReply<nlm4::Res>> lock(const Credentials& cred, nlm4::LockArgs args) = 0;
  virtual Awaitable<OriginReply<nlm4::Res>> cancel(const Credentials& cred, nlm4::CancelArgs args) = 0;
  virtual Awaitable<OriginReply<nlm4::Res>> unlock(const Credentials& cred, nlm4::UnlockArgs args) = 0;
  /// NLM4 SHARE and UNSHARE (DOS share reservations). By default Unreachable: an
  /// origin without them (the unit tests' fakes of locks only).
  virtual Awaitable<OriginReply<nlm4::ShareRes>> share(const Credentials& cred, nlm4::ShareArgs args);
  virtual Awaitable<OriginReply<nlm4::ShareRes>> unshare(const Credentials& cred, nlm4::ShareArgs args);

  /// SM_NOTIFY to the origin's statd: the host `mon_name` (nfsgw's caller name at
  /// the origin) restarted and is now in NSM state `state`, so the origin drops
  /// every lock that name held. True once the origin's statd answered.
  virtual Awaitable<bool> notify_restart(std::string mon_name, std::int32_t state) = 0;
};

inline Awaitable<OriginReply<nlm4::ShareRes>> OriginLocks::share(const Credentials&, nlm4::ShareArgs) {
  OriginReply<nlm4::ShareRes> r;
  r.error = "this origin has no NLM SHARE";
  co_return r;
}

inline Awaitable<OriginReply<nlm4::ShareRes>> OriginLocks::unshare(const Credentials&, nlm4::ShareArgs) {
  OriginReply<nlm4::ShareRes> r;
  r.error = "this origin has no NLM UNSHARE";
  co_return r;
}

}  // namespace nfsgw::nlm
