// One admin connection: read the request line (bounded, with a deadline), run it
// on the worker thread, write the reply, close.
#pragma once

#include <utility>  // Boost 1.74's Asio needs it before its own headers under C++20

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "gateway/admin/admin_commands.h"
#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/command_worker.h"
#include "gateway/awaitable.h"

namespace nfsgw::admin {

struct AdminLimits {
  std::size_t max_request_bytes = kMaxRequestBytes;
  /// To receive the request line, and again to send the reply. The command itself
  /// is not timed: a large recursive invalidate may take a while.
  std::chrono::milliseconds io_timeout{10'000};
  /// Connections beyond this are answered `error` at once and closed.
  unsigned max_connections = 4;
  /// How often a running warm or flush reports its progress.
  std::chrono::milliseconds progress_interval{1000};
};

class AdminSession;

/// What the server and its sessions share. Sessions hold it by shared_ptr, so a
/// session finishing after the server has stopped touches nothing freed.
struct AdminContext {
  AdminContext(AdminCommands& c, AdminLimits l) : commands(c), limits(l) {}
  AdminCommands& commands;  // only called on `worker`, which stops with the server
  const AdminLimits limits;
  std::unique_ptr<CommandWorker> worker;  // set before the first session starts
  std::atomic<unsigned> active{0};        // sessions alive

  std::mutex mu;  // guards sessions
  std::vector<std::weak_ptr<AdminSession>> sessions;
};

class AdminSession : public std::enable_shared_from_this<AdminSession> {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;

  /// The caller has counted this session in `ctx->active`; the destructor uncounts it.
  AdminSession(Socket socket, std::shared_ptr<AdminContext> ctx);
  ~AdminSession();
  AdminSession(const AdminSession&) = delete;
  AdminSession& operator=(const AdminSession&) = delete;

  void start();
  /// Closes the connection (from any thread); a running command still finishes,
  /// a running warm is cancelled.
  void close();

 private:
  Awaitable<void> run();
  Awaitable<std::string> execute(Request request);
  /// Receives the request line into `buffer_`: the request, or the reply to send
  /// instead (empty: close without one).
  Awaitable<std::optional<Request>> receive(std::string& reply);
  /// Writes `bytes` within the io timeout; false when that failed.
  Awaitable<bool> send(std::string bytes);
  /// A warm: reads its manifest lines, starts it, streams its progress, then the
  /// summary and the status line.
  Awaitable<void> run_warm(WarmRequest request);
  /// A flush: starts it, streams its progress, then the summary and the status
  /// line. It goes on in the gateway when the client goes away.
  Awaitable<void> run_flush(FlushRequest request);
  /// Reads the manifest lines after the request line into `request.manifest`;
  /// the reply to send instead when that fails.
  Awaitable<std::optional<std::string>> receive_manifest(WarmRequest& request);
  void arm(std::chrono::milliseconds timeout);
  void disarm();

  std::shared_ptr<AdminContext> ctx_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  Socket socket_;
  boost::asio::steady_timer timer_;
  unsigned timer_generation_ = 0;
  bool timed_out_ = false;
  bool closed_ = false;
  std::string buffer_;  // what was received and not consumed yet
  // A warm in progress (on the strand): its counters, the timer its progress
  // lines wait on (cancelled when it ends), and its outcome once it has ended.
  std::shared_ptr<warm::WarmProgress> warm_progress_;
  boost::asio::steady_timer warm_timer_;
  std::optional<warm::WarmOutcome> warm_done_;
  // A flush in progress (on the strand): its outcome once it has ended; its
  // progress lines wait on warm_timer_ too.
  std::optional<writeback::FlushOutcome> flush_done_;
};

}  // namespace nfsgw::admin
