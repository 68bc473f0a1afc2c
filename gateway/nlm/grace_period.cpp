// GracePeriod (grace_period.h).
#include "gateway/nlm/grace_period.h"

#include <algorithm>

namespace nfsgw::nlm {

void GracePeriod::begin(TimePoint now, Duration length) { ends_ = now + std::max(length, Duration::zero()); }

void GracePeriod::end() { ends_ = TimePoint::min(); }

nlm4::Stat GracePeriod::admit_lock(bool reclaim, TimePoint now) const {
  // In grace only reclaims; after it, no reclaims.
  return reclaim == active(now) ? nlm4::Stat::Granted : nlm4::Stat::DeniedGracePeriod;
}

nlm4::Stat GracePeriod::admit_test(TimePoint now) const {
  return active(now) ? nlm4::Stat::DeniedGracePeriod : nlm4::Stat::Granted;
}

nlm4::Stat GracePeriod::admit_release(TimePoint) const { return nlm4::Stat::Granted; }

}  // namespace nfsgw::nlm
