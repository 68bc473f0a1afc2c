// Holding a fake origin's replies, per procedure: while a procedure is held, its
// calls (already answered) wait in pass() until release(), so a test can see
// what the layer above does while they are out.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "gateway/awaitable.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::test {

class CallGates {
 public:
  /// Calls of `p` from now on wait in pass() until release(p).
  void hold(nfs3::Proc p) {
    std::lock_guard lock(mu_);
    gates_[at(p)].holding = true;
  }
  /// Calls of `p` waiting now.
  std::size_t held(nfs3::Proc p) const {
    std::lock_guard lock(mu_);
    return gates_[at(p)].waiting.size();
  }
  /// Lets every waiting call of `p` go and stops holding new ones.
  void release(nfs3::Proc p) {
    std::vector<std::shared_ptr<boost::asio::steady_timer>> waiting;
    {
      std::lock_guard lock(mu_);
      gates_[at(p)].holding = false;
      waiting.swap(gates_[at(p)].waiting);
    }
    for (auto& t : waiting) t->cancel();
  }
  /// Returns at once unless `p` is held; then when it is released.
  Awaitable<void> pass(nfs3::Proc p) {
    auto ex = co_await boost::asio::this_coro::executor;
    std::shared_ptr<boost::asio::steady_timer> timer;
    {
      std::lock_guard lock(mu_);
      if (!gates_[at(p)].holding) co_return;
      timer = std::make_shared<boost::asio::steady_timer>(ex, std::chrono::hours(24));
      gates_[at(p)].waiting.push_back(timer);
    }
    boost::system::error_code ec;
    auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
    auto released = timer->async_wait(token);
    co_await std::move(released);
  }

 private:
  struct Gate {
    bool holding = false;
    std::vector<std::shared_ptr<boost::asio::steady_timer>> waiting;
  };
  static std::size_t at(nfs3::Proc p) { return static_cast<std::size_t>(p); }

  mutable std::mutex mu_;
  std::array<Gate, nfs3::kProcCount> gates_{};
};

}  // namespace nfsgw::test
