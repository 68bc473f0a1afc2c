// Concurrent misses for one key make one origin call: the first caller (the
// leader) runs it, the others wait for its answer.
//
// Waiters resume on their own executors. A leader that throws gives its waiters
// nothing (nullopt), and they make the call themselves: a failure is never shared
// as if it were the origin's answer.
//
// A waiter whose client goes away (Leave::caller, its CallContext::caller_gone)
// stops waiting at once and gets Leave::value (a status nfsgw makes up), so that
// it frees what it holds; the flight goes on for the leader and the other
// waiters. The leader's own work runs with shared_work() (call_context.h): it is
// not abandoned when the leader's client leaves, since others may be waiting.
#pragma once

#include <utility>

#include <algorithm>
#include <cstdint>
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
#include "gateway/call_context.h"

namespace nfsgw {

template <typename T>
class SingleFlight {
 public:
  /// How a waiter leaves when its client goes away; no caller: it never leaves.
  struct Leave {
    const CallerGone* caller = nullptr;
    T value{};
  };

  /// Runs `fetch()` (returning Awaitable<T>) unless a call for `key` is in flight,
  /// in which case it waits for that call's result. `*shared` (when given) tells
  /// whether this caller got another's result (or left: see Leave).
  template <typename Fetch>
  Awaitable<T> run(std::string key, Fetch fetch, bool* shared = nullptr, Leave leave = {}) {
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
      Got got = co_await wait(flight, leave.caller);
      if (got.left) co_return std::move(leave.value);
      if (got.value) co_return std::move(*got.value);
      if (shared) *shared = false;
      co_return co_await fetch();
    }
    std::optional<T> result;
    try {
      result = co_await fetch();
    } catch (...) {
      finish(key, flight, std::nullopt);
      throw;
    }
    finish(key, flight, result);
    co_return std::move(*result);
  }

  /// Callers waiting on flights now (for tests).
  std::size_t waiting() const {
    std::lock_guard lock(mu_);
    std::size_t n = 0;
    for (const auto& [key, f] : flights_) {
      std::lock_guard flock(f->mu);
      n += f->waiters.size();
    }
    return n;
  }

 private:
  struct Got {
    std::optional<T> value;
    bool left = false;  // the waiter's client went away
  };
  struct Waiter {
    virtual ~Waiter() = default;
    virtual void complete(Got got) = 0;
    const CallerGone* caller = nullptr;
    std::uint64_t hook = 0;  // its CallerGone::on_raise id; 0: none
  };
  template <typename Handler>
  struct HandlerWaiter final : Waiter {
    explicit HandlerWaiter(Handler h) : handler(std::move(h)) {}
    void complete(Got got) override {
      auto ex = boost::asio::get_associated_executor(handler);
      boost::asio::post(ex, [h = std::move(handler), g = std::move(got)]() mutable { std::move(h)(std::move(g)); });
    }
    Handler handler;
  };
  /// Guarded by its own mutex, so that a leaving waiter's hook needs nothing but
  /// the flight (it may run on any thread, at any time).
  struct Flight {
    mutable std::mutex mu;
    bool done = false;
    std::optional<T> result;  // once done
    std::vector<std::unique_ptr<Waiter>> waiters;
  };

  /// The hook a waiter leaves with: it marks the waiter as left (under the
  /// flight's lock, so that a waiter not yet in the list sees it) and takes it out
  /// of the flight, unless the flight completed it first.
  static void leave_flight(const std::weak_ptr<Flight>& weak, const Waiter* w,
                           const std::shared_ptr<bool>& left) {
    std::shared_ptr<Flight> flight = weak.lock();
    if (!flight) return;
    std::unique_ptr<Waiter> mine;
    {
      std::lock_guard lock(flight->mu);
      *left = true;
      auto it = std::find_if(flight->waiters.begin(), flight->waiters.end(),
                             [w](const std::unique_ptr<Waiter>& p) { return p.get() == w; });
      if (it == flight->waiters.end()) return;
      mine = std::move(*it);
      flight->waiters.erase(it);
    }
    mine->complete(Got{std::nullopt, true});
  }

  Awaitable<Got> wait(std::shared_ptr<Flight> flight, const CallerGone* caller) {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(Got)>(
        [flight, caller](auto handler) {
          auto w = std::make_unique<HandlerWaiter<decltype(handler)>>(std::move(handler));
          // The hook is registered before the waiter is published: once it is in
          // the flight, another thread may complete it, and its coroutine (and its
          // client's connection) may be gone before this returns.
          std::shared_ptr<bool> left;
          std::uint64_t hook = 0;
          if (caller != nullptr) {
            left = std::make_shared<bool>(false);
            hook = caller->on_raise([weak = std::weak_ptr<Flight>(flight), raw = w.get(), left] {
              leave_flight(weak, raw, left);
            });
            if (hook == 0) {  // gone already
              w->complete(Got{std::nullopt, true});
              return;
            }
          }
          std::unique_lock lock(flight->mu);
          if (flight->done) {
            std::optional<T> r = flight->result;  // the leader finished meanwhile
            lock.unlock();
            if (caller != nullptr) caller->forget(hook);
            w->complete(Got{std::move(r), false});
            return;
          }
          if (left && *left) {  // the hook ran before the waiter was published
            lock.unlock();
            w->complete(Got{std::nullopt, true});
            return;
          }
          w->caller = caller;
          w->hook = hook;
          flight->waiters.push_back(std::move(w));
        },
        boost::asio::use_awaitable);
  }

  void finish(const std::string& key, const std::shared_ptr<Flight>& flight, const std::optional<T>& result) {
    {
      std::lock_guard lock(mu_);
      auto it = flights_.find(key);
      if (it != flights_.end() && it->second == flight) flights_.erase(it);
    }
    std::vector<std::unique_ptr<Waiter>> waiters;
    {
      std::lock_guard lock(flight->mu);
      flight->done = true;
      flight->result = result;
      waiters.swap(flight->waiters);
    }
    for (auto& w : waiters) {
      // The waiter has not resumed yet, so its client's connection (and flag) is alive.
      if (w->hook != 0) w->caller->forget(w->hook);
      w->complete(Got{result, false});
    }
  }

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Flight>> flights_;
};

}  // namespace nfsgw
