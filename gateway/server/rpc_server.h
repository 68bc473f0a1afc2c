// Accepts TCP connections on one or more ports and hands each to a Connection.
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
  RpcServer(boost::asio::io_context& io, const rpc::Dispatcher& dispatcher, ServerLimits limits);

  /// Binds and starts accepting. Throws boost::system::system_error when the
  /// address cannot be bound. Returns the bound port (useful when `port` is 0).
  std::uint16_t listen(const std::string& address, std::uint16_t port);
  /// Stops accepting and closes every connection.
  void stop();

  /// Connections open, calls in flight and bytes held, over all connections.
  CallBudget::Usage usage() const { return budget_->usage(); }

 private:
  Awaitable<void> accept_loop(boost::asio::ip::tcp::acceptor& acceptor);
  /// Closes a connection above max_connections, saying so at most every few seconds.
  void refuse(boost::asio::ip::tcp::socket& socket);

  boost::asio::io_context& io_;
  const rpc::Dispatcher& dispatcher_;
  const ServerLimits limits_;
  std::shared_ptr<CallBudget> budget_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
  std::mutex mu_;
  std::vector<std::weak_ptr<Connection>> connections_;
  // Guarded by mu_: refusals not yet logged, and when the last log line was.
  std::size_t refused_unlogged_ = 0;
  std::chrono::steady_clock::time_point last_refusal_log_{};
};

}  // namespace nfsgw::server
