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
#define NFSGW_FORWARDER_DECLARE(method, P, Res, Args) \
  Awaitable<nfs3::Res> method(const CallContext& ctx, nfs3::Args args) override;
  NFSGW_NFS3_PROCEDURES(NFSGW_FORWARDER_DECLARE)
#undef NFSGW_FORWARDER_DECLARE

 private:
  std::shared_ptr<UpstreamPool> pool_;
  std::shared_ptr<OriginMount> mount_;
};

}  // namespace nfsgw::upstream
