// The admin socket: a Unix stream socket (mode 0600) on which `nfsgw stats` and
// `nfsgw invalidate` talk to the running gateway, with the line protocol of
// admin_protocol.h.
//
// Connections are served on the gateway's io_context; the commands themselves run
// on one worker thread of the server's own, one at a time, because they may block
// on the disk. The gateway puts the socket at `<[cache] dir>/admin.sock`
// (admin_socket_path()).
//
//   admin::AdminServer admin(io, admin::admin_socket_path(cfg.cache.dir), commands);
//   admin.start();   // throws when the socket cannot be made or is in use
//   ...
//   admin.stop();    // or the destructor
#pragma once

#include <utility>  // Boost 1.74's Asio needs it before its own headers under C++20

#include <memory>
#include <string>

#include <boost/asio.hpp>

#include "gateway/admin/admin_commands.h"
#include "gateway/admin/admin_session.h"
#include "gateway/admin/socket_file.h"

namespace nfsgw::admin {

class AdminServer {
 public:
  /// `io` and `commands` must outlive the server (`commands` is called until
  /// stop() returns).
  AdminServer(boost::asio::io_context& io, std::string socket_path, AdminCommands& commands,
              AdminLimits limits = {});
  /// stop()
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  /// Creates the socket with mode 0600 and starts accepting. A socket file left by
  /// a dead process is replaced; throws std::runtime_error when a live server
  /// answers on it, when the path holds something else, or when bind fails.
  /// Once only.
  void start();
  /// Stops accepting, closes the connections, removes the socket file, and waits
  /// for a command in progress to finish. Idempotent; safe from an io thread.
  void stop();

  const std::string& socket_path() const { return path_; }
  /// Commands waiting for the one running (none before start()).
  std::size_t queued_commands() const;

 private:
  using Acceptor = boost::asio::local::stream_protocol::acceptor;

  boost::asio::io_context& io_;
  std::string path_;
  std::shared_ptr<AdminContext> ctx_;
  std::shared_ptr<Acceptor> acceptor_;
  FileId file_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace nfsgw::admin
