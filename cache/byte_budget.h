// A count of bytes held against a limit, for memory that comes and goes with the
// work (READ data in flight, the metadata store's pending writes): a share of
// memory_mb (cache/memory_budget.h) that is a bound, not an estimate. Whoever
// needs bytes takes them first and gives them back when the memory is freed;
// when they do not fit, the taker waits (or, for optional work, does without).
// Nothing ever fails for want of room.
//
// - Takers are served in order: once someone waits, a later request waits behind
//   it even when it would fit (no large request starves), and try_take() refuses.
// - A request larger than the whole limit is granted when nothing is held, so
//   that it runs alone rather than never.
// - add() takes bytes at once, over the limit if need be: for a holder whose
//   exact size is known only once it holds its place (the metadata store's
//   update()); the overshoot is bounded by what such callers add at once.
// Thread-safe. Waiters' callbacks run on the releasing thread, outside the lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>

namespace nfsgw::cache {

class ByteBudget {
 public:
  struct Usage {
    std::size_t limit = 0, used = 0, peak = 0;
    std::uint64_t waits = 0;    // requests that had to wait
    std::uint64_t refused = 0;  // try_take() that found no room
  };

  explicit ByteBudget(std::size_t limit) : limit_(limit) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  /// Takes `bytes` when they fit and nobody waits; false (nothing taken) otherwise.
  bool try_take(std::size_t bytes);
  /// Takes `bytes` now (true) or queues the request (false): `granted` is called
  /// once the bytes have been taken on the caller's behalf (then the caller holds
  /// them and must release them).
  bool take_or_wait(std::size_t bytes, std::function<void()> granted);
  /// Takes `bytes`, waiting on this thread until they fit.
  void take_blocking(std::size_t bytes);
  /// Takes `bytes` at once, past the limit if need be.
  void add(std::size_t bytes);
  void release(std::size_t bytes);

  Usage usage() const;
  std::size_t limit() const { return limit_; }

 private:
  bool fits(std::size_t bytes) const { return used_ == 0 || used_ + bytes <= limit_; }
  void hold(std::size_t bytes);  // mu_ held

  struct Waiter {
    std::size_t bytes;
    std::function<void()> granted;
  };
  const std::size_t limit_;
  mutable std::mutex mu_;
  std::size_t used_ = 0, peak_ = 0;
  std::uint64_t waits_ = 0, refused_ = 0;
  std::deque<Waiter> waiters_;
};

/// Bytes held in a ByteBudget, given back when destroyed. Holds the budget alive
/// (a grant may outlive its taker: a coroutine frame freed at shutdown).
class ByteGrant {
 public:
  ByteGrant() = default;
  /// Takes over `bytes` already taken from `budget`.
  ByteGrant(std::shared_ptr<ByteBudget> budget, std::size_t bytes) : budget_(std::move(budget)), bytes_(bytes) {}
  ByteGrant(ByteGrant&& o) noexcept : budget_(std::move(o.budget_)), bytes_(std::exchange(o.bytes_, 0)) {}
  ByteGrant& operator=(ByteGrant&& o) noexcept {
    if (this != &o) {
      reset();
      budget_ = std::move(o.budget_);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~ByteGrant() { reset(); }

  std::size_t bytes() const { return bytes_; }
  /// Gives back all but `keep` bytes.
  void keep_only(std::size_t keep) {
    if (budget_ && keep < bytes_) {
      budget_->release(bytes_ - keep);
      bytes_ = keep;
    }
  }
  void reset() {
    if (budget_ && bytes_ > 0) budget_->release(bytes_);
    bytes_ = 0;
    budget_.reset();
  }

 private:
  std::shared_ptr<ByteBudget> budget_;
  std::size_t bytes_ = 0;
};

}  // namespace nfsgw::cache
