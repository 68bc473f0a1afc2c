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
  UpstreamPool(boost::asio::io_context& io, Endpoint endpoint, unsigned connections);
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

  boost::asio::io_context& io_;
  Endpoint endpoint_;
  unsigned count_;

  mutable std::mutex mu_;
  std::vector<std::shared_ptr<UpstreamConnection>> connections_;
  std::vector<bool> up_;
  std::deque<std::unique_ptr<UpstreamCall>> waiting_;
  std::size_t next_ = 0;  // round-robin start, so equal loads still spread
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace nfsgw::upstream
