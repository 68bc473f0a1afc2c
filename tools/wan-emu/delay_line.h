// The queue of one relay direction when delay or bandwidth shaping is on: chunks are
// stamped with their release time on arrival and leave in arrival order once due.
//
// Pure data structure (no sockets, no timers) so its ordering rules are unit
// tested. Release times are forced to be non-decreasing: if the delay is lowered at
// run time, later chunks wait behind earlier ones instead of overtaking them, because
// TCP byte order must be kept.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace nfsgw::wanemu {

class DelayLine {
 public:
  using Clock = std::chrono::steady_clock;

  void push(Clock::time_point release, std::span<const std::uint8_t> bytes);

  bool empty() const { return chunks_.empty(); }
  std::size_t queued_bytes() const { return queued_; }
  /// Release time of the oldest chunk (only when not empty).
  Clock::time_point next_release() const { return chunks_.front().release; }

  /// How late released chunks were: `now` at release minus their release time.
  /// This is the emulator's own delay error, reported by `stats`.
  struct Lateness {
    std::uint64_t chunks = 0;
    Clock::duration total{};
    Clock::duration max{};
  };

  /// Moves every chunk due at `now` (up to about `max_bytes`, at least one chunk if
  /// any is due) to the end of `out`; returns the number of bytes moved. Adds each
  /// moved chunk's lateness to `late` when given.
  std::size_t take_due(Clock::time_point now, std::vector<std::vector<std::uint8_t>>& out,
                       std::size_t max_bytes = 1u << 20, Lateness* late = nullptr);

  void clear() {
    chunks_.clear();
    queued_ = 0;
  }

 private:
  struct Chunk {
    Clock::time_point release;
    std::vector<std::uint8_t> data;
  };
  std::deque<Chunk> chunks_;
  std::size_t queued_ = 0;
  Clock::time_point last_release_{};
};

}  // namespace nfsgw::wanemu
