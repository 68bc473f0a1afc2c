// Taking bytes of a cache::ByteBudget from a coroutine: the coroutine waits, off
// any thread, until they fit, and resumes on its own executor holding them.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <cstddef>
#include <memory>

#include <boost/asio/async_result.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/byte_budget.h"
#include "gateway/awaitable.h"

namespace nfsgw::datacache {

/// `bytes` of `budget`, waited for in order (cache/byte_budget.h); an empty grant
/// at once when there is no budget. Not a coroutine: build the awaitable into a
/// named local and co_await that (GCC 12).
inline Awaitable<cache::ByteGrant> take_grant(std::shared_ptr<cache::ByteBudget> budget, std::size_t bytes) {
  return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(cache::ByteGrant)>(
      [](auto handler, std::shared_ptr<cache::ByteBudget> b, std::size_t n) {
        auto ex = boost::asio::prefer(boost::asio::get_associated_executor(handler),
                                      boost::asio::execution::outstanding_work.tracked);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        // Resumes through the executor either way, never inside take_or_wait's
        // caller (a release on another thread).
        auto resume = [h, ex](cache::ByteGrant g) {
          boost::asio::post(ex, [h, g = std::move(g)]() mutable { std::move(*h)(std::move(g)); });
        };
        if (!b) return resume(cache::ByteGrant{});
        if (b->take_or_wait(n, [resume, b, n] { resume(cache::ByteGrant(b, n)); })) resume(cache::ByteGrant(b, n));
      },
      boost::asio::use_awaitable, std::move(budget), bytes);
}

}  // namespace nfsgw::datacache
