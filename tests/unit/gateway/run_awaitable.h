// Runs one coroutine to completion on a private io_context, so tests of the
// gateway's Awaitable-based layers read like plain function calls. Exceptions
// thrown inside the coroutine come back out of run_awaitable().
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "gateway/awaitable.h"

namespace nfsgw::test {

template <typename T>
T run_awaitable(Awaitable<T> a) {
  boost::asio::io_context io;
  auto fut = boost::asio::co_spawn(io, std::move(a), boost::asio::use_future);
  io.run();
  return fut.get();
}

}  // namespace nfsgw::test
