// Bounded fan-out: `work(i)` for every i in [0, n), at most `parallel` of them at
// a time, awaited until every one has ended. For work that waits on remote peers
// one by one (SM_NOTIFY to each client host after a restart, the reclaim of each
// locked file at a restarted origin), where one slow peer must not hold up the
// others and a thousand peers must not mean a thousand calls at once.
//
// Each item runs as a coroutine of its own on `ex`; an exception it throws ends
// that item only (the others go on) and is reported to `on_error` when given. The
// awaiting coroutine resumes on its own executor.
//
// Written as plain functions rather than lambdas inside a coroutine body: GCC 12
// destroyed such a closure's captures twice (see gateway/upstream/host_statd.cpp).
#pragma once

#include <utility>  // Boost 1.74's Asio needs it before its own headers under C++20

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "gateway/awaitable.h"

namespace nfsgw {

using FanOutWork = std::function<Awaitable<void>(std::size_t)>;
using FanOutError = std::function<void(std::exception_ptr)>;

namespace fan_out_detail {

struct Shared {
  std::size_t n = 0;
  FanOutWork work;
  FanOutError on_error;
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::size_t running = 0;        // workers not yet ended
  std::function<void()> resume;   // set by the awaiting coroutine; run once running is 0

  void worker_done(std::exception_ptr e) {
    if (e && on_error) on_error(e);
    std::function<void()> r;
    {
      std::lock_guard lock(mu);
      if (--running == 0 && resume) r = std::move(resume);
    }
    if (r) r();
  }
};

inline Awaitable<void> worker(std::shared_ptr<Shared> s) {
  for (;;) {
    const std::size_t i = s->next.fetch_add(1);
    if (i >= s->n) co_return;
    try {
      Awaitable<void> item = s->work(i);  // bound to a name: no temporary inside co_await (GCC 12)
      co_await std::move(item);
    } catch (...) {
      if (s->on_error) s->on_error(std::current_exception());
    }
  }
}

inline void spawn(const boost::asio::any_io_executor& ex, const std::shared_ptr<Shared>& s, std::size_t workers) {
  s->running = workers;
  for (std::size_t w = 0; w < workers; ++w)
    boost::asio::co_spawn(ex, worker(s), [s](std::exception_ptr e) { s->worker_done(e); });
}

inline Awaitable<void> all_ended(std::shared_ptr<Shared> s) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void()>(
      [s](auto handler) {
        auto ex = boost::asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto resume = [ex, h]() { boost::asio::post(ex, [h]() { std::move(*h)(); }); };
        std::unique_lock lock(s->mu);
        if (s->running == 0) {
          lock.unlock();
          resume();
        } else {
          s->resume = std::move(resume);
        }
      },
      boost::asio::use_awaitable);
}

}  // namespace fan_out_detail

/// Runs work(0) .. work(n - 1), at most `parallel` (at least 1) at a time, on `ex`.
inline Awaitable<void> fan_out(boost::asio::any_io_executor ex, std::size_t n, std::size_t parallel, FanOutWork work,
                               FanOutError on_error = {}) {
  if (n == 0) co_return;
  auto s = std::make_shared<fan_out_detail::Shared>();
  s->n = n;
  s->work = std::move(work);
  s->on_error = std::move(on_error);
  fan_out_detail::spawn(ex, s, std::max<std::size_t>(1, std::min(parallel, n)));
  Awaitable<void> ended = fan_out_detail::all_ended(s);
  co_await std::move(ended);
}

}  // namespace nfsgw
