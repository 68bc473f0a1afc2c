#include "gateway/metrics/measured_program.h"

#include <chrono>

namespace nfsgw::metrics {

std::uint64_t steady_nanos() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

Awaitable<void> MeasuredProgram::null(const CallContext& ctx) {
  const std::uint64_t t0 = clock_();
  co_await next_.null(ctx);
  meter_.record(nfs3::Proc::Null, nfs3::Status::Ok, clock_() - t0);
}

// Each procedure: time the call below, count its status, hand the result back;
// an answer given at once is counted without timing.
#define NFSGW_MEASURED(method, P, Res, Args)                                                   \
  Awaitable<nfs3::Res> MeasuredProgram::method(const CallContext& ctx, nfs3::Args args) {        \
    const std::uint64_t t0 = clock_();                                                         \
    nfs3::Res res = co_await next_.method(ctx, std::move(args));                               \
    meter_.record(nfs3::Proc::P, res.status, clock_() - t0);                                   \
    co_return res;                                                                             \
  }                                                                                            \
  Now<nfs3::Res> MeasuredProgram::method##_now(const CallContext& ctx, const nfs3::Args& args) { \
    Now<nfs3::Res> now = next_.method##_now(ctx, args);                                        \
    if (now) meter_.record_at_once(nfs3::Proc::P, now.res->status, now.basis);                 \
    return now;                                                                                \
  }
NFSGW_NFS3_PROCEDURES(NFSGW_MEASURED)
#undef NFSGW_MEASURED

}  // namespace nfsgw::metrics
