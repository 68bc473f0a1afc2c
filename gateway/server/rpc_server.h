// Accepts TCP connections on one or more ports and hands each to a Connection,
// and sweeps them for idleness (ConnectionLimits::idle_timeout).
#pragma once

#include <utility>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "gateway/server/call_budget.h"
#include "gateway/server/connection.h"

namespace nfsgw::server {

/// What one connection may hold, and what all of them together may.
struct ServerLimits {
  ConnectionLimits connection;
  std::size_t max_connections = 1024;
  std::size_t max_calls_in_flight_total = 4096;
  std::size_t max_pending_bytes_total = 256u << 20;
};

class RpcServer {
 public:
  /// `clock` measures idleness and paces the refusal log; it must outlive the
  /// server and its connections.
  RpcServer(boost::asio::io_context& io, const rpc::Dispatcher& dispatcher, ServerLimits limits,
            const cache::MonotonicClock& clock = cache::monotonic_clock());

  /// Binds and starts accepting. Throws boost::system::system_error when the
  /// address cannot be bound. Returns the bound port (useful when `port` is 0).
  std::uint16_t listen(const std::string& address, std::uint16_t port);
  /// Stops accepting, stops the idle sweeps and closes every connection.
  void stop();
  /// Reads the clock once and closes the connections idle for longer than
  /// idle_timeout. A timer does this every idle_sweep_period(); a test that moves
  /// the clock calls it itself.
  void sweep_idle();
  /// How often the idle sweep runs: an eighth of idle_timeout, within 10 ms..1 s.
  /// A connection is closed between idle_timeout and idle_timeout plus two periods
  /// after it went quiet.
  std::chrono::milliseconds idle_sweep_period() const;

  /// Connections open, calls in flight and bytes held, over all connections.
  CallBudget::Usage usage() const { return budget_->usage(); }

 private:
  Awaitable<void> accept_loop(boost::asio::ip::tcp::acceptor& acceptor);
  Awaitable<void> idle_sweep_loop();
  /// Closes a connection above max_connections, saying so at most every few seconds.
  void refuse(boost::asio::ip::tcp::socket& socket);

  boost::asio::io_context& io_;
  const rpc::Dispatcher& dispatcher_;
  const ServerLimits limits_;
  std::shared_ptr<CallBudget> budget_;
  const cache::MonotonicClock& clock_;
  const std::shared_ptr<ActivityClock> activity_clock_;
  // The idle sweep's loop runs on its own strand; its timer runs on real time, as
  // it only paces the sweeps (what is idle is decided by clock_).
  boost::asio::strand<boost::asio::io_context::executor_type> sweep_strand_;
  boost::asio::steady_timer sweep_timer_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
  std::mutex mu_;
  std::vector<std::weak_ptr<Connection>> connections_;
  // Guarded by mu_: whether stop() was called, refusals not yet logged, and when
  // the last log line was.
  std::size_t refused_unlogged_ = 0;
  bool stopped_ = false;
  cache::MonotonicClock::time_point last_refusal_log_{};
};

}  // namespace nfsgw::server
