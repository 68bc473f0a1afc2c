#include "tools/wan-emu/control_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include "tools/wan-emu/control_server.h"

namespace nfsgw::wanemu {

namespace asio = boost::asio;
using boost::system::error_code;

ControlAnswer send_control_command(const asio::ip::tcp::endpoint& ep, const std::string& command,
                                   std::chrono::milliseconds timeout) {
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  asio::streambuf in(1u << 24);
  std::string out = command + "\n";
  ControlAnswer answer{false, "timed out"};

  s.async_connect(ep, [&](const error_code& ec) {
    if (ec) {
      answer.line = "connect: " + ec.message();
      return;
    }
    asio::async_write(s, asio::buffer(out), [&](const error_code& wec, std::size_t) {
      if (wec) {
        answer.line = "send: " + wec.message();
        return;
      }
      asio::async_read_until(s, in, '\n', [&](const error_code& rec, std::size_t n) {
        if (rec) {
          answer.line = "receive: " + rec.message();
          return;
        }
        std::string line(asio::buffers_begin(in.data()), asio::buffers_begin(in.data()) + n);
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
        answer.ok = line.rfind("error", 0) != 0;
        answer.line = std::move(line);
      });
    });
  });
  io.run_for(timeout);
  return answer;
}

}  // namespace nfsgw::wanemu
