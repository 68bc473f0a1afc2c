// What an answer given at once rests on, returned with it by the layer that built
// it (gateway/nfs3_program.h, Now), so that a copy may be given again while all of
// that still holds (gateway/rpc/answer_memo.h keeps the copies).
//
// The layer that answers adds to the basis, as values, each thing it read:
//   - every record it read from the metadata store: the change counter of the
//     record's shard as it was when read (MetadataStore::Peeked::watch). While no
//     watched counter moved, every record read is still what the store holds;
//   - the end of every coherency window it relied on (until): a copy is given only
//     before the earliest of them;
//   - the counters the answer bumped, and by how much (calls, hits, bytes, the
//     metrics' first latency bucket), so that a copy given again counts as the
//     answer it stands for;
//   - what the answers of layers below that it was built from rest on (merge():
//     the data cache's READ rests on the metadata cache's GETATTR and ACCESS, and
//     on the block store's change counter of the file's blocks);
//   - that it built the answer from what it holds (vouch). An answer nobody
//     vouched for (a refusal of the handle translator, an answer resting on
//     something no record holds) is never kept.
// Layers above add their own (a meter its counters) or refuse it. What no record
// holds (the configuration, the handle secret) is the memo's to watch: it forgets
// every copy on a reload.
//
// Nothing is recorded behind the answer's back: a read of the store that the
// answer does not name in its basis cannot happen on the answering path, since
// that path reads records only through functions that take the basis
// (gateway/metacache/store_await.h, peek_now).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cache/clock.h"

namespace nfsgw::cache {

/// A change counter as it was read: the record behind it is unchanged while the
/// counter is.
struct Watch {
  const std::atomic<std::uint64_t>* counter = nullptr;
  std::uint64_t seen = 0;
};

class AnswerBasis {
 public:
  /// A cached LOOKUP reads four records (folder attributes, name, ACCESS answer,
  /// child attributes) and bumps four counters; room for a little more. An answer
  /// that needs more is not kept.
  static constexpr std::size_t kMaxWatches = 6;
  /// A READ counts the most: its own three (reads, hits, bytes), the meter's, and
  /// the two it asked below (GETATTR and ACCESS, two each).
  static constexpr std::size_t kMaxBumps = 8;

  AnswerBasis() = default;
  /// `through_memory_layer`: records are to be read through the store's shared
  /// memory layer, not a thread's memo, so that its LRU order and the disk's
  /// last-used times see them used (a copy given again touches neither).
  /// `count_later`: the answer is tentative, asked for by a layer above that may
  /// pass the call on instead (CallContext::tentative); count() notes its counters
  /// without bumping them, and the asker calls replay_bumps() if it uses the
  /// answer, so that a call is counted once whichever path answers it.
  explicit AnswerBasis(bool through_memory_layer, bool count_later = false)
      : through_memory_layer_(through_memory_layer), count_later_(count_later) {}

  // ---- built by the answering layers ---------------------------------------------------

  void rests_on(Watch w) {
    if (w.counter == nullptr) {  // a read that could not be watched (a record only on disk)
      refused_ = true;
      return;
    }
    for (std::size_t i = 0; i < watches_; ++i)
      if (watch_[i].counter == w.counter) {
        // Read twice with different values: the answer mixes two states.
        if (watch_[i].seen != w.seen) refused_ = true;
        return;
      }
    if (watches_ == kMaxWatches) {
      refused_ = true;
      return;
    }
    watch_[watches_++] = w;
  }
  void until(const Clock& clock, Millis at) {
    if (clock_ != nullptr && clock_ != &clock) refused_ = true;  // one clock per answer
    clock_ = &clock;
    if (at < expires_) expires_ = at;
  }
  /// Adds `amount` to `counter` (relaxed; not for a tentative answer) and notes it
  /// among the counters a copy of this answer bumps.
  void count(std::atomic<std::uint64_t>& counter, std::uint32_t amount = 1) {
    if (!count_later_) counter.fetch_add(amount, std::memory_order_relaxed);
    note_bump(&counter, amount);
  }
  /// Adds what `part` rests on and counts to this basis: an answer built from
  /// another layer's answer (asked at once) rests on all of it. Bumps nothing now
  /// (`part`'s counters are counted by whoever used it: replay_bumps()). A part
  /// nobody vouched for, or refused, makes this one refused.
  void merge(const AnswerBasis& part) {
    if (!part.keepable()) refused_ = true;
    for (std::size_t i = 0; i < part.watches_; ++i) rests_on(part.watch_[i]);
    if (part.clock_ != nullptr) until(*part.clock_, part.expires_);
    for (std::size_t i = 0; i < part.bumps_; ++i) note_bump(part.bump_[i], part.amount_[i]);
  }
  void vouch() { vouched_ = true; }
  void refuse() { refused_ = true; }

  bool through_memory_layer() const { return through_memory_layer_; }

  /// True when the answer may be kept: vouched for, nothing refused.
  bool keepable() const { return vouched_ && !refused_; }

  // ---- using a kept answer -------------------------------------------------------------

  /// True while nothing the answer rests on has changed and no window has ended.
  bool still_holds() const {
    for (std::size_t i = 0; i < watches_; ++i)
      if (watch_[i].counter->load(std::memory_order_acquire) != watch_[i].seen) return false;
    return clock_ == nullptr || clock_->now_ms() < expires_;
  }
  /// Counts a copy given again as the answer it stands for (or a tentative answer
  /// used).
  void replay_bumps() const {
    for (std::size_t i = 0; i < bumps_; ++i) bump_[i]->fetch_add(amount_[i], std::memory_order_relaxed);
  }

  std::size_t watches() const { return watches_; }
  std::size_t bumps() const { return bumps_; }
  Millis expiry() const { return clock_ == nullptr ? kNever : expires_; }

 private:
  void note_bump(std::atomic<std::uint64_t>* counter, std::uint32_t amount) {
    if (bumps_ == kMaxBumps) {
      refused_ = true;
      return;
    }
    amount_[bumps_] = amount;
    bump_[bumps_++] = counter;
  }

  std::array<Watch, kMaxWatches> watch_{};
  std::array<std::atomic<std::uint64_t>*, kMaxBumps> bump_{};
  std::array<std::uint32_t, kMaxBumps> amount_{};
  const Clock* clock_ = nullptr;
  Millis expires_ = kNever;
  std::uint8_t watches_ = 0;
  std::uint8_t bumps_ = 0;
  bool vouched_ = false;
  bool refused_ = false;
  bool through_memory_layer_ = false;
  bool count_later_ = false;
};

}  // namespace nfsgw::cache
