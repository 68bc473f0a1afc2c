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

// Each procedure: time the call below, count its status, hand the result back.
#define NFSGW_MEASURED(method, P, Res, Args)                                            \
  Awaitable<nfs3::Res> MeasuredProgram::method(const CallContext& ctx, nfs3::Args args) { \
    const std::uint64_t t0 = clock_();                                                  \
    nfs3::Res res = co_await next_.method(ctx, std::move(args));                        \
    meter_.record(nfs3::Proc::P, res.status, clock_() - t0);                            \
    co_return res;                                                                      \
  }

NFSGW_MEASURED(getattr, Getattr, GetattrRes, GetattrArgs)
NFSGW_MEASURED(setattr, Setattr, SetattrRes, SetattrArgs)
NFSGW_MEASURED(lookup, Lookup, LookupRes, LookupArgs)
NFSGW_MEASURED(access, Access, AccessRes, AccessArgs)
NFSGW_MEASURED(readlink, Readlink, ReadlinkRes, ReadlinkArgs)
NFSGW_MEASURED(read, Read, ReadRes, ReadArgs)
NFSGW_MEASURED(write, Write, WriteRes, WriteArgs)
NFSGW_MEASURED(create, Create, CreateRes, CreateArgs)
NFSGW_MEASURED(mkdir, Mkdir, MkdirRes, MkdirArgs)
NFSGW_MEASURED(symlink, Symlink, SymlinkRes, SymlinkArgs)
NFSGW_MEASURED(mknod, Mknod, MknodRes, MknodArgs)
NFSGW_MEASURED(remove, Remove, RemoveRes, RemoveArgs)
NFSGW_MEASURED(rmdir, Rmdir, RmdirRes, RmdirArgs)
NFSGW_MEASURED(rename, Rename, RenameRes, RenameArgs)
NFSGW_MEASURED(link, Link, LinkRes, LinkArgs)
NFSGW_MEASURED(readdir, Readdir, ReaddirRes, ReaddirArgs)
NFSGW_MEASURED(readdirplus, Readdirplus, ReaddirplusRes, ReaddirplusArgs)
NFSGW_MEASURED(fsstat, Fsstat, FsstatRes, FsstatArgs)
NFSGW_MEASURED(fsinfo, Fsinfo, FsinfoRes, FsinfoArgs)
NFSGW_MEASURED(pathconf, Pathconf, PathconfRes, PathconfArgs)
NFSGW_MEASURED(commit, Commit, CommitRes, CommitArgs)
#undef NFSGW_MEASURED

std::optional<nfs3::GetattrRes> MeasuredProgram::getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) {
  auto res = next_.getattr_now(ctx, args);
  if (res) meter_.record_at_once(nfs3::Proc::Getattr, res->status);
  return res;
}

std::optional<nfs3::LookupRes> MeasuredProgram::lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) {
  auto res = next_.lookup_now(ctx, args);
  if (res) meter_.record_at_once(nfs3::Proc::Lookup, res->status);
  return res;
}

std::optional<nfs3::AccessRes> MeasuredProgram::access_now(const CallContext& ctx, const nfs3::AccessArgs& args) {
  auto res = next_.access_now(ctx, args);
  if (res) meter_.record_at_once(nfs3::Proc::Access, res->status);
  return res;
}

}  // namespace nfsgw::metrics
