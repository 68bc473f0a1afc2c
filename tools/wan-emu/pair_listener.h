// Accepts connections on one listen address of a --pair and relays each to the
// pair's target through a RelaySession. While the link is cut, connections are
// accepted and closed at once, so clients see the origin as unreachable right away
// instead of hanging in the listen backlog.
#pragma once

#include <utility>  // must precede Asio with Boost 1.74 under C++20

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "tools/wan-emu/link_state.h"

namespace nfsgw::wanemu {

class PairListener {
 public:
  using tcp = boost::asio::ip::tcp;

  /// Binds and listens at once (throws boost::system::system_error on failure).
  PairListener(boost::asio::any_io_executor ex, const tcp::endpoint& listen, const tcp::endpoint& target,
               std::shared_ptr<LinkState> link);

  void start() { accept(); }
  void stop();
  tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

 private:
  void accept();

  tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_;  // after an accept error (e.g. out of descriptors)
  tcp::endpoint target_;
  std::shared_ptr<LinkState> link_;
};

}  // namespace nfsgw::wanemu
