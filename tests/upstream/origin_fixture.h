// Shared test harness: a real nfs-ganesha origin (one per test process) and a
// Forwarder running on its own io_context threads, with bounded synchronous waits.
#pragma once

#include <utility>

#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include "config/config.h"
#include "gateway/upstream/forwarder.h"

namespace nfsgw::upstream::test {

constexpr std::uint16_t kNfsPort = 21490;
constexpr std::uint16_t kMountPort = 21048;
constexpr auto kWait = std::chrono::seconds(60);

/// The loopback origin (scripts/origin-ganesha.sh), shared by all tests of a process.
class Origin {
 public:
  static Origin& get();
  void start();
  void stop();
  /// Freezes / kills ganesha without a clean shutdown (for outage tests).
  void freeze();
  void kill_hard();
  const std::string& export_dir() const { return export_dir_; }
  /// Local path of `rel` inside the current test's own directory of the export.
  /// Every test works in a directory named after it, never reused: ganesha caches
  /// names and attributes, so re-creating a directory it has seen behind its back
  /// would give STALE handles.
  std::string path(const std::string& rel) const;
  config::ExportConfig export_config(unsigned connections = 4) const;
  void cleanup();

 private:
  Origin();
  std::string base_, state_dir_, export_dir_;
};

/// "Suite.Name" of the running test: its directory in the export.
std::string test_base();
/// Creates `rel` (and parents) inside the current test's directory; returns its path.
std::string fresh_dir(const std::string& rel, unsigned mode = 0755);

/// Releases `work` and waits at most `bound` for every thread's io.run() to return
/// by itself, which it does once nothing is left posted (handlers, timers, socket
/// operations). True when it did; false when work was left, and the caller must
/// then io.stop() to end its threads.
bool runs_dry(boost::asio::io_context& io,
              boost::asio::executor_work_guard<boost::asio::io_context::executor_type>& work,
              std::chrono::milliseconds bound = std::chrono::seconds(5));

/// Runs `make()` (which returns an Awaitable) on `io` and waits at most kWait.
template <typename F>
auto run_on(boost::asio::io_context& io, F make) {
  auto fut = boost::asio::co_spawn(io, std::move(make), boost::asio::use_future);
  if (fut.wait_for(kWait) != std::future_status::ready) {
    throw std::runtime_error("call did not complete within 60 s");
  }
  return fut.get();
}

/// A started Forwarder with the origin's root handle already fetched.
class ForwarderHarness {
 public:
  explicit ForwarderHarness(unsigned connections = 4, bool wait_for_root = true);
  ~ForwarderHarness();

  boost::asio::io_context& io() { return io_; }
  Forwarder& fwd() { return *fwd_; }
  const nfs3::FileHandle& root() const { return root_; }

  /// Forwards one call and waits for it: `call(&Forwarder::getattr, ctx, args)`.
  /// ctx and args are copied into the spawned coroutine: an Nfs3Program coroutine
  /// keeps a reference to its ctx until it finishes.
  template <typename Res, typename Args>
  Res call(Awaitable<Res> (Forwarder::*method)(const CallContext&, Args), CallContext ctx,
           std::type_identity_t<Args> args) {
    return spawn(method, std::move(ctx), std::move(args)).get_after_wait();
  }
  void call(Awaitable<void> (Forwarder::*method)(const CallContext&), CallContext ctx) {
    run_on(io_, [this, method, ctx = std::move(ctx)]() { return (fwd_.get()->*method)(ctx); });
  }

  /// A call in flight: wait_for() it, or get_after_wait() (bounded by kWait).
  template <typename Res>
  struct Pending {
    std::future<Res> future;
    std::future_status wait_for(std::chrono::milliseconds d) { return future.wait_for(d); }
    Res get_after_wait() {
      if (future.wait_for(kWait) != std::future_status::ready) {
        throw std::runtime_error("call did not complete within 60 s");
      }
      return future.get();
    }
  };
  /// Starts a call without waiting for it.
  template <typename Res, typename Args>
  Pending<Res> spawn(Awaitable<Res> (Forwarder::*method)(const CallContext&, Args),
                     CallContext ctx, std::type_identity_t<Args> args) {
    return {boost::asio::co_spawn(
        io_,
        [this, method, ctx = std::move(ctx), args = std::move(args)]() {
          return (fwd_.get()->*method)(ctx, args);
        },
        boost::asio::use_future)};
  }

  /// Walks `rel` ("a/b/c", inside the current test's directory) from the root with
  /// LOOKUP as root; fails the test on error.
  nfs3::FileHandle lookup_path(const std::string& rel);

 private:
  void shutdown();

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::unique_ptr<Forwarder> fwd_;
  nfs3::FileHandle root_;
};

CallContext as_user(std::uint32_t uid, std::uint32_t gid, std::vector<std::uint32_t> gids = {});
inline CallContext as_root() { return as_user(0, 0); }

}  // namespace nfsgw::upstream::test
