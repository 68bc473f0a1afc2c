#include "tools/wan-emu/control_server.h"

#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <memory>

namespace nfsgw::wanemu {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// One control client: read a line, answer it, repeat until the client closes.
class ControlConnection : public std::enable_shared_from_this<ControlConnection> {
 public:
  ControlConnection(asio::ip::tcp::socket s, const ControlServer::Handler& h, std::function<void()> on_stop)
      : socket_(std::move(s)), in_(ControlServer::kMaxLine), handler_(h), on_stop_(std::move(on_stop)) {}

  void read() {
    asio::async_read_until(socket_, in_, '\n', [self = shared_from_this()](const error_code& ec, std::size_t n) {
      self->on_line(ec, n);
    });
  }

 private:
  void on_line(const error_code& ec, std::size_t n) {
    if (ec == asio::error::not_found) {  // line longer than kMaxLine
      reply({"error line too long", false}, /*then_close=*/true);
      return;
    }
    if (ec) return;  // client went away
    std::string line(asio::buffers_begin(in_.data()), asio::buffers_begin(in_.data()) + n);
    in_.consume(n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    reply(handler_(line), false);
  }

  void reply(ControlReply r, bool then_close) {
    out_ = std::move(r.line);
    out_ += '\n';
    bool stop = r.stop_after;
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this(), stop, then_close](const error_code& ec, std::size_t) {
                        if (stop) {
                          error_code ignored;
                          self->socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
                          self->on_stop_();
                          return;
                        }
                        if (!ec && !then_close) self->read();
                      });
  }

  asio::ip::tcp::socket socket_;
  asio::streambuf in_;
  std::string out_;
  ControlServer::Handler handler_;
  std::function<void()> on_stop_;
};

}  // namespace

ControlServer::ControlServer(asio::any_io_executor ex, const tcp::endpoint& listen, Handler handler,
                             std::function<void()> on_stop)
    : acceptor_(ex), handler_(std::move(handler)), on_stop_(std::move(on_stop)) {
  acceptor_.open(listen.protocol());
  acceptor_.set_option(tcp::acceptor::reuse_address(true));
  acceptor_.bind(listen);
  acceptor_.listen(64);
}

void ControlServer::stop() {
  error_code ignored;
  acceptor_.close(ignored);
}

void ControlServer::accept() {
  acceptor_.async_accept([this](const error_code& ec, tcp::socket s) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) std::make_shared<ControlConnection>(std::move(s), handler_, on_stop_)->read();
    accept();
  });
}

}  // namespace nfsgw::wanemu
