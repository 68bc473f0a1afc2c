// A layer that times the calls passing through it and counts their errors, into
// a CallMeter (call_meter.h), and changes nothing else. GatewayApp puts one above
// each export's stack (what clients wait for, behind the handle translator) and one
// above its forwarder (what the origin takes), when the metrics endpoint is on;
// when it is off neither exists and no call pays for them.
//
// The answers given at once (`*_now`) are passed on and, when there is one,
// counted at once (CallMeter::record_at_once) into the answer's basis, so that a
// copy given again counts too: no clock read, no coroutine frame.
#pragma once

#include <cstdint>

#include "gateway/metrics/call_meter.h"
#include "gateway/forwarding_program.h"

namespace nfsgw::metrics {

/// Nanoseconds from a monotonic clock.
using NanoClock = std::uint64_t (*)();
std::uint64_t steady_nanos();

class MeasuredProgram final : public ForwardingProgram<MeasuredProgram> {
 public:
  MeasuredProgram(Nfs3Program& next, CallMeter& meter, NanoClock clock = &steady_nanos)
      : ForwardingProgram(next), meter_(meter), clock_(clock) {}

  Awaitable<void> null(const CallContext& ctx) override;
#define NFSGW_MEASURED_DECLARE(method, P, Res, Args)                                   \
  Awaitable<nfs3::Res> method(const CallContext& ctx, nfs3::Args args) override;      \
  Now<nfs3::Res> method##_now(const CallContext& ctx, const nfs3::Args& args) override;
  NFSGW_NFS3_PROCEDURES(NFSGW_MEASURED_DECLARE)
#undef NFSGW_MEASURED_DECLARE

 private:
  CallMeter& meter_;
  const NanoClock clock_;
};

}  // namespace nfsgw::metrics
