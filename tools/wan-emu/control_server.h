// The control port: a line-based text protocol over TCP. Each request is one line
// (at most kMaxLine bytes); each answer is one line. The meaning of the commands is
// not this file's business: a handler maps a request line to an answer line.
#pragma once

#include <utility>  // must precede Asio with Boost 1.74 under C++20

#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <string>

namespace nfsgw::wanemu {

struct ControlReply {
  std::string line;      // sent back, a newline is appended
  bool stop_after = false;  // `quit`: stop the emulator once the answer is sent
};

class ControlServer {
 public:
  using tcp = boost::asio::ip::tcp;
  using Handler = std::function<ControlReply(const std::string& request)>;
  static constexpr std::size_t kMaxLine = 4096;

  ControlServer(boost::asio::any_io_executor ex, const tcp::endpoint& listen, Handler handler,
                std::function<void()> on_stop);

  void start() { accept(); }
  void stop();
  tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

 private:
  void accept();

  tcp::acceptor acceptor_;
  Handler handler_;
  std::function<void()> on_stop_;
};

}  // namespace nfsgw::wanemu
