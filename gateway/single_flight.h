// Concurrent misses for one key make one origin call: the first caller (the
// leader) runs it, the others wait for its answer.
//
// Waiters resume on their own executors. A leader that throws gives its waiters
// nothing (nullopt), and they make the call themselves: a failure is never shared
// as if it were the origin's answer.
#pragma once

#include <utility>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/async_result.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "gateway/awaitable.h"

namespace nfsgw {

template <typename T>
class SingleFlight {
 public:
  /// Runs `fetch()` (returning Awaitable<T>) unless a call for `key` is in flight,
  /// in which case it waits for that call's result. `*shared` (when given) tells
  /// whether this caller got another's result.
  template <typename Fetch>
  Awaitable<T> run(std::string key, Fetch fetch, bool* shared = nullptr) {
    std::shared_ptr<Flight> flight;
    bool leader = false;
    {
      std::lock_guard lock(mu_);
      auto [it, inserted] = flights_.try_emplace(key);
      if (inserted) it->second = std::make_shared<Flight>();
      flight = it->second;
      leader = inserted;
    }
    if (shared) *shared = !leader;
    if (!leader) {
      std::optional<T> got = co_await wait(flight);
      if (got) co_return std::move(*got);
      if (shared) *shared = false;
      co_return co_await fetch();
    }
    std::optional<T> result;
    try {
      result = co_await fetch();
    } catch (...) {
      finish(key, *flight, std::nullopt);
      throw;
    }
    finish(key, *flight, result);
    co_return std::move(*result);
  }

 private:
  struct Waiter {
    virtual ~Waiter() = default;
    virtual void complete(const std::optional<T>& value) = 0;
  };
  template <typename Handler>
  struct HandlerWaiter final : Waiter {
    explicit HandlerWaiter(Handler h) : handler(std::move(h)) {}
    void complete(const std::optional<T>& value) override {
      auto ex = boost::asio::get_associated_executor(handler);
      boost::asio::post(ex, [h = std::move(handler), v = value]() mutable { std::move(h)(std::move(v)); });
    }
    Handler handler;
  };
  struct Flight {
    bool done = false;
    std::optional<T> result;  // once done
    std::vector<std::unique_ptr<Waiter>> waiters;
  };

  Awaitable<std::optional<T>> wait(std::shared_ptr<Flight> flight) {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(std::optional<T>)>(
        [this, flight](auto handler) {
          auto w = std::make_unique<HandlerWaiter<decltype(handler)>>(std::move(handler));
          std::unique_lock lock(mu_);
          if (!flight->done) {
            flight->waiters.push_back(std::move(w));
            return;
          }
          std::optional<T> r = flight->result;  // the leader finished meanwhile
          lock.unlock();
          w->complete(r);
        },
        boost::asio::use_awaitable);
  }

  void finish(const std::string& key, Flight& flight, const std::optional<T>& result) {
    std::vector<std::unique_ptr<Waiter>> waiters;
    {
      std::lock_guard lock(mu_);
      flights_.erase(key);
      flight.done = true;
      flight.result = result;
      waiters.swap(flight.waiters);
    }
    for (auto& w : waiters) w->complete(result);
  }

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Flight>> flights_;
};

}  // namespace nfsgw
