#include "gateway/server/call_budget.h"

#include <algorithm>
#include <utility>

namespace nfsgw::server {

bool CallBudget::open_connection() {
  std::lock_guard lock(mu_);
  if (used_.connections >= limits_.max_connections) return false;
  ++used_.connections;
  return true;
}

void CallBudget::close_connection() {
  std::lock_guard lock(mu_);
  if (used_.connections > 0) --used_.connections;
}

bool CallBudget::acquire(std::size_t bytes, std::function<void()> wake) {
  std::lock_guard lock(mu_);
  const bool idle = used_.calls == 0 && used_.bytes == 0;
  if (idle || (used_.calls < limits_.max_calls && used_.bytes + bytes <= limits_.max_bytes)) {
    ++used_.calls;
    used_.bytes += bytes;
    return true;
  }
  waiters_.push_back(std::move(wake));
  return false;
}

void CallBudget::adjust(std::ptrdiff_t bytes) {
  std::unique_lock lock(mu_);
  if (bytes >= 0) {
    used_.bytes += static_cast<std::size_t>(bytes);
    return;
  }
  const auto less = static_cast<std::size_t>(-bytes);
  used_.bytes -= std::min(less, used_.bytes);
  wake_waiters(lock);
}

void CallBudget::release(std::size_t calls, std::size_t bytes) {
  std::unique_lock lock(mu_);
  used_.calls -= std::min(calls, used_.calls);
  used_.bytes -= std::min(bytes, used_.bytes);
  wake_waiters(lock);
}

CallBudget::Usage CallBudget::usage() const {
  std::lock_guard lock(mu_);
  return used_;
}

void CallBudget::wake_waiters(std::unique_lock<std::mutex>& lock) {
  if (waiters_.empty()) return;
  // Every waiter tries again (it registers anew if it still does not fit): simple,
  // and waiters exist only while the whole server is at its limit.
  std::vector<std::function<void()>> woken;
  woken.swap(waiters_);
  lock.unlock();
  for (auto& w : woken) w();
}

}  // namespace nfsgw::server
