#include "gateway/upstream/forwarder.h"

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <spdlog/spdlog.h>

#include "gateway/made_up.h"
#include "gateway/rpc/nfs3_procedure_info.h"
#include "gateway/upstream/libnfs_convert.h"
#include "gateway/upstream/origin_mount.h"
#include "gateway/upstream/upstream_await.h"
#include "gateway/upstream/upstream_pool.h"

namespace nfsgw::upstream {

namespace {

constexpr std::uint32_t kNfsProgram = 100003;
constexpr std::uint32_t kNfsVersion = 3;

/// Copies libnfs's result into Res; an unrepresentable reply becomes SERVERFAULT,
/// marked as nfsgw's own (gateway_status): the origin said something else.
template <typename LibRes, typename Res>
auto reply_into(const char* what) {
  return [what](void* data, Res& out) {
    if (data == nullptr || !convert::from_libnfs(*static_cast<const LibRes*>(data), out)) {
      spdlog::warn("upstream: unusable {} reply from the origin", what);
      out = made_up<Res>(nfs3::Status::ServerFault);
    }
  };
}

/// Sends `*args` with libnfs's `send` (one of rpc_nfs3_*_async) and awaits the reply.
template <typename Res, typename LibRes, typename LibArgs>
Awaitable<Res> forward(UpstreamPool& pool, CallSpec spec, LibArgs* args,
                       int (*send)(struct rpc_context*, rpc_cb, LibArgs*, void*)) {
  return await_call<Res>(
      pool, spec,
      [args, send](struct rpc_context* rpc, RpcCallback cb, void* p) {
        return send(rpc, cb, args, p);
      },
      reply_into<LibRes, Res>(spec.what));
}

using nfs3::Proc;

/// Name and idempotency of a call without arguments (NULL), from the procedure
/// table shared with the dispatcher (gateway/rpc/nfs3_procedure_info.h).
CallSpec spec_of(Proc proc, const CallContext& ctx) {
  return {rpc::nfs3_idempotent(proc), rpc::nfs3_procedure(proc).name, &ctx.cred,
          ctx.caller_gone};
}

/// The same for a call with arguments, with the table's per-call rule (a guarded
/// SETATTR is not idempotent).
template <typename Args>
CallSpec spec_of(Proc proc, const CallContext& ctx, const Args& args) {
  return {rpc::nfs3_call_idempotent(proc, args), rpc::nfs3_procedure(proc).name, &ctx.cred,
          ctx.caller_gone};
}

/// libnfs sends names and paths as C strings: an embedded NUL would silently
/// truncate them into a different name, so such calls are refused here.
bool c_string_safe(const std::string& s) { return s.find('\0') == std::string::npos; }

/// A call answered by nfsgw without asking the origin.
template <typename Res>
Res refused(nfs3::Status status) {
  return made_up<Res>(status);
}

struct NullRes {
  nfs3::Status status = nfs3::Status::Ok;
  bool gateway_status = false;  // as in protocol/nfs3_types.h; set by AwaitedCall::on_fail
};

}  // namespace

Forwarder::Forwarder(boost::asio::io_context& io, const config::ExportConfig& export_config)
    : pool_(std::make_shared<UpstreamPool>(
          io,
          Endpoint{export_config.origin.host, export_config.origin.nfs_port, kNfsProgram,
                   kNfsVersion},
          export_config.upstream_connections, UpstreamOptions{export_config.origin_timeout})),
      mount_(std::make_shared<OriginMount>(io, export_config.origin,
                                           UpstreamOptions{export_config.origin_timeout})) {}

Forwarder::~Forwarder() { stop(); }

void Forwarder::start() {
  pool_->start();
  mount_->start();
}

void Forwarder::stop() {
  mount_->stop();
  pool_->stop();
}

Awaitable<nfs3::FileHandle> Forwarder::root_handle() { return mount_->root_handle(); }

std::size_t Forwarder::connections_up() const { return pool_->connections_up(); }

Awaitable<void> Forwarder::null(const CallContext& ctx) {
  co_await await_call<NullRes>(
      *pool_, spec_of(Proc::Null, ctx),
      [](struct rpc_context* rpc, RpcCallback cb, void* p) { return rpc_nfs3_null_async(rpc, cb, p); },
      [](void*, NullRes&) {});
}

Awaitable<nfs3::GetattrRes> Forwarder::getattr(const CallContext& ctx, nfs3::GetattrArgs args) {
  ::GETATTR3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::GetattrRes, ::GETATTR3res>(
      *pool_, spec_of(Proc::Getattr, ctx, args), &a, &rpc_nfs3_getattr_async);
}

Awaitable<nfs3::SetattrRes> Forwarder::setattr(const CallContext& ctx, nfs3::SetattrArgs args) {
  ::SETATTR3args a;
  convert::to_libnfs(args, a);
  // Idempotent unless guarded: the one per-call rule of nfs3_procedure_info.h.
  co_return co_await forward<nfs3::SetattrRes, ::SETATTR3res>(
      *pool_, spec_of(Proc::Setattr, ctx, args), &a, &rpc_nfs3_setattr_async);
}

Awaitable<nfs3::LookupRes> Forwarder::lookup(const CallContext& ctx, nfs3::LookupArgs args) {
  if (!c_string_safe(args.what.name)) co_return refused<nfs3::LookupRes>(nfs3::Status::Inval);
  ::LOOKUP3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::LookupRes, ::LOOKUP3res>(
      *pool_, spec_of(Proc::Lookup, ctx, args), &a, &rpc_nfs3_lookup_async);
}

Awaitable<nfs3::AccessRes> Forwarder::access(const CallContext& ctx, nfs3::AccessArgs args) {
  ::ACCESS3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::AccessRes, ::ACCESS3res>(
      *pool_, spec_of(Proc::Access, ctx, args), &a, &rpc_nfs3_access_async);
}

Awaitable<nfs3::ReadlinkRes> Forwarder::readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) {
  ::READLINK3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::ReadlinkRes, ::READLINK3res>(
      *pool_, spec_of(Proc::Readlink, ctx, args), &a, &rpc_nfs3_readlink_async);
}

