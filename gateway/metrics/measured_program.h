// A layer that times the calls passing through it and counts their errors, into
// a CallMeter (call_meter.h), and changes nothing else. GatewayApp puts one above
// each export's stack (what clients wait for, behind the handle translator) and one
// above its forwarder (what the origin takes), when the metrics endpoint is on;
// when it is off neither exists and no call pays for them.
//
// The `*_now` answers (a cached GETATTR, LOOKUP or ACCESS) are passed on and, when
// there is one, counted at once (CallMeter::record_at_once): no clock read, no
// coroutine frame.
#pragma once

#include <cstdint>

#include "gateway/metrics/call_meter.h"
#include "gateway/nfs3_program.h"

namespace nfsgw::metrics {

/// Nanoseconds from a monotonic clock.
using NanoClock = std::uint64_t (*)();
std::uint64_t steady_nanos();

class MeasuredProgram final : public Nfs3Program {
 public:
  MeasuredProgram(Nfs3Program& next, CallMeter& meter, NanoClock clock = &steady_nanos)
      : next_(next), meter_(meter), clock_(clock) {}

  Awaitable<void> null(const CallContext& ctx) override;
  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) override;
  Awaitable<nfs3::SetattrRes> setattr(const CallContext& ctx, nfs3::SetattrArgs args) override;
  Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) override;
  Awaitable<nfs3::AccessRes> access(const CallContext& ctx, nfs3::AccessArgs args) override;
  Awaitable<nfs3::ReadlinkRes> readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) override;
  Awaitable<nfs3::ReadRes> read(const CallContext& ctx, nfs3::ReadArgs args) override;
  Awaitable<nfs3::WriteRes> write(const CallContext& ctx, nfs3::WriteArgs args) override;
  Awaitable<nfs3::CreateRes> create(const CallContext& ctx, nfs3::CreateArgs args) override;
  Awaitable<nfs3::MkdirRes> mkdir(const CallContext& ctx, nfs3::MkdirArgs args) override;
  Awaitable<nfs3::SymlinkRes> symlink(const CallContext& ctx, nfs3::SymlinkArgs args) override;
  Awaitable<nfs3::MknodRes> mknod(const CallContext& ctx, nfs3::MknodArgs args) override;
  Awaitable<nfs3::RemoveRes> remove(const CallContext& ctx, nfs3::RemoveArgs args) override;
  Awaitable<nfs3::RmdirRes> rmdir(const CallContext& ctx, nfs3::RmdirArgs args) override;
  Awaitable<nfs3::RenameRes> rename(const CallContext& ctx, nfs3::RenameArgs args) override;
  Awaitable<nfs3::LinkRes> link(const CallContext& ctx, nfs3::LinkArgs args) override;
  Awaitable<nfs3::ReaddirRes> readdir(const CallContext& ctx, nfs3::ReaddirArgs args) override;
  Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) override;
  Awaitable<nfs3::FsstatRes> fsstat(const CallContext& ctx, nfs3::FsstatArgs args) override;
  Awaitable<nfs3::FsinfoRes> fsinfo(const CallContext& ctx, nfs3::FsinfoArgs args) override;
  Awaitable<nfs3::PathconfRes> pathconf(const CallContext& ctx, nfs3::PathconfArgs args) override;
  Awaitable<nfs3::CommitRes> commit(const CallContext& ctx, nfs3::CommitArgs args) override;

  std::optional<nfs3::GetattrRes> getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) override;
  std::optional<nfs3::LookupRes> lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) override;
  std::optional<nfs3::AccessRes> access_now(const CallContext& ctx, const nfs3::AccessArgs& args) override;

 private:
  Nfs3Program& next_;
  CallMeter& meter_;
  const NanoClock clock_;
};

}  // namespace nfsgw::metrics
