// The bottom layer of nfsgw's stack: every NFSv3 procedure forwarded to the origin.
//
// Handles in and out are the ORIGIN's handles (the layer above translates client
// handles). Each call goes out with the caller's AUTH_SYS identity (ctx.cred, after
// the export's squash rule), never the gateway's, so the origin's permission checks
// apply to the real user. Answers never throw: a lost origin makes idempotent calls
// wait and non-idempotent ones answer NFS3ERR_JUKEBOX (see upstream_pool.h); an
// origin RPC-level failure answers NFS3ERR_SERVERFAULT, a rejected credential
// NFS3ERR_ACCES; an origin that stops answering for origin_timeout counts as lost.
// A call whose client has gone away (CallContext::caller_gone) is abandoned.
// Every such status nfsgw makes up (and INVAL for a name with a NUL,
// which libnfs cannot send) comes with gateway_status set in the result; an answer
// the origin gave never has it.
#pragma once

#include <utility>

#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "gateway/nfs3_program.h"

namespace nfsgw::upstream {

class UpstreamPool;
class OriginMount;

class Forwarder : public Nfs3Program {
 public:
  /// Uses export.origin (host, ports, path), export.upstream_connections and
  /// export.origin_timeout.
  Forwarder(boost::asio::io_context& io, const config::ExportConfig& export_config);
  ~Forwarder() override;
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  /// Starts connecting and mounting in the background; never fails.
  void start();
  /// Closes every connection. Calls not answered yet get NFS3ERR_JUKEBOX.
  void stop();

  /// The origin export's root handle; waits until the origin has answered MNT.
  /// Empty only after stop().
  Awaitable<nfs3::FileHandle> root_handle();
  /// NFS connections currently up (for status and tests).
  std::size_t connections_up() const;

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

 private:
  std::shared_ptr<UpstreamPool> pool_;
  std::shared_ptr<OriginMount> mount_;
};

}  // namespace nfsgw::upstream
