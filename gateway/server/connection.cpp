#include "gateway/server/connection.h"

#include <algorithm>
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
                       ConnectionLimits limits, std::shared_ptr<CallBudget> budget,
                       std::shared_ptr<const ActivityClock> clock)
    : socket_(std::move(socket)),
      strand_(asio::make_strand(socket_.get_executor())),
      dispatcher_(dispatcher),
      limits_(limits),
      budget_(std::move(budget)),
      clock_(std::move(clock)),
      peer_(peer_address(socket_)),
      call_done_(strand_),
      pause_(strand_) {
  call_done_.expires_at(asio::steady_timer::time_point::max());
  touch();
  boost::system::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

Connection::~Connection() {
  // Every call holds the connection alive until it is accounted for, so nothing is
  // left here; give back whatever is, all the same, so a slip cannot leak the budget.
  if (in_flight_ > 0 || held_bytes_ > 0) budget_->release(in_flight_, held_bytes_);
  budget_->close_connection();
}

void Connection::start() {
  asio::co_spawn(strand_, [self = shared_from_this()] { return self->read_loop(); },
                 asio::detached);
}

void Connection::close() {
  asio::dispatch(strand_, [self = shared_from_this()] {
    if (self->closed_) return;
    self->closed_ = true;
    self->gone_->raise();
    boost::system::error_code ec;
    self->socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    self->socket_.close(ec);
    // Replies not yet being written are dropped now; a batch being written is given
    // back by the write loop when its write fails.
    while (!self->replies_.empty()) {
      const std::size_t bytes = self->replies_.front().size();
      self->replies_.pop_front();
      self->release_call(bytes);
    }
    self->call_done_.cancel();
    self->pause_.cancel();
  });
}

void Connection::wake_reader() { call_done_.cancel(); }

void Connection::release_call(std::size_t bytes) {
  --in_flight_;
  held_bytes_ -= bytes;
  budget_->release(1, bytes);
  wake_reader();
}

Awaitable<bool> Connection::admit(std::size_t bytes) {
  for (;;) {
    waiting_for_server_ = false;
    if (closed_) co_return false;
    // The connection's own limits first; one call always fits when none is held.
    const bool fits_here = in_flight_ < limits_.max_calls_in_flight &&
                           (in_flight_ == 0 || held_bytes_ + bytes <= limits_.max_pending_bytes);
    if (fits_here) {
      auto wake = [weak = weak_from_this()] {
        if (auto self = weak.lock()) asio::dispatch(self->strand_, [self] { self->wake_reader(); });
      };
      if (budget_->acquire(bytes, std::move(wake))) {
        ++in_flight_;
        ++running_;
        held_bytes_ += bytes;
        co_return true;
      }
      // Other connections hold the server's budget: this one is not idle meanwhile.
      waiting_for_server_ = true;
    }
    // Woken by release_call() here, or by the budget when another connection gives back.
    boost::system::error_code ec;
    co_await call_done_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

Awaitable<void> Connection::throttle_refused(bool known_procedure) {
  // A client's odd unknown call costs it nothing; a flood of them slows down to one
  // record a second, so that it cannot take the server's threads from others.
  constexpr std::size_t kFree = 8;
  if (known_procedure) {
    refused_in_a_row_ = 0;
    co_return;
  }
  if (++refused_in_a_row_ <= kFree) co_return;
  const std::size_t shift = std::min<std::size_t>(refused_in_a_row_ - kFree - 1, 10);
  pause_.expires_after(std::chrono::milliseconds(std::int64_t{1} << shift));
  boost::system::error_code ec;
  co_await pause_.async_wait(asio::redirect_error(use_awaitable, ec));
}

Awaitable<void> Connection::read_loop() {
  rpc::RecordAssembler assembler(limits_.max_record_bytes);
  std::array<std::uint8_t, 64 * 1024> buf;
  try {
    while (!closed_) {
      const std::size_t n = co_await socket_.async_read_some(asio::buffer(buf), use_awaitable);
      touch();
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
        std::vector<std::uint8_t> record = assembler.take_record();
        // Backpressure: the record and the reply it may get must fit in what this
        // connection and the whole server may hold; until they do, nothing more is read.
        const rpc::Dispatcher::Preview preview = dispatcher_.preview(record);
        co_await throttle_refused(preview.known_procedure);
        const std::size_t bytes = record.size() + preview.reply_bytes;
        const bool admitted = co_await admit(bytes);
        if (!admitted) co_return;
        // The call holds the connection alive until its reply is accounted for.
        asio::co_spawn(socket_.get_executor(),
                       [self = shared_from_this(), record = std::move(record), bytes]() mutable {
                         return self->serve_call(std::move(record), bytes);
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
  // The client closed its sending side (or the whole connection: the two look the
  // same here). Linux's knfsd closes a transport on the client's FIN; nfsgw still
  // writes the answers that are ready, but work waiting for the origin on this
  // client's behalf is given up at once (the pool answers it JUKEBOX): a client
  // that went away must not keep it, and its memory, for as long as a slow or
  // frozen origin takes.
  gone_->raise();
  while (in_flight_ > 0 && !closed_) {
    boost::system::error_code ec;
    co_await call_done_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  close();
}

void Connection::check_idle(ActivityClock::time_point now, std::chrono::milliseconds slack) {
  if (limits_.idle_timeout.count() <= 0) return;
  asio::dispatch(strand_, [self = shared_from_this(), now, slack] {
    // A call still running (a slow origin), or calls waiting for other connections
    // to give back the server's budget, are not the client's idleness; its reply,
    // when it comes, counts as activity.
    if (self->closed_ || self->running_ > 0 || self->waiting_for_server_) return;
    if (now - self->last_activity_ < self->limits_.idle_timeout + slack) return;
    spdlog::debug("{}: nothing moved for {} ms; closing the connection", self->peer_,
                  self->limits_.idle_timeout.count());
    self->close();
  });
}

Awaitable<void> Connection::serve_call(std::vector<std::uint8_t> record, std::size_t reserved) {
  // Runs on the I/O pool, not the strand: calls of one connection proceed in parallel.
  // The caller holds a shared_ptr to this connection for the whole coroutine.
  auto self = shared_from_this();
  rpc::ReplyRecord reply;
  try {
    // Bound to a name first: no temporary (the peer's copy) inside co_await (GCC 12).
    Awaitable<rpc::ReplyRecord> call = dispatcher_.dispatch(record, peer_, gone_.get());
    reply = co_await std::move(call);
  } catch (const std::exception& e) {
    spdlog::error("{}: call failed: {}", peer_, e.what());
  }
  asio::dispatch(strand_, [self, reply = std::move(reply), reserved]() mutable {
    self->reply_ready(std::move(reply), reserved);
  });
}

void Connection::reply_ready(rpc::ReplyRecord reply, std::size_t reserved) {
  --running_;
  touch();
  // From now on the call holds its reply's real size instead of its reservation.
  const std::size_t bytes = reply.size();
  held_bytes_ = held_bytes_ - reserved + bytes;
  budget_->adjust(static_cast<std::ptrdiff_t>(bytes) - static_cast<std::ptrdiff_t>(reserved));
  if (closed_ || reply.empty()) {
    release_call(bytes);
    return;
  }
  replies_.push_back(std::move(reply));
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(strand_, [self = shared_from_this()] { return self->write_loop(); },
                   asio::detached);
  }
}

namespace {
/// The XDR padding after a READ's data (at most 3 bytes).
constexpr std::array<std::uint8_t, 4> kZeros{};
}  // namespace

Awaitable<void> Connection::write_loop() {
  std::vector<rpc::ReplyRecord> batch;
  std::vector<asio::const_buffer> buffers;
  try {
    while (!replies_.empty() && !closed_) {
      // Gather whatever is queued into one write: fewer syscalls under load. A
      // READ's data goes out from its own buffer (rpc::ReplyRecord), never copied.
      while (!replies_.empty() && batch.size() < 64) {
        batch.push_back(std::move(replies_.front()));
        replies_.pop_front();
      }
      buffers.clear();
      std::size_t total = 0;
      for (const auto& r : batch) {
        buffers.emplace_back(asio::buffer(r.bytes));
        if (!r.data.empty()) {
          buffers.emplace_back(asio::buffer(r.data.data(), r.data.size()));
          if (const std::size_t pad = xdr::padding(r.data.size())) buffers.emplace_back(asio::buffer(kZeros.data(), pad));
        }
        total += r.size();
      }
      // Written piece by piece, so that a client reading slowly but steadily counts
      // as active (idle_timeout) while one large batch goes out.
      std::size_t first = 0, written = 0;
      while (written < total) {
        const std::size_t n = co_await socket_.async_write_some(
            std::span<const asio::const_buffer>(buffers).subspan(first), use_awaitable);
        written += n;
        touch();
        // Drop what went out from the front of the buffer list.
        for (std::size_t left = n; left > 0 && first < buffers.size();) {
          if (left >= buffers[first].size()) {
            left -= buffers[first].size();
            ++first;
          } else {
            buffers[first] += left;
            left = 0;
          }
        }
      }
      // Written: these calls are done.
      for (const auto& r : batch) release_call(r.size());
      batch.clear();
    }
  } catch (const boost::system::system_error& e) {
    spdlog::debug("{}: write failed: {}", peer_, e.what());
    for (const auto& r : batch) release_call(r.size());
    batch.clear();
    close();
  }
  writing_ = false;
}

}  // namespace nfsgw::server
