// The time timers are measured against: the sweep period, the disk retry, the
// disk budget's reclaim window.
//
// Unlike the wall clock of clock.h (cache windows, stored with each entry), timer
// time never jumps when the system's clock is set, and it is never stored: its
// points are std::chrono::steady_clock's. It is injected so that a test moves time
// itself instead of sleeping through a period.
//
// A thread waiting for a deadline waits through the clock (wait_until), on its own
// condition variable. The real clock's waits time out by themselves. A manual
// clock never moves by itself, so each move wakes the condition variables
// registered with wake_on_advance(); the waiter re-checks its deadline then.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace nfsgw::cache {

class MonotonicClock {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  /// A registration made by wake_on_advance(); it ends when destroyed.
  class Watch {
   public:
    virtual ~Watch() = default;
  };

  virtual ~MonotonicClock() = default;
  virtual time_point now() const = 0;
  /// Blocks on `cv` (`lock` held) until it is notified or this clock reaches
  /// `deadline`. May return early: the caller re-checks what it waits for.
  virtual void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                          time_point deadline) const = 0;
  /// Notifies `cv`, under `mu`, each time the clock moves, until the returned
  /// watch is destroyed. Nullptr for a clock whose waits end on time by themselves.
  /// Taking `mu` first means a waiter that has just found its deadline still ahead
  /// is already waiting when the notification comes, so no move goes unseen.
  virtual std::unique_ptr<Watch> wake_on_advance(std::condition_variable& cv, std::mutex& mu) = 0;
};

/// The real clock: std::chrono::steady_clock.
MonotonicClock& monotonic_clock();

/// A clock that moves only when told to (tests). It must outlive its watches.
class ManualMonotonicClock final : public MonotonicClock {
 public:

  time_point now() const override;
  void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  time_point deadline) const override;
  std::unique_ptr<Watch> wake_on_advance(std::condition_variable& cv, std::mutex& mu) override;

  /// Moves the clock forward and wakes the registered waiters.
  void advance(std::chrono::steady_clock::duration by);

 private:
  class Registration;
  struct Waker {
    const Registration* owner;
    std::condition_variable* cv;
    std::mutex* mu;
  };

  // Starts an hour after steady_clock's epoch, as a real clock is well past it.
  std::atomic<std::chrono::steady_clock::rep> ticks_{
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::hours(1)).count()};
  std::mutex wakers_mu_;  // held while waking: a watch ends only between moves
  std::vector<Waker> wakers_;
};

}  // namespace nfsgw::cache
