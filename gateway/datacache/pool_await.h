// Running a blocking job (block store file I/O) on a DiskPool from a coroutine,
// without blocking an Asio thread: the job runs on the pool, and the coroutine
// resumes on its own executor with the job's result. An exception the job throws
// (cache::BlockStoreError) is rethrown in the awaiting coroutine.
//
// While the job runs, the coroutine's executor counts it as outstanding work, so
// an io_context does not run out of work under it.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <exception>
#include <memory>
#include <type_traits>

#include <boost/asio/async_result.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/disk_pool.h"
#include "gateway/awaitable.h"

namespace nfsgw::datacache {

namespace detail {

/// What a job left: its result or its exception, handed to the waiting handler.
template <typename R>
struct Outcome {
  using Signature = void(std::exception_ptr, R);
  std::exception_ptr error;
  R value{};
  template <typename Job>
  void run(Job& job) {
    try {
      value = job();
    } catch (...) {
      error = std::current_exception();
    }
  }
  template <typename Handler>
  void deliver(Handler& h) { std::move(h)(error, std::move(value)); }
};

template <>
struct Outcome<void> {
  using Signature = void(std::exception_ptr);
  std::exception_ptr error;
  template <typename Job>
  void run(Job& job) {
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
  }
  template <typename Handler>
  void deliver(Handler& h) { std::move(h)(error); }
};

}  // namespace detail

/// Runs `job()` on `pool`. Not a coroutine: build the awaitable into a named local
/// and co_await that (GCC 12 destroys temporaries inside a co_await expression
/// twice). `job` is owned by the pool's queue until it has run.
template <typename Job, typename R = std::invoke_result_t<Job&>>
Awaitable<R> on_pool(cache::DiskPool& pool, Job job) {
  using Signature = typename detail::Outcome<R>::Signature;
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, Signature>(
      [&pool](auto handler, Job j) {
        auto ex = boost::asio::prefer(boost::asio::get_associated_executor(handler),
                                      boost::asio::execution::outstanding_work.tracked);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto owned = std::make_shared<Job>(std::move(j));
        pool.post([h, owned, ex] {
          auto outcome = std::make_shared<detail::Outcome<R>>();
          outcome->run(*owned);
          boost::asio::post(ex, [h, outcome] { outcome->deliver(*h); });
        });
      },
      boost::asio::use_awaitable, std::move(job));
}

}  // namespace nfsgw::datacache
