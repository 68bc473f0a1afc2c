// `wan-emu --ctl ADDR COMMAND`: sends one command line to a running emulator's control
// port and prints the one-line answer, so shell scripts and tests need no netcat.
#pragma once

#include <utility>  // must precede Asio with Boost 1.74 under C++20

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <string>

namespace nfsgw::wanemu {

struct ControlAnswer {
  bool ok = false;     // got an answer that does not start with "error"
  std::string line;    // the answer without its newline, or what went wrong
};

/// Bounded by `timeout` as a whole (connect, send, receive).
ControlAnswer send_control_command(const boost::asio::ip::tcp::endpoint& ep, const std::string& command,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace nfsgw::wanemu
