#include "cache/monotonic_clock.h"

#include <algorithm>

namespace nfsgw::cache {
namespace {

class SteadyClock final : public MonotonicClock {
 public:
  time_point now() const override { return std::chrono::steady_clock::now(); }
  void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  time_point deadline) const override {
    cv.wait_until(lock, deadline);
  }
  std::unique_ptr<Watch> wake_on_advance(std::condition_variable&, std::mutex&) override { return nullptr; }
};

}  // namespace

MonotonicClock& monotonic_clock() {
  static SteadyClock clock;
  return clock;
}

/// Removes its waker from the clock when the watcher goes.
class ManualMonotonicClock::Registration final : public Watch {
 public:
  explicit Registration(ManualMonotonicClock& clock) : clock_(clock) {}
  ~Registration() override {
    std::lock_guard lock(clock_.wakers_mu_);
    std::erase_if(clock_.wakers_, [this](const Waker& w) { return w.owner == this; });
  }

 private:
  ManualMonotonicClock& clock_;
};

MonotonicClock::time_point ManualMonotonicClock::now() const {
  return time_point(std::chrono::steady_clock::duration(ticks_.load()));
}

void ManualMonotonicClock::wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                                      time_point deadline) const {
  // Only a move (advance) or the waiter's own news can end the wait: no timeout.
  if (now() < deadline) cv.wait(lock);
}

std::unique_ptr<MonotonicClock::Watch> ManualMonotonicClock::wake_on_advance(std::condition_variable& cv,
                                                                           std::mutex& mu) {
  auto registration = std::make_unique<Registration>(*this);
  std::lock_guard lock(wakers_mu_);
  wakers_.push_back({registration.get(), &cv, &mu});
  return registration;
}

void ManualMonotonicClock::advance(std::chrono::steady_clock::duration by) {
  ticks_ += by.count();
  std::lock_guard lock(wakers_mu_);
  for (const Waker& w : wakers_) {
    std::lock_guard waiter(*w.mu);
    w.cv->notify_all();
  }
}

}  // namespace nfsgw::cache
