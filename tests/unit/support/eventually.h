// Waiting in a test for another thread to reach a state: spins (yielding, no
// sleep) until the condition holds, bounded in time.
#pragma once

#include <chrono>
#include <thread>

namespace nfsgw::test {

/// True once `done()` holds; false after `limit` without it.
template <typename Pred>
bool eventually(Pred done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace nfsgw::test
