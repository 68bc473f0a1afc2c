// A blocking RPC-over-TCP test client on its own io_context, with a deadline on
// every read so a server that never answers fails the test instead of hanging it.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include <boost/asio.hpp>

namespace nfsgw::test {

class LoopbackClient {
 public:
  /// `receive_buffer` > 0 sets SO_RCVBUF before connecting (a client that reads
  /// little, with no room for the server's replies to pile up on its side).
  explicit LoopbackClient(std::uint16_t port, int receive_buffer = 0) : socket_(io_) {
    socket_.open(boost::asio::ip::tcp::v4());
    if (receive_buffer > 0)
      socket_.set_option(boost::asio::socket_base::receive_buffer_size(receive_buffer));
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    socket_.set_option(boost::asio::ip::tcp::no_delay(true));
  }

  void send(const std::vector<std::uint8_t>& bytes) {
    boost::asio::write(socket_, boost::asio::buffer(bytes));
  }
  /// Shuts the sending side (the server reads a FIN); replies can still be read.
  void shutdown_send() { socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_send); }

  struct ReadResult {
    bool timed_out = false;
    boost::system::error_code ec;
    std::vector<std::uint8_t> bytes;
  };

  /// Reads exactly n bytes, or stops at an error or at the deadline.
  ReadResult read_exact(std::size_t n, std::chrono::seconds timeout = std::chrono::seconds(10)) {
    ReadResult out;
    out.bytes.resize(n);
    bool done = false;
    boost::asio::async_read(socket_, boost::asio::buffer(out.bytes),
                            [&](const boost::system::error_code& ec, std::size_t) {
                              out.ec = ec;
                              done = true;
                            });
    io_.restart();
    io_.run_for(timeout);
    if (!done) {
      out.timed_out = true;
      boost::system::error_code ignored;
      socket_.cancel(ignored);
      io_.restart();
      io_.run();
    }
    return out;
  }

  /// One reply record, record mark included (for parse_reply); nullopt when the
  /// connection ended or nothing came before the deadline. Single-fragment replies
  /// only, which is what nfsgw sends.
  std::optional<std::vector<std::uint8_t>> read_record(
      std::chrono::seconds timeout = std::chrono::seconds(10)) {
    ReadResult mark = read_exact(4, timeout);
    if (mark.timed_out || mark.ec) return std::nullopt;
    const std::uint32_t m = (std::uint32_t{mark.bytes[0]} << 24) |
                            (std::uint32_t{mark.bytes[1]} << 16) |
                            (std::uint32_t{mark.bytes[2]} << 8) | mark.bytes[3];
    const std::size_t len = m & 0x7FFFFFFFu;
    if (len > (16u << 20)) return std::nullopt;
    ReadResult body = read_exact(len);
    if (body.timed_out || body.ec) return std::nullopt;
    std::vector<std::uint8_t> rec = std::move(mark.bytes);
    rec.insert(rec.end(), body.bytes.begin(), body.bytes.end());
    return rec;
  }

  /// True when the server ended the connection (EOF or reset) before the deadline.
  bool closed_by_peer() {
    const ReadResult r = read_exact(1);
    return !r.timed_out &&
           (r.ec == boost::asio::error::eof || r.ec == boost::asio::error::connection_reset);
  }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

/// `record` preceded by a record mark for one last fragment.
inline std::vector<std::uint8_t> with_record_mark(const std::vector<std::uint8_t>& record) {
  const std::uint32_t m = 0x80000000u | static_cast<std::uint32_t>(record.size());
  std::vector<std::uint8_t> out = {static_cast<std::uint8_t>(m >> 24),
                                   static_cast<std::uint8_t>(m >> 16),
                                   static_cast<std::uint8_t>(m >> 8), static_cast<std::uint8_t>(m)};
  out.insert(out.end(), record.begin(), record.end());
  return out;
}

}  // namespace nfsgw::test
