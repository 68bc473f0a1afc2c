// One client TCP connection: reads record-marked calls, runs many of them at once,
// and writes replies in whatever order they complete.
//
// Everything a connection holds is bounded. A call counts from the moment its
// record is read until its reply is written to the socket (or dropped because the
// connection closed), and with it the bytes it holds: its record while it runs,
// and its reply, reserved at the size the dispatcher expects before the call runs
// and then held at its real size until written. The connection stops reading
// while it is at its own limits (ConnectionLimits) or the server's (CallBudget), so
// a client that sends calls and never reads its replies pins a bounded amount of
// memory and then simply waits; its idle timeout closes it if nothing moves.
#pragma once

#include <utility>

#include <chrono>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio.hpp>

#include "cache/monotonic_clock.h"
#include "gateway/awaitable.h"
#include "gateway/rpc/dispatcher.h"
#include "gateway/server/call_budget.h"

namespace nfsgw::server {

struct ConnectionLimits {
  std::size_t max_record_bytes = 4u << 20;
  std::size_t max_calls_in_flight = 128;     // reading pauses at this many
  std::size_t max_pending_bytes = 16u << 20;  // reading pauses above this (records, replies)
  /// Closes a connection on which nothing moved (no bytes read, no reply written)
  /// for this long while no call of it is running. Zero: never.
  std::chrono::milliseconds idle_timeout{0};
};

/// The time connections stamp their activity with (idle_timeout). The clock is
/// injected (a test moves it), and reading it is a virtual call: a connection's
/// reads and writes take instead the time the server's last idle sweep read, so
/// the clock is read once per sweep, not once per call. A stamp is thus late by
/// at most one sweep period, never ahead.
class ActivityClock {
 public:
  using time_point = cache::MonotonicClock::time_point;
  explicit ActivityClock(const cache::MonotonicClock& clock) : clock_(clock), last_(clock.now()) {}
  /// Reads the clock; stamp() gives that time from now on.
  time_point sample() {
    const time_point now = clock_.now();
    last_.store(now, std::memory_order_relaxed);
    return now;
  }
  time_point stamp() const { return last_.load(std::memory_order_relaxed); }

 private:
  const cache::MonotonicClock& clock_;
  std::atomic<time_point> last_;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  /// `budget` must already count this connection (CallBudget::open_connection); the
  /// connection gives its count back when destroyed.
  /// `clock` stamps activity; the server samples it and calls check_idle().
  Connection(boost::asio::ip::tcp::socket socket, const rpc::Dispatcher& dispatcher,
             ConnectionLimits limits, std::shared_ptr<CallBudget> budget,
             std::shared_ptr<const ActivityClock> clock);
  ~Connection();

  /// Starts the read loop; the connection keeps itself alive until closed.
  void start();
  /// Closes the socket; in-flight calls complete and their replies are dropped.
  void close();
  /// Closes the connection when nothing moved on it for idle_timeout plus `slack`
  /// before `now` while none of its calls ran (the server's idle sweep; `slack`
  /// covers how late activity stamps may be).
  void check_idle(ActivityClock::time_point now, std::chrono::milliseconds slack);

 private:
  Awaitable<void> read_loop();
  /// Waits until one more call of `bytes` may start, and counts it; false when the
  /// connection closed meanwhile.
  Awaitable<bool> admit(std::size_t bytes);
  /// Slows a client that sends records no procedure answers (garbage, unknown
  /// programs): after a few in a row, each one more waits twice as long, up to 1 s.
  Awaitable<void> throttle_refused(bool known_procedure);
  Awaitable<void> serve_call(std::vector<std::uint8_t> record, std::size_t reserved);
  void reply_ready(rpc::ReplyRecord reply, std::size_t reserved);
  Awaitable<void> write_loop();
  /// Gives back one call and the `bytes` it held, and wakes the read loop.
  void release_call(std::size_t bytes);
  void wake_reader();
  void touch() { last_activity_ = clock_->stamp(); }

  boost::asio::ip::tcp::socket socket_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  const rpc::Dispatcher& dispatcher_;
  const ConnectionLimits limits_;
  const std::shared_ptr<CallBudget> budget_;
  const std::shared_ptr<const ActivityClock> clock_;
  std::string peer_;

  // Guarded by strand_.
  std::size_t in_flight_ = 0;     // calls read and not yet written or dropped
  std::size_t running_ = 0;       // of those, calls the dispatcher has not answered
  std::size_t held_bytes_ = 0;    // what in_flight_ calls hold of the budget
  boost::asio::steady_timer call_done_;  // wakes the read loop when a slot frees
  boost::asio::steady_timer pause_;      // throttle_refused()
  std::size_t refused_in_a_row_ = 0;
  bool waiting_for_server_ = false;      // admit() waits on the server's budget, not ours
  ActivityClock::time_point last_activity_;
  std::deque<rpc::ReplyRecord> replies_;
  bool writing_ = false;
  bool closed_ = false;
  /// Raised once the client is gone (the connection closed, or the client's FIN
  /// read): work still waiting for the origin on its behalf is abandoned
  /// (CallContext::caller_gone).
  const std::shared_ptr<CallerGone> gone_ = std::make_shared<CallerGone>();
};

}  // namespace nfsgw::server