Awaitable<nfs3::ReadRes> Forwarder::read(const CallContext& ctx, nfs3::ReadArgs args) {
  ::READ3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::ReadRes, ::READ3res>(
      *pool_, spec_of(Proc::Read, ctx, args), &a, &rpc_nfs3_read_async);
}

Awaitable<nfs3::WriteRes> Forwarder::write(const CallContext& ctx, nfs3::WriteArgs args) {
  ::WRITE3args a;
  convert::to_libnfs(args, a);
  CallSpec spec = spec_of(Proc::Write, ctx, args);
  spec.payload = args.data.size();
  co_return co_await forward<nfs3::WriteRes, ::WRITE3res>(*pool_, spec, &a, &rpc_nfs3_write_async);
}

Awaitable<nfs3::CreateRes> Forwarder::create(const CallContext& ctx, nfs3::CreateArgs args) {
  if (!c_string_safe(args.where.name)) co_return refused<nfs3::CreateRes>(nfs3::Status::Inval);
  ::CREATE3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::CreateRes, ::CREATE3res>(
      *pool_, spec_of(Proc::Create, ctx, args), &a, &rpc_nfs3_create_async);
}

Awaitable<nfs3::MkdirRes> Forwarder::mkdir(const CallContext& ctx, nfs3::MkdirArgs args) {
  if (!c_string_safe(args.where.name)) co_return refused<nfs3::MkdirRes>(nfs3::Status::Inval);
  ::MKDIR3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::MkdirRes, ::MKDIR3res>(
      *pool_, spec_of(Proc::Mkdir, ctx, args), &a, &rpc_nfs3_mkdir_async);
}

Awaitable<nfs3::SymlinkRes> Forwarder::symlink(const CallContext& ctx, nfs3::SymlinkArgs args) {
  if (!c_string_safe(args.where.name) || !c_string_safe(args.symlink_data)) {
    co_return refused<nfs3::SymlinkRes>(nfs3::Status::Inval);
  }
  ::SYMLINK3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::SymlinkRes, ::SYMLINK3res>(
      *pool_, spec_of(Proc::Symlink, ctx, args), &a, &rpc_nfs3_symlink_async);
}

