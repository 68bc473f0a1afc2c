// Calling an Nfs3Program layer from a unit test: callers, calls with their own
// copies of context and arguments, and driving an io_context until a condition
// holds (how a test sees calls held by a fake origin).
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <chrono>
#include <cstdint>
#include <future>
#include <stdexcept>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "gateway/nfs3_program.h"

namespace nfsgw::test {

/// A caller with uid `uid` and the same gid.
inline CallContext as(std::uint32_t uid) {
  CallContext c;
  c.cred.uid = uid;
  c.cred.gid = uid;
  return c;
}

/// Calls `m` of `p` with its own copies of the context and arguments.
template <typename Res, typename Args>
Awaitable<Res> invoke(Nfs3Program& p, Awaitable<Res> (Nfs3Program::*m)(const CallContext&, Args), CallContext ctx,
                      Args args) {
  co_return co_await (p.*m)(ctx, std::move(args));
}

/// Runs handlers of `io` until `done()`; throws after a generous deadline. While it
/// pumps, `io` has work (a guard), so that run_one_for() waits for the next handler
/// up to 1 ms instead of returning at once when nothing is queued yet.
template <typename Pred>
void pump_until(boost::asio::io_context& io, Pred done) {
  using namespace std::chrono_literals;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  auto guard = boost::asio::make_work_guard(io);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("pump_until: timed out");
    io.restart();
    io.run_one_for(1ms);
  }
}

/// Runs `io` until `f` is ready.
template <typename T>
void pump_until_ready(boost::asio::io_context& io, std::future<T>& f) {
  pump_until(io, [&] { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
}

}  // namespace nfsgw::test
