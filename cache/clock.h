// The time a cache entry's window is measured against.
//
// Windows are absolute wall-clock times (milliseconds since the Unix epoch) stored
// with each entry, so that after a restart an entry still inside its window is
// served and one past it is revalidated. The clock is injected wherever a window
// is decided, so that every rule can be unit-tested with a clock the test moves.
#pragma once

#include <atomic>
#include <cstdint>

namespace nfsgw::cache {

/// Milliseconds since the Unix epoch.
using Millis = std::int64_t;
/// An expiry that never comes ("immutable" exports).
constexpr Millis kNever = INT64_MAX;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Millis now_ms() const = 0;
};

/// The system's wall clock.
Clock& wall_clock();

/// A clock that moves only when told to (tests).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Millis start = 1'000'000'000'000) : now_(start) {}
  Millis now_ms() const override { return now_.load(); }
  void advance(Millis ms) { now_ += ms; }
  void set(Millis ms) { now_ = ms; }

 private:
  std::atomic<Millis> now_;
};

}  // namespace nfsgw::cache