Awaitable<nfs3::MknodRes> Forwarder::mknod(const CallContext& ctx, nfs3::MknodArgs args) {
  if (!c_string_safe(args.where.name)) co_return refused<nfs3::MknodRes>(nfs3::Status::Inval);
  ::MKNOD3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::MknodRes, ::MKNOD3res>(
      *pool_, spec_of(Proc::Mknod, ctx, args), &a, &rpc_nfs3_mknod_async);
}

Awaitable<nfs3::RemoveRes> Forwarder::remove(const CallContext& ctx, nfs3::RemoveArgs args) {
  if (!c_string_safe(args.object.name)) co_return refused<nfs3::RemoveRes>(nfs3::Status::Inval);
  ::REMOVE3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::RemoveRes, ::REMOVE3res>(
      *pool_, spec_of(Proc::Remove, ctx, args), &a, &rpc_nfs3_remove_async);
}

Awaitable<nfs3::RmdirRes> Forwarder::rmdir(const CallContext& ctx, nfs3::RmdirArgs args) {
  if (!c_string_safe(args.object.name)) co_return refused<nfs3::RmdirRes>(nfs3::Status::Inval);
  ::RMDIR3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::RmdirRes, ::RMDIR3res>(
      *pool_, spec_of(Proc::Rmdir, ctx, args), &a, &rpc_nfs3_rmdir_async);
}

Awaitable<nfs3::RenameRes> Forwarder::rename(const CallContext& ctx, nfs3::RenameArgs args) {
  if (!c_string_safe(args.from.name) || !c_string_safe(args.to.name)) {
    co_return refused<nfs3::RenameRes>(nfs3::Status::Inval);
  }
  ::RENAME3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::RenameRes, ::RENAME3res>(
      *pool_, spec_of(Proc::Rename, ctx, args), &a, &rpc_nfs3_rename_async);
}

Awaitable<nfs3::LinkRes> Forwarder::link(const CallContext& ctx, nfs3::LinkArgs args) {
  if (!c_string_safe(args.link.name)) co_return refused<nfs3::LinkRes>(nfs3::Status::Inval);
  ::LINK3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::LinkRes, ::LINK3res>(
      *pool_, spec_of(Proc::Link, ctx, args), &a, &rpc_nfs3_link_async);
}

Awaitable<nfs3::ReaddirRes> Forwarder::readdir(const CallContext& ctx, nfs3::ReaddirArgs args) {
  ::READDIR3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::ReaddirRes, ::READDIR3res>(
      *pool_, spec_of(Proc::Readdir, ctx, args), &a, &rpc_nfs3_readdir_async);
}

Awaitable<nfs3::ReaddirplusRes> Forwarder::readdirplus(const CallContext& ctx,
                                                       nfs3::ReaddirplusArgs args) {
  ::READDIRPLUS3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::ReaddirplusRes, ::READDIRPLUS3res>(
      *pool_, spec_of(Proc::Readdirplus, ctx, args), &a, &rpc_nfs3_readdirplus_async);
}

Awaitable<nfs3::FsstatRes> Forwarder::fsstat(const CallContext& ctx, nfs3::FsstatArgs args) {
  ::FSSTAT3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::FsstatRes, ::FSSTAT3res>(
      *pool_, spec_of(Proc::Fsstat, ctx, args), &a, &rpc_nfs3_fsstat_async);
}

Awaitable<nfs3::FsinfoRes> Forwarder::fsinfo(const CallContext& ctx, nfs3::FsinfoArgs args) {
  ::FSINFO3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::FsinfoRes, ::FSINFO3res>(
      *pool_, spec_of(Proc::Fsinfo, ctx, args), &a, &rpc_nfs3_fsinfo_async);
}

Awaitable<nfs3::PathconfRes> Forwarder::pathconf(const CallContext& ctx, nfs3::PathconfArgs args) {
  ::PATHCONF3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::PathconfRes, ::PATHCONF3res>(
      *pool_, spec_of(Proc::Pathconf, ctx, args), &a, &rpc_nfs3_pathconf_async);
}

Awaitable<nfs3::CommitRes> Forwarder::commit(const CallContext& ctx, nfs3::CommitArgs args) {
  ::COMMIT3args a;
  convert::to_libnfs(args, a);
  co_return co_await forward<nfs3::CommitRes, ::COMMIT3res>(
      *pool_, spec_of(Proc::Commit, ctx, args), &a, &rpc_nfs3_commit_async);
}

}  // namespace nfsgw::upstream
