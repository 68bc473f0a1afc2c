// Waiting in tests: on the condition that shows a thing happened, never for a time
// guessed to be long enough. The one place in tests/ that may sleep (the layering
// test, tests/layering, refuses a sleep anywhere else).
//
//   wait_until(done, timeout, what)  polls `done` with a short back-off until it
//                                    holds; fails with "what" when the timeout passes.
//   wait_past(point)                 returns once point's clock reads it or later: a
//                                    window measured from a time the test took has
//                                    certainly passed (not "slept long enough").
//   wait_until_settled(read, ...)    returns a value once it has stopped changing.
//   Pacer                            spreads a load loop's steps over time.
//   pass_time(duration, why)         when the passing of time itself is what is
//                                    tested (a client that stays quiet): never as a
//                                    way to let something happen.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>

namespace nfsgw::test {

namespace waiting_detail {
using Steady = std::chrono::steady_clock;
/// The polls' back-off: from 1 ms, doubling, never above 20 ms.
constexpr std::chrono::milliseconds kFirstPoll{1};
constexpr std::chrono::milliseconds kLongestPoll{20};

}  // namespace waiting_detail

/// Polls `done` (at once, then after 1, 2, 4 ... up to 20 ms) until it returns true
/// or `timeout` passes; `done` is asked once more at the end. True in an `if`; in
/// EXPECT_TRUE/ASSERT_TRUE a failure says what was waited for and how long.
/// `longest_poll` spaces out a `done` that is costly itself (a whole mount).
template <class Done>
::testing::AssertionResult wait_until(Done&& done, std::chrono::milliseconds timeout, std::string_view what,
                                      std::chrono::milliseconds longest_poll = waiting_detail::kLongestPoll) {
  using namespace waiting_detail;
  const auto give_up = Steady::now() + timeout;
  for (auto poll = kFirstPoll;; poll = std::min(poll * 2, std::max(longest_poll, kFirstPoll))) {
    if (done()) return ::testing::AssertionSuccess();
    const auto now = Steady::now();
    if (now >= give_up) break;
    std::this_thread::sleep_until(std::min(now + poll, give_up));
  }
  if (done()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "waited " << timeout.count() << " ms for " << what
                                       << "; it did not happen";
}

/// Polls `read()` until its value has not moved for `quiet_for` (at most `timeout`)
/// and returns the last value: for a thing that stops by itself, where no event
/// says so (a server that stops reading at its limit). `moved(before, now)` says
/// whether a new reading counts as a change (by default: any difference);
/// `longest_poll` spaces out a `read` that is costly itself (a CLI run).
template <class Read, class Moved = std::not_equal_to<>>
auto wait_until_settled(Read&& read, std::chrono::milliseconds quiet_for, std::chrono::milliseconds timeout,
                        Moved moved = {}, std::chrono::milliseconds longest_poll = waiting_detail::kLongestPoll) {
  using namespace waiting_detail;
  auto last = read();
  auto quiet_since = Steady::now();
  const auto give_up = quiet_since + timeout;
  for (auto poll = kFirstPoll;; poll = std::min(poll * 2, std::max(longest_poll, kFirstPoll))) {
    const auto now = Steady::now();
    if (now - quiet_since >= quiet_for || now >= give_up) return last;
    std::this_thread::sleep_until(std::min({now + poll, quiet_since + quiet_for, give_up}));
    auto value = read();
    if (moved(last, value)) {
      last = std::move(value);
      quiet_since = Steady::now();
      poll = kFirstPoll;
    }
  }
}

/// Returns once `Clock::now()` reads `point` or later, looking at the clock at
/// least every 20 ms (so a window the test measured from a time it took has
/// certainly passed, on steady_clock or on the wall clock of the cache windows).
/// For waits on a time, not on an event: use wait_until for those.
template <class Clock, class Duration>
void wait_past(std::chrono::time_point<Clock, Duration> point) {
  for (auto now = Clock::now(); now < point; now = Clock::now())
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(point - now, waiting_detail::kLongestPoll));
}

/// Spreads the steps of a load loop over time: next() returns no earlier than
/// `interval` after the previous next() returned (or the pacer was made). A step
/// that took longer is not followed by a pause; no burst makes up for it either.
class Pacer {
 public:
  explicit Pacer(std::chrono::steady_clock::duration interval)
      : interval_(interval), last_(std::chrono::steady_clock::now()) {}
  /// Waits until the next step is due.
  void next() {
    std::this_thread::sleep_until(last_ + interval_);
    last_ = std::chrono::steady_clock::now();
  }

 private:
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point last_;
};

/// Lets `duration` pass, when that is the thing tested (a client that stays idle,
/// a load that goes on for a while, an origin that stays away). `why` names it at
/// the call site; it is not used otherwise.
inline void pass_time(std::chrono::steady_clock::duration duration, std::string_view why) {
  (void)why;
  std::this_thread::sleep_until(std::chrono::steady_clock::now() + duration);
}

}  // namespace nfsgw::test
