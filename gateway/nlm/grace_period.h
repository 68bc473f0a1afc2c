// The grace period after nfsgw (re)starts: for its length, only reclaims of
// locks clients held before are granted, so that no new lock is given that
// conflicts with one a client is about to take back. After it, a reclaim is
// refused (its lock may have been given to someone else meanwhile), as Linux's
// lockd does.
//
// What each request may do, by the time it arrives:
//   LOCK / NM_LOCK / SHARE      in grace: reclaims only; after: all but reclaims
//   TEST                        in grace: refused (the answer could be wrong)
//   UNLOCK / CANCEL / UNSHARE / FREE_ALL: always (they only release)
// Refused requests are answered NLM4_DENIED_GRACE_PERIOD.
//
// The clock is the caller's: every question takes `now` (a steady clock), so the
// unit tests drive it by hand. Not thread-safe.
#pragma once

#include <chrono>

#include "protocol/nlm4_types.h"

namespace nfsgw::nlm {

class GracePeriod {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;
  using Duration = Clock::duration;

  /// No grace period until begin().
  GracePeriod() = default;

  /// Starts a grace period of `length` at `now` (a negative length counts as 0).
  void begin(TimePoint now, Duration length);
  /// Ends it at once (for instance when every client that held locks has
  /// reclaimed them, or when nothing was held before the restart).
  void end();

  bool active(TimePoint now) const { return now < ends_; }
  /// When it ends (or ended); TimePoint::min() when it never began.
  TimePoint ends() const { return ends_; }

  /// Granted: go on; DeniedGracePeriod: refuse.
  nlm4::Stat admit_lock(bool reclaim, TimePoint now) const;
  nlm4::Stat admit_test(TimePoint now) const;
  /// UNLOCK, CANCEL, UNSHARE, FREE_ALL: always Granted (kept so that the service
  /// asks for every request, and a change of rule is one place).
  nlm4::Stat admit_release(TimePoint now) const;

 private:
  TimePoint ends_ = TimePoint::min();
};

}  // namespace nfsgw::nlm
