// One client TCP connection: reads record-marked calls, runs many of them at once,
// and writes replies in whatever order they complete.
#pragma once

#include <utility>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "gateway/awaitable.h"
#include "gateway/rpc/dispatcher.h"

namespace nfsgw::server {

struct ConnectionLimits {
  std::size_t max_record_bytes = 4u << 20;
  std::size_t max_calls_in_flight = 128;  // reading pauses above this
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, const rpc::Dispatcher& dispatcher,
             ConnectionLimits limits);

  /// Starts the read loop; the connection keeps itself alive until closed.
  void start();
  /// Closes the socket; in-flight calls complete and their replies are dropped.
  void close();

 private:
  Awaitable<void> read_loop();
  Awaitable<void> serve_call(std::vector<std::uint8_t> record);
  Awaitable<void> write_loop();
  void queue_reply(std::vector<std::uint8_t> reply);

  boost::asio::ip::tcp::socket socket_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  const rpc::Dispatcher& dispatcher_;
  ConnectionLimits limits_;
  std::string peer_;

  // Guarded by strand_.
  std::size_t in_flight_ = 0;
  boost::asio::steady_timer call_done_;  // wakes the read loop when a slot frees
  std::deque<std::vector<std::uint8_t>> replies_;
  bool writing_ = false;
  bool closed_ = false;
};

}  // namespace nfsgw::server
