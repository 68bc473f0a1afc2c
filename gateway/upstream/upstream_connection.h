// One TCP connection to an origin RPC program (NFS or MOUNT), driven by Asio.
//
// libnfs 4.0 is not thread-safe, so each connection owns one rpc_context and
// touches it only on its own strand. The context's socket is watched with a
// stream_descriptor (async_wait for read / write as rpc_which_events() asks) and
// rpc_service() runs when it is ready. Many calls may be in flight at once.
//
// One rpc_context lives exactly as long as one socket: libnfs's own reconnect is
// left off, and after any failure the context is destroyed and a fresh one made
// after a backoff delay (100 ms doubling to 2 s). This keeps Asio's registration
// and libnfs's fd in step (the descriptor is released, never closed, since the fd
// belongs to libnfs). With port 0 the program's port is asked from the origin's
// rpcbind (on a separate short-lived context) before every connection attempt.
//
// Calls the connection could not finish because it died are handed back to the
// listener (the pool), which decides between re-sending and answering JUKEBOX.
#pragma once

#include <utility>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "gateway/upstream/upstream_call.h"

namespace nfsgw::upstream {

/// Where an origin program lives.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;  // 0: ask the host's rpcbind for (program, version)/TCP
  std::uint32_t program = 0;
  std::uint32_t version = 0;
  /// For logs, e.g. "NFS 127.0.0.1:2049".
  std::string label() const;
};

/// What a connection tells its owner. Called on the connection's strand.
class ConnectionListener {
 public:
  virtual ~ConnectionListener() = default;
  virtual void connection_up(std::size_t index) = 0;
  virtual void connection_down(std::size_t index) = 0;
  /// Calls that were queued on a connection that then died: the origin may or
  /// may not have executed them.
  virtual void calls_lost(std::vector<std::unique_ptr<UpstreamCall>> calls) = 0;
  /// Calls that reached a connection that was no longer up: never sent anywhere.
  virtual void calls_bounced(std::vector<std::unique_ptr<UpstreamCall>> calls) = 0;
};

class UpstreamConnection : public std::enable_shared_from_this<UpstreamConnection> {
 public:
  static constexpr std::chrono::milliseconds kMinBackoff{100};
  static constexpr std::chrono::milliseconds kMaxBackoff{2000};

  UpstreamConnection(boost::asio::io_context& io, Endpoint endpoint, std::size_t index,
                     std::shared_ptr<ConnectionListener> listener);
  ~UpstreamConnection();
  UpstreamConnection(const UpstreamConnection&) = delete;
  UpstreamConnection& operator=(const UpstreamConnection&) = delete;

  /// Begins connecting (in the background; retries forever with backoff).
  void start();
  /// Closes the connection; calls still inside are handed to the listener, which
  /// is then forgotten. Safe from any thread, also from a call's completion.
  void stop();
  /// Queues `call` on this connection (posted to its strand). If the connection is
  /// not up by then, the call goes back to the listener untouched.
  void execute(std::unique_ptr<UpstreamCall> call);

  /// Calls assigned to this connection and not answered yet (for load spreading).
  int load() const { return load_.load(std::memory_order_relaxed); }
  std::size_t index() const { return index_; }

 private:
  enum class State { Idle, AskingPort, Connecting, Up, Stopped };

  static void on_connect_cb(struct rpc_context* rpc, int status, void* data, void* self);
  static void on_getport_cb(struct rpc_context* rpc, int status, void* data, void* self);
  static void on_call_cb(struct rpc_context* rpc, int status, void* data, void* call);

  void begin_attempt();
  void connect_to(std::uint16_t port);
  bool watch_new_context();
  void arm();
  void on_ready(std::uint64_t generation, int event, const boost::system::error_code& ec);
  void after_service(int rc);
  void fail(const std::string& reason);
  void teardown();
  void schedule_retry();
  void hand_back_orphans();
  void bounce(std::unique_ptr<UpstreamCall> call);
  void start_call(std::unique_ptr<UpstreamCall> call);
  void apply_credentials(const UpstreamCall& call);
  void stop_on_strand();

  boost::asio::io_context& io_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::posix::stream_descriptor socket_;
  boost::asio::steady_timer retry_timer_;
  Endpoint endpoint_;
  std::size_t index_;
  std::shared_ptr<ConnectionListener> listener_;

  // Everything below is touched only on strand_.
  struct rpc_context* rpc_ = nullptr;
  State state_ = State::Idle;
  std::uint64_t generation_ = 0;  // bumps with each rpc_context; stale waits ignore themselves
  bool read_armed_ = false;
  bool write_armed_ = false;
  bool connect_done_ = false;     // set by the connect callback, acted on after rpc_service
  bool connect_ok_ = false;
  int found_port_ = -1;           // set by the getport callback: >0 port, 0 not registered
  std::chrono::milliseconds backoff_ = kMinBackoff;
  unsigned failures_in_a_row_ = 0;
  bool auth_is_default_ = true;
  Credentials auth_cred_;         // what the context's AUTH currently says
  std::vector<std::unique_ptr<UpstreamCall>> orphans_;

  std::atomic<int> load_{0};
};

}  // namespace nfsgw::upstream
