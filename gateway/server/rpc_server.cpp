#include "gateway/server/rpc_server.h"

#include <spdlog/spdlog.h>

namespace nfsgw::server {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
/// At most one log line about refused connections this often.
constexpr auto kRefusalLogInterval = std::chrono::seconds(10);
}  // namespace

RpcServer::RpcServer(asio::io_context& io, const rpc::Dispatcher& dispatcher, ServerLimits limits)
    : io_(io),
      dispatcher_(dispatcher),
      limits_(limits),
      budget_(std::make_shared<CallBudget>(CallBudget::Limits{
          limits.max_connections, limits.max_calls_in_flight_total, limits.max_pending_bytes_total})) {}

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
    auto conn = std::make_shared<Connection>(std::move(socket), dispatcher_, limits_.connection, budget_);
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
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ < kRefusalLogInterval) return;
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
  std::lock_guard lock(mu_);
  for (auto& w : connections_)
    if (auto c = w.lock()) c->close();
  connections_.clear();
}

}  // namespace nfsgw::server
