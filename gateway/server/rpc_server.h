// Accepts TCP connections on one or more ports and hands each to a Connection.
#pragma once

#include <utility>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "gateway/server/connection.h"

namespace nfsgw::server {

class RpcServer {
 public:
  RpcServer(boost::asio::io_context& io, const rpc::Dispatcher& dispatcher,
            ConnectionLimits limits);

  /// Binds and starts accepting. Throws boost::system::system_error when the
  /// address cannot be bound. Returns the bound port (useful when `port` is 0).
  std::uint16_t listen(const std::string& address, std::uint16_t port);
  /// Stops accepting and closes every connection.
  void stop();

 private:
  Awaitable<void> accept_loop(boost::asio::ip::tcp::acceptor& acceptor);

  boost::asio::io_context& io_;
  const rpc::Dispatcher& dispatcher_;
  ConnectionLimits limits_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
  std::mutex mu_;
  std::vector<std::weak_ptr<Connection>> connections_;
};

}  // namespace nfsgw::server
