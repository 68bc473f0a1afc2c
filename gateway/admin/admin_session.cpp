#include "gateway/admin/admin_session.h"

#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "gateway/admin/admin_execute.h"
#include "gateway/admin/flush_wire.h"
#include "gateway/admin/warm_wire.h"

namespace nfsgw::admin {

namespace asio = boost::asio;

AdminSession::AdminSession(Socket socket, std::shared_ptr<AdminContext> ctx)
    : ctx_(std::move(ctx)),
      strand_(asio::make_strand(socket.get_executor())),
      socket_(std::move(socket)),
      timer_(strand_),
      warm_timer_(strand_) {}

AdminSession::~AdminSession() { ctx_->active.fetch_sub(1, std::memory_order_relaxed); }

void AdminSession::start() {
  asio::co_spawn(strand_, [self = shared_from_this()] { return self->run(); }, asio::detached);
}

void AdminSession::close() {
  asio::post(strand_, [self = shared_from_this()] {
    self->closed_ = true;
    self->disarm();
    if (self->warm_progress_) self->warm_progress_->cancel();
    self->warm_timer_.cancel();  // a warm's or a flush's wait for its next progress line
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
  std::string reply;
  std::optional<Request> request = co_await receive(reply);
  if (closed_) co_return;
  if (request && std::holds_alternative<WarmRequest>(*request)) {
    WarmRequest warm = std::get<WarmRequest>(std::move(*request));
    co_await run_warm(std::move(warm));
  } else if (request && std::holds_alternative<FlushRequest>(*request)) {
    co_await run_flush(std::get<FlushRequest>(std::move(*request)));
  } else {
    if (request) reply = co_await execute(std::move(*request));
    if (closed_ || reply.empty()) co_return;
    co_await send(std::move(reply));
  }
  boost::system::error_code ec;
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
}

Awaitable<bool> AdminSession::send(std::string bytes) {
  if (closed_) co_return false;
  boost::system::error_code ec;
  timed_out_ = false;
  arm(ctx_->limits.io_timeout);
  co_await asio::async_write(socket_, asio::buffer(bytes), asio::redirect_error(asio::use_awaitable, ec));
  disarm();
  if (ec && !closed_) spdlog::debug("admin: reply not delivered: {}", timed_out_ ? "timed out" : ec.message());
  co_return !ec;
}

Awaitable<std::optional<Request>> AdminSession::receive(std::string& reply) {
  const std::size_t max = ctx_->limits.max_request_bytes;
  boost::system::error_code ec;
  timed_out_ = false;
  arm(ctx_->limits.io_timeout);
  co_await asio::async_read_until(socket_, asio::dynamic_buffer(buffer_, max), '\n',
                                  asio::redirect_error(asio::use_awaitable, ec));
  disarm();
  if (closed_) co_return std::nullopt;
  if (timed_out_) {
    reply = error_line("timed out waiting for the request line");
    co_return std::nullopt;
  }
  if (ec == asio::error::not_found) {
    reply = error_line("request line longer than " + std::to_string(max) + " bytes");
    co_return std::nullopt;
  }
  // A request ended by end-of-file instead of '\n' is accepted; an empty one is not.
  if (ec && !(ec == asio::error::eof && !buffer_.empty())) co_return std::nullopt;

  const std::size_t eol = buffer_.find('\n');
  std::optional<Request> request;
  std::string error;
  try {
    request = parse_request(std::string_view(buffer_).substr(0, eol));
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  buffer_.erase(0, eol == std::string::npos ? buffer_.size() : eol + 1);
  if (!request) {
    spdlog::info("admin: bad request: {}", error);
    reply = error_line(error);
  }
  co_return request;
}

Awaitable<std::optional<std::string>> AdminSession::receive_manifest(WarmRequest& request) {
  const std::size_t max_line = ctx_->limits.max_request_bytes;
  request.manifest.clear();
  request.manifest.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(request.manifest_count, 1u << 16)));
  for (std::uint64_t i = 0; i < request.manifest_count; ++i) {
    std::size_t eol = buffer_.find('\n');
    if (eol == std::string::npos) {
      boost::system::error_code ec;
      timed_out_ = false;
      arm(ctx_->limits.io_timeout);
      // The buffer holds at most one partial line here: the bound is per line.
      co_await asio::async_read_until(socket_, asio::dynamic_buffer(buffer_, max_line), '\n',
                                      asio::redirect_error(asio::use_awaitable, ec));
      disarm();
      if (closed_) co_return std::string();
      const std::string where = "manifest line " + std::to_string(i + 1) + " of " +
                                std::to_string(request.manifest_count);
      if (timed_out_) co_return error_line("timed out waiting for " + where);
      if (ec == asio::error::not_found)
        co_return error_line(where + " is longer than " + std::to_string(max_line) + " bytes");
      eol = buffer_.find('\n');
      if (ec && !(ec == asio::error::eof && !buffer_.empty()))
        co_return error_line("the request ended before " + where);
    }
    const std::string_view line = std::string_view(buffer_).substr(0, eol);
    try {
      request.manifest.push_back(parse_manifest_line(line));
    } catch (const std::invalid_argument& e) {
      co_return error_line("manifest line " + std::to_string(i + 1) + ": " + e.what());
    }
    buffer_.erase(0, eol == std::string::npos ? buffer_.size() : eol + 1);
  }
  co_return std::nullopt;
}

Awaitable<void> AdminSession::run_warm(WarmRequest request) {
  if (request.manifest_count > 0) {
    std::optional<std::string> refused = co_await receive_manifest(request);
    if (refused) {
      if (!refused->empty()) co_await send(std::move(*refused));
      co_return;
    }
  }
  buffer_.clear();
  auto progress = std::make_shared<warm::WarmProgress>();
  warm_progress_ = progress;
  spdlog::info("admin: warm {} path '{}'{}{}, {} in flight{}", escape_line(request.export_path),
               request.subpath.empty() ? "/" : escape_line(request.subpath),
               request.depth ? " to depth " + std::to_string(*request.depth) : std::string(),
               request.data ? " with file data" : "", request.parallel,
               request.manifest.empty() ? std::string()
                                        : ", " + std::to_string(request.manifest.size()) + " manifest paths");
  std::string refused;
  try {
    auto self = shared_from_this();
    ctx_->commands.warm(request, progress, [self](warm::WarmOutcome outcome) {
      asio::post(self->strand_, [self, outcome] {
        self->warm_done_ = outcome;
        self->warm_timer_.cancel();
      });
    });
  } catch (const std::invalid_argument& e) {
    refused = error_line(e.what());
  } catch (const std::exception& e) {
    spdlog::error("admin: warm failed to start: {}", e.what());
    refused = error_line(std::string("internal error: ") + e.what());
  }
  if (!refused.empty()) {
    warm_progress_.reset();
    co_await send(std::move(refused));
    co_return;
  }
  // Progress about once a second until the walk ends. A client that has gone (or
  // a server that stops) cancels the walk; the session still waits for its end,
  // so that nothing of the walk outlives what it reports to.
  bool gone = false;
  while (!warm_done_) {
    if (closed_ && !gone) {
      gone = true;
      progress->cancel();
    }
    boost::system::error_code ec;
    warm_timer_.expires_after(ctx_->limits.progress_interval);
    co_await warm_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (warm_done_ || gone) continue;
    std::string lines;
    for (const auto& f : progress->take_failures()) lines += warm::format_failure(f);
    lines += warm::format_progress(progress->figures());
    if (!co_await send(std::move(lines))) {
      gone = true;
      progress->cancel();
      spdlog::info("admin: the warm's client went away: cancelled");
    }
  }
  const warm::WarmOutcome outcome = *warm_done_;
  spdlog::info("admin: warm {}{}: {} entries, {} bytes, {} failed, {} origin calls, {} ms",
               escape_line(request.export_path), outcome.cancelled ? " cancelled" : " done", outcome.figures.entries,
               outcome.figures.bytes, outcome.figures.failed, outcome.origin_calls, outcome.ms);
  if (gone || closed_) co_return;
  std::string lines;
  for (const auto& f : progress->take_failures()) lines += warm::format_failure(f);
  lines += warm::format_summary(outcome);
  if (outcome.cancelled) {
    lines += error_line("the warm was cancelled: nfsgw is stopping");
  } else if (outcome.figures.failed > 0) {
    lines += error_line(std::to_string(outcome.figures.failed) + " path" + (outcome.figures.failed == 1 ? "" : "s") +
                        " failed");
  } else {
    lines += ok_line();
  }
  co_await send(std::move(lines));
}

Awaitable<void> AdminSession::run_flush(FlushRequest request) {
  buffer_.clear();
  const std::string scope =
      request.export_path.empty() ? std::string("every export") : escape_line(request.export_path + request.subpath);
  spdlog::info("admin: flush {}", scope);
  auto progress = std::make_shared<writeback::FlushProgress>();
  const auto started = std::chrono::steady_clock::now();
  std::string refused;
  try {
    auto self = shared_from_this();
    ctx_->commands.flush(request.export_path, request.subpath, progress, [self](writeback::FlushOutcome outcome) {
      asio::post(self->strand_, [self, outcome = std::move(outcome)] {
        self->flush_done_ = outcome;
        self->warm_timer_.cancel();
      });
    });
  } catch (const std::invalid_argument& e) {
    refused = error_line(e.what());
  } catch (const std::exception& e) {
    spdlog::error("admin: flush failed to start: {}", e.what());
    refused = error_line(std::string("internal error: ") + e.what());
  }
  if (!refused.empty()) {
    co_await send(std::move(refused));
    co_return;
  }
  // Progress about once a second until the flush ends. Nothing cancels a flush:
  // when the client goes away (or the server stops) the session stops reporting
  // and the flush goes on; `done` keeps what it reports to alive.
  while (!flush_done_) {
    if (closed_) co_return;
    boost::system::error_code ec;
    warm_timer_.expires_after(ctx_->limits.progress_interval);
    co_await warm_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (flush_done_ || closed_) continue;
    if (!co_await send(format_flush_progress(flush_figures(*progress)))) {
      spdlog::info("admin: the flush's client went away; the flush of {} goes on", scope);
      co_return;
    }
  }
  const writeback::FlushOutcome outcome = *flush_done_;
  const auto ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
  const FlushSummary summary{flush_figures(*progress), ms};
  spdlog::info("admin: flush of {} {} after {} ms, {} bytes flushed: {}", scope, outcome.ok ? "done" : "failed", ms,
               summary.figures.bytes_flushed, outcome.message);
  if (closed_) co_return;
  std::string lines = format_flush_summary(summary);
  if (outcome.ok) {
    lines += format_flush_message(outcome.message);
    lines += ok_line();
  } else {
    lines += error_line(outcome.message.empty() ? std::string("the flush failed") : outcome.message);
  }
  co_await send(std::move(lines));
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
