#include "gateway/admin/admin_server.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace nfsgw::admin {

namespace asio = boost::asio;
using Protocol = asio::local::stream_protocol;

namespace {

/// Refuses a connection beyond the limit, without blocking: the reply is far
/// smaller than a fresh socket's buffer.
void refuse(Protocol::socket socket, unsigned limit) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  const std::string reply =
      error_line("busy: at most " + std::to_string(limit) + " admin connections at a time");
  asio::write(socket, asio::buffer(reply), ec);
  socket.close(ec);
}

Awaitable<void> accept_loop(std::shared_ptr<Protocol::acceptor> acceptor,
                            std::shared_ptr<AdminContext> ctx) {
  for (;;) {
    boost::system::error_code ec;
    Protocol::socket socket =
        co_await acceptor->async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
    if (ec) {
      // Out of descriptors and the like: back off instead of spinning.
      spdlog::warn("admin socket: accept failed: {}", ec.message());
      asio::steady_timer t(acceptor->get_executor(), std::chrono::milliseconds(100));
      co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    const unsigned limit = ctx->limits.max_connections;
    if (ctx->active.fetch_add(1, std::memory_order_relaxed) >= limit) {
      ctx->active.fetch_sub(1, std::memory_order_relaxed);
      refuse(std::move(socket), limit);
      continue;
    }
    auto session = std::make_shared<AdminSession>(std::move(socket), ctx);
    {
      std::lock_guard lock(ctx->mu);
      std::erase_if(ctx->sessions, [](const auto& w) { return w.expired(); });
      ctx->sessions.push_back(session);
    }
    session->start();
  }
}

}  // namespace

AdminServer::AdminServer(asio::io_context& io, std::string socket_path, AdminCommands& commands,
                         AdminLimits limits)
    : io_(io), path_(std::move(socket_path)), ctx_(std::make_shared<AdminContext>(commands, limits)) {}

AdminServer::~AdminServer() { stop(); }

void AdminServer::start() {
  if (started_) throw std::logic_error("AdminServer::start() called twice");
  started_ = true;
  clear_stale_socket(path_);

  // The accept loop and stop() touch the acceptor on its strand only.
  auto acceptor = std::make_shared<Protocol::acceptor>(asio::make_strand(io_));
  acceptor->open(Protocol());
  // On Linux, bind() gives the socket file the mode of the socket's inode (less the
  // umask): set it first, so that the file is never reachable by others, even
  // briefly, without touching the process-wide umask. chmod() after bind covers
  // systems that ignore it.
  if (::fchmod(acceptor->native_handle(), S_IRUSR | S_IWUSR) != 0)
    throw std::runtime_error("cannot set the mode of admin socket " + path_ + ": " + std::strerror(errno));
  boost::system::error_code ec;
  acceptor->bind(Protocol::endpoint(path_), ec);
  if (ec) throw std::runtime_error("cannot create admin socket " + path_ + ": " + ec.message());
  file_ = file_id(path_);
  if (::chmod(path_.c_str(), S_IRUSR | S_IWUSR) != 0) {
    const int err = errno;
    remove_if_same(path_, file_);
    throw std::runtime_error("cannot set the mode of admin socket " + path_ + ": " + std::strerror(err));
  }
  acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    remove_if_same(path_, file_);
    throw std::runtime_error("cannot listen on admin socket " + path_ + ": " + ec.message());
  }
  ctx_->worker = std::make_unique<CommandWorker>();
  acceptor_ = acceptor;
  asio::co_spawn(acceptor->get_executor(), accept_loop(acceptor, ctx_), asio::detached);
  spdlog::info("admin socket {}", path_);
}

std::size_t AdminServer::queued_commands() const {
  return ctx_ && ctx_->worker ? ctx_->worker->queued() : 0;
}

void AdminServer::stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  if (acceptor_) {
    auto close = [a = acceptor_] {
      boost::system::error_code ignored;
      a->close(ignored);
    };
    // On its strand while the io_context runs; nothing else touches it otherwise.
    if (io_.stopped()) {
      close();
    } else {
      asio::post(acceptor_->get_executor(), close);
    }
  }
  {
    std::lock_guard lock(ctx_->mu);
    for (auto& w : ctx_->sessions)
      if (auto s = w.lock()) s->close();
    ctx_->sessions.clear();
  }
  remove_if_same(path_, file_);
  if (ctx_->worker) ctx_->worker->stop();
}

}  // namespace nfsgw::admin
