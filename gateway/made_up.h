// Every result nfsgw makes up itself, instead of passing on the origin's, is built
// here and marked as nfsgw's own (gateway_status): no layer stores it as the
// origin's answer ("store only what the origin said"), and the dispatcher never
// replays it to a retransmission (rpc/procedure_table.h, Finished).
//
// The statuses nfsgw makes up: JUKEBOX (the origin did not answer in time, or a
// waiter's client left), SERVERFAULT (an origin reply nfsgw cannot use), the
// handle translator's refusals (BADHANDLE, STALE, ACCES, ROFS, XDEV, NAMETOOLONG,
// ...), and BAD_COOKIE and TOOSMALL of a listing served from the cache.
#pragma once

#include "protocol/nfs3_types.h"

namespace nfsgw {

template <typename Res>
Res made_up(nfs3::Status status) {
  Res r{};
  r.status = status;
  r.gateway_status = true;
  return r;
}

}  // namespace nfsgw
