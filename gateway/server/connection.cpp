#include "gateway/server/connection.h"

#include <array>

#include <spdlog/spdlog.h>

#include "protocol/record_marking.h"

namespace nfsgw::server {

namespace asio = boost::asio;
using asio::use_awaitable;

namespace {

/// Client address without an IPv4-mapped prefix, so CIDR checks and logs read well.
std::string peer_address(const asio::ip::tcp::socket& s) {
  boost::system::error_code ec;
  auto ep = s.remote_endpoint(ec);
  if (ec) return "unknown";
  auto a = ep.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  return a.to_string();
}

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, const rpc::Dispatcher& dispatcher,
                       ConnectionLimits limits)
    : socket_(std::move(socket)),
      strand_(asio::make_strand(socket_.get_executor())),
      dispatcher_(dispatcher),
      limits_(limits),
      peer_(peer_address(socket_)),
      call_done_(strand_) {
  call_done_.expires_at(asio::steady_timer::time_point::max());
  boost::system::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

void Connection::start() {
  asio::co_spawn(strand_, [self = shared_from_this()] { return self->read_loop(); },
                 asio::detached);
}

void Connection::close() {
  asio::dispatch(strand_, [self = shared_from_this()] {
    if (self->closed_) return;
    self->closed_ = true;
    boost::system::error_code ec;
    self->socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    self->socket_.close(ec);
    self->call_done_.cancel();
  });
}

Awaitable<void> Connection::read_loop() {
  rpc::RecordAssembler assembler(limits_.max_record_bytes);
  std::array<std::uint8_t, 64 * 1024> buf;
  try {
    while (!closed_) {
      const std::size_t n = co_await socket_.async_read_some(asio::buffer(buf), use_awaitable);
      std::span<const std::uint8_t> in(buf.data(), n);
      while (!in.empty()) {
        const auto status = assembler.feed(in);
        if (status == rpc::RecordAssembler::Status::TooLarge) {
          spdlog::warn("{}: RPC record above {} bytes; closing the connection", peer_,
                       limits_.max_record_bytes);
          close();
          co_return;
        }
        if (status == rpc::RecordAssembler::Status::NeedMore) break;
        // Backpressure: a client may not have more than max_calls_in_flight calls here.
        while (in_flight_ >= limits_.max_calls_in_flight && !closed_) {
          boost::system::error_code ec;
          co_await call_done_.async_wait(asio::redirect_error(use_awaitable, ec));
        }
        if (closed_) co_return;
        ++in_flight_;
        // The call holds the connection alive until its reply is queued.
        asio::co_spawn(socket_.get_executor(),
                       [self = shared_from_this(), record = assembler.take_record()]() mutable {
                         return self->serve_call(std::move(record));
                       },
                       asio::detached);
      }
    }
  } catch (const boost::system::system_error& e) {
    if (e.code() != asio::error::eof) {
      if (e.code() != asio::error::operation_aborted && e.code() != asio::error::connection_reset)
        spdlog::debug("{}: read failed: {}", peer_, e.what());
      close();
      co_return;
    }
  }
  // The client closed its sending side: answer what it already asked, then close.
  while ((in_flight_ > 0 || writing_) && !closed_) {
    boost::system::error_code ec;
    co_await call_done_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  close();
}

Awaitable<void> Connection::serve_call(std::vector<std::uint8_t> record) {
  // Runs on the I/O pool, not the strand: calls of one connection proceed in parallel.
  // The caller holds a shared_ptr to this connection for the whole coroutine.
  auto self = shared_from_this();
  std::vector<std::uint8_t> reply;
  try {
    reply = co_await dispatcher_.dispatch(record, peer_);
  } catch (const std::exception& e) {
    spdlog::error("{}: call failed: {}", peer_, e.what());
  }
  asio::dispatch(strand_, [self, reply = std::move(reply)]() mutable {
    --self->in_flight_;
    self->call_done_.cancel_one();
    if (!reply.empty()) self->queue_reply(std::move(reply));
  });
}

void Connection::queue_reply(std::vector<std::uint8_t> reply) {
  if (closed_) return;
  replies_.push_back(std::move(reply));
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(strand_, [self = shared_from_this()] { return self->write_loop(); },
                   asio::detached);
  }
}

Awaitable<void> Connection::write_loop() {
  try {
    while (!replies_.empty() && !closed_) {
      // Gather whatever is queued into one write: fewer syscalls under load.
      std::vector<std::vector<std::uint8_t>> batch;
      std::vector<asio::const_buffer> buffers;
      while (!replies_.empty() && batch.size() < 64) {
        batch.push_back(std::move(replies_.front()));
        replies_.pop_front();
      }
      for (const auto& b : batch) buffers.emplace_back(asio::buffer(b));
      co_await asio::async_write(socket_, buffers, use_awaitable);
    }
  } catch (const boost::system::system_error& e) {
    spdlog::debug("{}: write failed: {}", peer_, e.what());
    close();
  }
  writing_ = false;
  call_done_.cancel_one();  // a read loop draining after EOF waits for the last write
}

}  // namespace nfsgw::server
