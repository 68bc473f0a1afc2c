// What an answer given at once was built from, so that a copy of it may be given
// again while all of that still holds (gateway/rpc/answer_memo.h keeps the copies).
//
// While a thread records (a Recording on its stack), the pieces that build an
// answer say what it rests on:
//   - the metadata store, for every record it peeks, the change counter of the
//     record's shard as it was when the record was read (watch): while no watched
//     counter moved, every record read is still what the store holds;
//   - the coherency windows, the end of every window the answer relied on
//     (expires): the copy is given only before the earliest of them;
//   - the counters a hit bumps (calls, hits, the metrics' first latency bucket), so
//     that a copy given again counts as the answer it stands for (bump);
//   - the cache layer that answered, that it built the answer from what it holds
//     (vouch). An answer nobody vouched for (a refusal of the handle translator, a
//     layer that forwards) is never kept;
//   - anything that went into the answer without being recorded refuses it.
// What no record holds (the configuration, the handle secret) is the keeper's to
// watch: it forgets every copy on a reload.
//
// Knows nothing of RPC: the store and the windows only call the static current().
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cache/clock.h"

namespace nfsgw::cache {

class AnswerDeps {
 public:
  /// A cached LOOKUP reads four records (folder attributes, name, ACCESS answer,
  /// child attributes) and bumps four counters; room for a little more. An answer
  /// that needs more is not kept.
  static constexpr std::size_t kMaxWatches = 6;
  static constexpr std::size_t kMaxBumps = 6;

  // ---- recording (by the store, the windows and the cache layers) -------------------

  void watch(const std::atomic<std::uint64_t>& counter, std::uint64_t seen) {
    for (std::size_t i = 0; i < watches_; ++i)
      if (watch_[i].counter == &counter) {
        // Read twice with different values: the answer mixes two states.
        if (watch_[i].seen != seen) refused_ = true;
        return;
      }
    if (watches_ == kMaxWatches) {
      refused_ = true;
      return;
    }
    watch_[watches_++] = {&counter, seen};
  }
  void expires(const Clock& clock, Millis at) {
    if (clock_ != nullptr && clock_ != &clock) refused_ = true;  // one clock per answer
    clock_ = &clock;
    if (at < expires_) expires_ = at;
  }
  void bump(std::atomic<std::uint64_t>& counter) {
    if (bumps_ == kMaxBumps) {
      refused_ = true;
      return;
    }
    bump_[bumps_++] = &counter;
  }
  void vouch() { vouched_ = true; }
  void refuse() { refused_ = true; }

  /// Records are to be read through the store's shared memory layer, not a
  /// thread's memo, so that its LRU order and the disk's last-used times see them
  /// used (a copy given again touches neither).
  bool through_memory_layer() const { return through_memory_layer_; }
  void set_through_memory_layer(bool yes) { through_memory_layer_ = yes; }

  /// True when the answer may be kept: vouched for, nothing refused.
  bool keepable() const { return vouched_ && !refused_; }

  // ---- using a kept answer -------------------------------------------------------------

  /// True while nothing the answer rests on has changed and no window has ended.
  bool still_holds() const {
    for (std::size_t i = 0; i < watches_; ++i)
      if (watch_[i].counter->load(std::memory_order_acquire) != watch_[i].seen) return false;
    return clock_ == nullptr || clock_->now_ms() < expires_;
  }
  /// Counts a copy given again as the answer it stands for.
  void replay_bumps() const {
    for (std::size_t i = 0; i < bumps_; ++i) bump_[i]->fetch_add(1, std::memory_order_relaxed);
  }

  std::size_t watches() const { return watches_; }
  std::size_t bumps() const { return bumps_; }
  Millis expiry() const { return clock_ == nullptr ? kNever : expires_; }

  // ---- the calling thread's recorder ---------------------------------------------------

  /// The deps being recorded on this thread, or nullptr.
  static AnswerDeps* current() { return current_; }

  /// Adds one to `counter` (relaxed) and, while an answer is recorded, notes it
  /// among the counters a copy of that answer bumps.
  static void count(std::atomic<std::uint64_t>& counter) {
    counter.fetch_add(1, std::memory_order_relaxed);
    if (current_ != nullptr) current_->bump(counter);
  }

  /// Makes `deps` this thread's recorder for its lifetime (not nested).
  class Recording {
   public:
    explicit Recording(AnswerDeps& deps) : before_(current_) { current_ = &deps; }
    ~Recording() { current_ = before_; }
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;

   private:
    AnswerDeps* before_;
  };

 private:
  struct Watch {
    const std::atomic<std::uint64_t>* counter = nullptr;
    std::uint64_t seen = 0;
  };
  static inline thread_local AnswerDeps* current_ = nullptr;

  std::array<Watch, kMaxWatches> watch_{};
  std::array<std::atomic<std::uint64_t>*, kMaxBumps> bump_{};
  const Clock* clock_ = nullptr;
  Millis expires_ = kNever;
  std::uint8_t watches_ = 0;
  std::uint8_t bumps_ = 0;
  bool vouched_ = false;
  bool refused_ = false;
  bool through_memory_layer_ = false;
};

}  // namespace nfsgw::cache
