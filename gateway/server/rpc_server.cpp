#include "gateway/server/rpc_server.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace nfsgw::server {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
/// At most one log line about refused connections this often.
constexpr auto kRefusalLogInterval = std::chrono::seconds(10);
}  // namespace

RpcServer::RpcServer(asio::io_context& io, const rpc::Dispatcher& dispatcher, ServerLimits limits,
                     const cache::MonotonicClock& clock)
    : io_(io),
      dispatcher_(dispatcher),
      limits_(limits),
      budget_(std::make_shared<CallBudget>(CallBudget::Limits{
          limits.max_connections, limits.max_calls_in_flight_total, limits.max_pending_bytes_total})),
      clock_(clock),
      activity_clock_(std::make_shared<ActivityClock>(clock)),
      sweep_strand_(asio::make_strand(io)),
      sweep_timer_(sweep_strand_) {
  if (limits_.connection.idle_timeout.count() > 0)
    asio::co_spawn(sweep_strand_, idle_sweep_loop(), asio::detached);
}

std::chrono::milliseconds RpcServer::idle_sweep_period() const {
  using std::chrono::milliseconds;
  return std::clamp(limits_.connection.idle_timeout / 8, milliseconds(10), milliseconds(1000));
}

void RpcServer::sweep_idle() {
  const auto now = activity_clock_->sample();
  const auto slack = idle_sweep_period();
  std::lock_guard lock(mu_);
  std::erase_if(connections_, [](const auto& w) { return w.expired(); });
  for (auto& w : connections_)
    if (auto c = w.lock()) c->check_idle(now, slack);
}

Awaitable<void> RpcServer::idle_sweep_loop() {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopped_) co_return;
    }
    sweep_idle();
    sweep_timer_.expires_after(idle_sweep_period());
    boost::system::error_code ec;
    co_await sweep_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

std::uint16_t RpcServer::listen(const std::string& address, std::uint16_t port) {
  const tcp::endpoint ep(asio::ip::make_address(address), port);
  auto acceptor = std::make_unique<tcp::acceptor>(io_);
  acceptor->open(ep.protocol());
  acceptor->set_option(asio::socket_base::reuse_address(true));
  acceptor->bind(ep);
  acceptor->listen(asio::socket_base::max_listen_connections);
  const std::uint16_t bound = acceptor->local_endpoint().port();
  asio::co_spawn(io_, accept_loop(*acceptor), asio::detached);
  acceptors_.push_back(std::move(acceptor));
  spdlog::info("listening on {}:{}", address, bound);
  return bound;
}

Awaitable<void> RpcServer::accept_loop(tcp::acceptor& acceptor) {
  for (;;) {
    boost::system::error_code ec;
    // The socket lives on the pool's executor: its calls run on any thread, and the
    // Connection serialises only its own reads and writes on a strand.
    tcp::socket socket =
        co_await acceptor.async_accept(io_, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // Out of descriptors and the like: back off instead of spinning.
      spdlog::warn("accept failed: {}", ec.message());
      asio::steady_timer t(io_, std::chrono::milliseconds(100));
      co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (!budget_->open_connection()) {
      refuse(socket);
      continue;
    }
    auto conn = std::make_shared<Connection>(std::move(socket), dispatcher_, limits_.connection, budget_,
                                             activity_clock_);
    {
      std::lock_guard lock(mu_);
      std::erase_if(connections_, [](const auto& w) { return w.expired(); });
      connections_.push_back(conn);
    }
    conn->start();
  }
}

void RpcServer::refuse(tcp::socket& socket) {
  // Accepted and closed at once: the client sees the connection end instead of
  // waiting in the listen queue, and nfsgw holds nothing for it.
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  socket.close(ec);
  std::lock_guard lock(mu_);
  ++refused_unlogged_;
  const auto now = clock_.now();
  if (last_refusal_log_ != decltype(now){} && now - last_refusal_log_ < kRefusalLogInterval) return;
  spdlog::warn("max_connections ({}) reached: refused {} connection(s), the last from {}",
               limits_.max_connections, refused_unlogged_,
               ec ? std::string("unknown") : peer.address().to_string());
  refused_unlogged_ = 0;
  last_refusal_log_ = now;
}

void RpcServer::stop() {
  for (auto& a : acceptors_) {
    boost::system::error_code ec;
    a->close(ec);
  }
  std::unique_lock lock(mu_);
  stopped_ = true;  // before the cancel: the sweep loop sees it when it wakes
  lock.unlock();
  asio::dispatch(sweep_strand_, [this] { sweep_timer_.cancel(); });
  lock.lock();
  for (auto& w : connections_)
    if (auto c = w.lock()) c->close();
  connections_.clear();
}

}  // namespace nfsgw::server
