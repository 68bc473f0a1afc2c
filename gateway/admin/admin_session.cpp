#include "gateway/admin/admin_session.h"

#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "gateway/admin/admin_execute.h"

namespace nfsgw::admin {

namespace asio = boost::asio;

AdminSession::AdminSession(Socket socket, std::shared_ptr<AdminContext> ctx)
    : ctx_(std::move(ctx)),
      strand_(asio::make_strand(socket.get_executor())),
      socket_(std::move(socket)),
      timer_(strand_) {}

AdminSession::~AdminSession() { ctx_->active.fetch_sub(1, std::memory_order_relaxed); }

void AdminSession::start() {
  asio::co_spawn(strand_, [self = shared_from_this()] { return self->run(); }, asio::detached);
}

void AdminSession::close() {
  asio::post(strand_, [self = shared_from_this()] {
    self->closed_ = true;
    self->disarm();
    boost::system::error_code ignored;
    self->socket_.close(ignored);
  });
}

void AdminSession::arm(std::chrono::milliseconds timeout) {
  const unsigned generation = ++timer_generation_;
  timer_.expires_after(timeout);
  timer_.async_wait([self = shared_from_this(), generation](boost::system::error_code ec) {
    // A wait superseded by a later arm()/disarm() may still complete "successfully"
    // if it expired just before; the generation tells.
    if (ec || generation != self->timer_generation_) return;
    self->timed_out_ = true;
    boost::system::error_code ignored;
    self->socket_.cancel(ignored);
  });
}

void AdminSession::disarm() {
  ++timer_generation_;
  timer_.cancel();
}

Awaitable<void> AdminSession::run() {
  const std::string reply = co_await receive_and_execute();
  if (closed_ || reply.empty()) co_return;
  boost::system::error_code ec;
  timed_out_ = false;
  arm(ctx_->limits.io_timeout);
  co_await asio::async_write(socket_, asio::buffer(reply), asio::redirect_error(asio::use_awaitable, ec));
  disarm();
  if (ec && !closed_) spdlog::debug("admin: reply not delivered: {}", timed_out_ ? "timed out" : ec.message());
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
}

Awaitable<std::string> AdminSession::receive_and_execute() {
  const std::size_t max = ctx_->limits.max_request_bytes;
  std::string buffer;
  boost::system::error_code ec;
  arm(ctx_->limits.io_timeout);
  co_await asio::async_read_until(socket_, asio::dynamic_buffer(buffer, max), '\n',
                                  asio::redirect_error(asio::use_awaitable, ec));
  disarm();
  if (closed_) co_return std::string();
  if (timed_out_) co_return error_line("timed out waiting for the request line");
  if (ec == asio::error::not_found)
    co_return error_line("request line longer than " + std::to_string(max) + " bytes");
  // A request ended by end-of-file instead of '\n' is accepted; an empty one is not.
  if (ec && !(ec == asio::error::eof && !buffer.empty())) co_return std::string();

  std::optional<Request> request;
  std::string error;
  try {
    request = parse_request(std::string_view(buffer).substr(0, buffer.find('\n')));
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  if (!request) {
    spdlog::info("admin: bad request: {}", error);
    co_return error_line(error);
  }
  co_return co_await execute(std::move(*request));
}

Awaitable<std::string> AdminSession::execute(Request request) {
  // The command runs on the worker thread; its reply comes back through a post to
  // this coroutine's executor (the session's strand). The state travels as
  // arguments of the initiation, not as lambda captures: GCC 12 mishandles
  // non-trivial captures of an initiation passed into Asio's coroutine frame.
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(std::string)>(
      [](auto handler, std::shared_ptr<AdminContext> ctx, Request req) {
        using Handler = decltype(handler);
        auto h = std::make_shared<Handler>(std::move(handler));
        const auto complete = [](std::shared_ptr<Handler> h, std::string reply) {
          auto ex = asio::get_associated_executor(*h);
          asio::post(ex, [h = std::move(h), reply = std::move(reply)]() mutable { (*h)(std::move(reply)); });
        };
        // The job moves the handler out when it completes, so that the worker thread
        // never holds the last reference to this coroutine.
        auto job = [ctx, req = std::move(req), h, complete](bool cancelled) mutable {
          std::string reply =
              cancelled ? error_line("nfsgw is stopping") : execute_request(req, ctx->commands);
          complete(std::move(h), std::move(reply));
        };
        if (!ctx->worker || !ctx->worker->submit(std::move(job)))
          complete(std::move(h), error_line("nfsgw is stopping"));
      },
      asio::use_awaitable, ctx_, std::move(request));
}

}  // namespace nfsgw::admin
