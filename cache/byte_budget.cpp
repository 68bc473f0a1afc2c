#include "cache/byte_budget.h"

#include <algorithm>
#include <condition_variable>
#include <vector>

namespace nfsgw::cache {

void ByteBudget::hold(std::size_t bytes) {
  used_ += bytes;
  peak_ = std::max(peak_, used_);
}

bool ByteBudget::try_take(std::size_t bytes) {
  std::lock_guard lock(mu_);
  if (!waiters_.empty() || !fits(bytes)) {
    ++refused_;
    return false;
  }
  hold(bytes);
  return true;
}

bool ByteBudget::take_or_wait(std::size_t bytes, std::function<void()> granted) {
  std::lock_guard lock(mu_);
  if (waiters_.empty() && fits(bytes)) {
    hold(bytes);
    return true;
  }
  ++waits_;
  waiters_.push_back({bytes, std::move(granted)});
  return false;
}

void ByteBudget::take_blocking(std::size_t bytes) {
  {
    // The usual case, room at once, without building the waiter below (its
    // callback would be a heap allocation on every metadata write).
    std::lock_guard lock(mu_);
    if (waiters_.empty() && fits(bytes)) {
      hold(bytes);
      return;
    }
  }
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  if (take_or_wait(bytes, [&] {
        std::lock_guard l(m);
        done = true;
        cv.notify_one();  // under the lock: cv may be gone once `done` is seen
      }))
    return;
  std::unique_lock l(m);
  cv.wait(l, [&] { return done; });
}

void ByteBudget::add(std::size_t bytes) {
  std::lock_guard lock(mu_);
  hold(bytes);
}

void ByteBudget::release(std::size_t bytes) {
  std::vector<std::function<void()>> wake;
  {
    std::lock_guard lock(mu_);
    used_ -= std::min(bytes, used_);
    // In order: the first waiter that does not fit stops the rest.
    while (!waiters_.empty() && fits(waiters_.front().bytes)) {
      hold(waiters_.front().bytes);
      wake.push_back(std::move(waiters_.front().granted));
      waiters_.pop_front();
    }
  }
  for (auto& w : wake) w();
}

ByteBudget::Usage ByteBudget::usage() const {
  std::lock_guard lock(mu_);
  return {limit_, used_, peak_, waits_, refused_};
}

}  // namespace nfsgw::cache
