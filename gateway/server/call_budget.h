// What all client connections together may hold: open connections, calls in flight
// (from the moment a call is read until its reply is written or dropped), and the
// bytes kept for those calls (the record while it is served, the reply reserved at
// its expected size and then held until written). Shared by an RpcServer and its
// connections; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace nfsgw::server {

class CallBudget {
 public:
  struct Limits {
    std::size_t max_connections = 1024;
    std::size_t max_calls = 4096;
    std::size_t max_bytes = 256u << 20;
  };
  struct Usage {
    std::size_t connections = 0, calls = 0, bytes = 0;
  };

  explicit CallBudget(Limits limits) : limits_(limits) {}

  /// Counts a new connection; false (nothing counted) when max_connections are open.
  bool open_connection();
  void close_connection();

  /// Takes one call and `bytes` when they fit, or when nothing at all is held (so a
  /// call larger than the whole budget still runs, alone). Otherwise takes nothing,
  /// keeps `wake` to be called once after something is released, and returns false.
  /// `wake` runs on the releasing thread, outside the lock: it should only post.
  bool acquire(std::size_t bytes, std::function<void()> wake);
  /// Changes the bytes held by a call in flight (its reply turned out larger or
  /// smaller than reserved).
  void adjust(std::ptrdiff_t bytes);
  /// Gives back `calls` calls and `bytes` bytes.
  void release(std::size_t calls, std::size_t bytes);

  Usage usage() const;
  const Limits& limits() const { return limits_; }

 private:
  void wake_waiters(std::unique_lock<std::mutex>& lock);

  const Limits limits_;
  mutable std::mutex mu_;
  Usage used_;
  std::vector<std::function<void()>> waiters_;
};

}  // namespace nfsgw::server
