// N connections to one origin program, like the Linux client's nconnect.
//
// Calls go to the least-loaded connection that is up; while none is up they wait
// in the pool, however long that takes (an origin that is down at start-up, or
// restarting, makes callers wait, not fail: the behaviour of a hard mount).
//
// When a connection dies with calls in flight, the pool cannot know whether the
// origin executed them. Idempotent calls (decided once, in kNfs3Procedures of
// gateway/rpc/nfs3_procedure_info.h: NULL, GETATTR, LOOKUP, ACCESS, READLINK,
// READ, READDIR, READDIRPLUS, FSSTAT, FSINFO, PATHCONF, COMMIT, WRITE, SETATTR
// without a guard) are simply sent again on the next connection up: executing
// them twice gives the same result. Non-idempotent ones (CREATE, MKDIR, SYMLINK,
// MKNOD, REMOVE, RMDIR, RENAME, LINK, guarded SETATTR) are answered NFS3ERR_JUKEBOX
// instead: re-sending blindly could turn a success into EXIST/NOENT, while JUKEBOX
// makes the NFS client retry the call itself after a pause, the same outcome a
// client sees from a server that rebooted. Calls that never left the gateway
// (still waiting, or bounced off a connection that had just gone down) are always
// sent once a connection is up.
//
// A frozen origin (TCP open, no replies) is a lost connection too: after
// origin_timeout without any reply the connection closes itself (see
// upstream_connection.h), and its calls come here like those of any dead
// connection: re-sent if idempotent, JUKEBOX otherwise. While the origin stays
// frozen, an idempotent call is re-sent once per origin_timeout, as a hard mount
// retransmits.
//
// Work for a client that has gone away (UpstreamCall::caller_left) is abandoned,
// not re-sent and not kept waiting: its caller is answered JUKEBOX at once (the
// reply is dropped with the closed connection), which frees the waiting coroutine
// and what it holds. This is checked when a call is submitted, bounced or lost,
// when the waiting queue grows, and every UpstreamConnection::kAbandonSweep for
// calls given to a connection (those not yet handed to libnfs are freed whole).
#pragma once

#include <utility>

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "gateway/upstream/upstream_call.h"
#include "gateway/upstream/upstream_connection.h"

namespace nfsgw::upstream {

class UpstreamPool : public ConnectionListener,
                     public std::enable_shared_from_this<UpstreamPool> {
 public:
  /// `connections` is clamped to at least 1.
  UpstreamPool(boost::asio::io_context& io, Endpoint endpoint, unsigned connections,
               UpstreamOptions options = {});
  ~UpstreamPool() override;

  /// Starts connecting all connections in the background.
  void start();
  /// Closes all connections; every call not answered yet is answered
  /// NFS3ERR_JUKEBOX (the gateway is going away; the client retries elsewhere).
  /// Later submissions are answered the same way.
  void stop();
  /// Sends `call` (now or once a connection is up). Safe from any thread.
  void submit(std::unique_ptr<UpstreamCall> call);

  /// Connections currently up (for tests and status pages).
  std::size_t connections_up() const;
  const Endpoint& endpoint() const { return endpoint_; }

  // ConnectionListener
  void connection_up(std::size_t index) override;
  void connection_down(std::size_t index) override;
  void calls_lost(std::vector<std::unique_ptr<UpstreamCall>> calls) override;
  void calls_bounced(std::vector<std::unique_ptr<UpstreamCall>> calls) override;

 private:
  void dispatch(std::vector<std::unique_ptr<UpstreamCall>> calls);
  /// Takes the calls of callers that went away out of waiting_ (under mu_).
  std::vector<std::unique_ptr<UpstreamCall>> take_abandoned_waiting();

  boost::asio::io_context& io_;
  Endpoint endpoint_;
  unsigned count_;
  UpstreamOptions options_;

  mutable std::mutex mu_;
  std::vector<std::shared_ptr<UpstreamConnection>> connections_;
  std::vector<bool> up_;
  std::deque<std::unique_ptr<UpstreamCall>> waiting_;
  std::size_t sweep_waiting_at_ = kFirstWaitingSweep;  // waiting_ size of the next sweep
  static constexpr std::size_t kFirstWaitingSweep = 64;
  std::size_t next_ = 0;  // round-robin start, so equal loads still spread
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace nfsgw::upstream
