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
//
// An origin can also freeze: its process stuck while its kernel keeps the TCP
// connection open and even accepts new ones. A watchdog timer (origin_timeout)
// declares the connection dead when its oldest unanswered call has waited that
// long and no reply at all came in meanwhile (so a slow link that keeps
// delivering replies, or a deep queue draining, is not cut); the connection is
// then failed exactly like a lost one (torn down, its calls handed back,
// reconnected). A connection attempt (rpcbind GETPORT included) that does not
// complete within origin_timeout fails the same way. Origin sockets also get TCP
// keepalive and TCP_USER_TIMEOUT (origin_socket.h). The same timer, every
// kAbandonSweep while calls are in flight, abandons calls whose client has gone
// away (UpstreamCall::abandon).
//
// The calls themselves (waiting, inside libnfs, their AUTH_SYS identity) are the
// connection's CallQueue's (call_queue.h); the connection gives it its context
// while up and feeds it when libnfs's out-queue empties.
#pragma once

#include <utility>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "gateway/upstream/call_queue.h"
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

/// Settings of every connection of a pool.
struct UpstreamOptions {
  /// See the top of this file and [[export]] origin_timeout.
  std::chrono::milliseconds origin_timeout{60000};
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
  /// A connection up this long counts as working even if no call was answered on
  /// it (an idle gateway); one dropped sooner, before any reply, is a failed attempt.
  static constexpr std::chrono::seconds kTrustAfter{10};

  /// How often, at most, calls of callers that went away are looked for.
  static constexpr std::chrono::milliseconds kAbandonSweep{100};

  UpstreamConnection(boost::asio::io_context& io, Endpoint endpoint, std::size_t index,
                     std::shared_ptr<ConnectionListener> listener,
                     UpstreamOptions options = {});
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
  int load() const { return calls_.load(); }
  std::size_t index() const { return index_; }

 private:
  enum class State { Idle, AskingPort, Connecting, Up, Stopped };

  static void on_connect_cb(struct rpc_context* rpc, int status, void* data, void* self);
  static void on_getport_cb(struct rpc_context* rpc, int status, void* data, void* self);

  void begin_attempt();
  void connect_to(std::uint16_t port);
  bool watch_new_context();
  void arm();
  void on_ready(std::uint64_t generation, int event, const boost::system::error_code& ec);
  void after_service(int rc);
  void fail(const std::string& reason);
  void teardown();
  void schedule_retry();
  /// The connection works: the failed attempts and the backoff start over.
  void start_over();
  /// The origin answered a call on this connection: it is alive.
  void origin_answered();
  /// Gives the calls lost with the connection, then those never sent, back to the
  /// listener (or, without one, answers them JUKEBOX).
  void hand_back_calls();
  void bounce(CallQueue::Calls calls);
  void start_call(std::unique_ptr<UpstreamCall> call);
  /// Lets the call queue hand calls to libnfs; watches for what they need.
  void feed();
  void stop_on_strand();
  void arm_watchdog();
  void on_watchdog();

  boost::asio::io_context& io_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::posix::stream_descriptor socket_;
  boost::asio::steady_timer retry_timer_;
  boost::asio::steady_timer watchdog_;
  Endpoint endpoint_;
  UpstreamOptions options_;
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
  /// Failed attempts since the origin last answered (or a connection stayed up
  /// kTrustAfter): while above 0, even a connection that is up is only an attempt.
  unsigned failures_in_a_row_ = 0;
  std::chrono::steady_clock::time_point last_reply_{};      // any reply on this context
  std::chrono::steady_clock::time_point attempt_started_{};  // AskingPort / Connecting
  std::chrono::steady_clock::time_point last_sweep_{};
  bool watchdog_armed_ = false;
  std::chrono::steady_clock::time_point watchdog_due_{};
  std::uint64_t watchdog_generation_ = 0;  // a re-armed timer's old wait ignores itself

  /// The calls given to this connection; its rpc_context while up.
  CallQueue calls_;
};

}  // namespace nfsgw::upstream
