// A per-thread memo of whole answers given at once (procedure_table.h, Procedure::begin).
//
// A cached GETATTR, LOOKUP or ACCESS answered at once still walks every layer: the
// arguments decoded, the handle verified and translated, four records of the
// metadata store read, the child's handle wrapped, the result encoded. On loopback
// that walk cost 2 to 5 µs beyond a NULL call (docs/benchmarks.md). The memo keeps
// the encoded result of such an answer under the call's key (procedure, client
// address, credential, argument bytes) with what it was built from
// (cache/answer_basis.h): the change counters of the store shards it read, the end
// of the earliest window it relied on, and the counters it bumped. A call with the
// same key gets a copy while no watched counter moved and no window ended, counted
// as the answer it stands for. A READ of a small file is kept the same way (its data,
// which the reply carries apart, copied in after the rest of the result) when it
// all fits a slot. Only answers a cache layer vouched for are kept
// (never a refusal or an origin's answer), and nothing of strict exports (they
// never answer at once). What no record holds (exports, squash, handle secret) is
// watched by an epoch that forget_all() moves: a reload calls it.
//
// Every `kUsesBeforeRefresh`th use of a kept answer builds it again through the
// store's shared memory layer, so that its LRU order and the disk's last-used
// times see the records as used.
//
// The counters and clock an answer rests on must outlive the memo, or forget_all()
// must run before they go (nfsgw keeps every export's stack while it runs).
//
// One table per thread (thread_local), slots tagged with their memo's instance, so
// that memos (tests make many) never mix: at most 16,384 answers of up to 480
// bytes of key and result (about 11 MiB per thread); the size comes from
// memory_mb (cache/memory_budget.h, shape()): the default 256 MiB with two threads
// gives the whole size, 64 MiB a quarter. A PHP site's working set of 2,000 files
// (LOOKUP, GETATTR and ACCESS of each: 6,000 answers) did not fit 4,096: the PHP
// mix then ran at 0.62x NULL, and at 0.90x with 16,384 (docs/benchmarks.md).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/answer_basis.h"
#include "cache/memory_budget.h"
#include "cache/thread_table.h"
#include "gateway/call_context.h"

namespace nfsgw::rpc {

class AnswerMemo {
 public:
  static constexpr std::size_t kWays = 4;
  static constexpr std::size_t kSets = 4096;
  static constexpr std::uint32_t kUsesBeforeRefresh = 64;
  /// Room for a key and its result: a LOOKUP of a name of up to about 100 bytes
  /// with both attributes. Larger ones are not kept.
  static constexpr std::size_t kInlineBytes = 480;

  AnswerMemo();
  AnswerMemo(const AnswerMemo&) = delete;
  AnswerMemo& operator=(const AnswerMemo&) = delete;

  /// Writes the key of a call into `key`: everything besides the records that an
  /// answer given at once depends on.
  static void make_key(std::string& key, std::uint32_t prog, std::uint32_t vers, std::uint32_t proc,
                       const CallContext& ctx, std::span<const std::uint8_t> args);

  /// Where a call's answer is kept: a hash of its program, version, procedure and
  /// argument bytes only, known before its credential is decoded. Calls with the
  /// same arguments from other callers share it (and its set), and the whole key
  /// tells them apart.
  static std::size_t call_hash(std::uint32_t prog, std::uint32_t vers, std::uint32_t proc,
                               std::span<const std::uint8_t> args);
  /// Starts loading the slots that may hold answers under `hash`, so that they
  /// arrive while the credential is decoded. Changes nothing.
  void prefetch(std::size_t hash) const;

  enum class Found { No, Refresh, Yes };
  /// Appends the kept result for `key` (under `hash`) to `out` and replays its
  /// counters (Yes); No when nothing usable is kept; Refresh when the kept one is
  /// due to be built again through the memory layer
  /// (CallContext::refresh_records).
  Found answer(std::size_t hash, std::string_view key, std::vector<std::uint8_t>& out) const;

  /// The epoch to record an answer under: read before it is built, so that an
  /// answer built while a reload ran is never kept as the new configuration's.
  std::uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  /// Keeps `result` (the encoded result, no RPC header) for `key` when `deps` allows
  /// and it fits; `data`, when not empty, is a READ's data that the encoding left
  /// apart (ReplyRecord::data): kept after `result`, with its XDR padding.
  void keep(std::size_t hash, std::string_view key, std::uint64_t epoch, std::span<const std::uint8_t> result,
            std::span<const std::uint8_t> data, const cache::AnswerBasis& deps) const;

  /// What a set of the per-thread table costs (the slots own nothing on the heap).
  static cache::MemoShape shape();
  /// The sets of the tables threads make from now on (before they start).
  static void set_sets(std::size_t sets);
  /// Makes the calling thread's table now (cache::ThreadTable::make_for_this_thread).
  static void make_for_this_thread();

  /// Every kept answer is void from now on (a reload).
  void forget_all() { epoch_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  /// Key and result inline, after what a hit reads first: a hit reads one run of
  /// neighbouring cache lines instead of two more heap blocks (with the key and
  /// result on the heap, comparing the key and copying the result were a third of
  /// a hit's cost, in cache misses).
  struct Slot {
    std::uint64_t epoch = 0;
    std::uint32_t uses = 0;
    std::uint16_t key_bytes = 0;
    std::uint16_t result_bytes = 0;
    cache::AnswerBasis deps;
    std::array<char, kInlineBytes> bytes;  // the key, then the result

    std::string_view key() const { return {bytes.data(), key_bytes}; }
  };
  /// The probe lines of every set apart from the slots (cache/thread_table.h): 32
  /// KiB that stay in a core's cache, so that a probe costs no miss and a hit one
  /// run of its slot's lines (with each set's hashes beside its slots, the probe
  /// itself missed the cache, 60% of a hit's time). Slots are owned by the memo.
  using Table = cache::ThreadTable<Slot, kWays, kSets>;
  static auto holding(std::string_view key) {
    return [key](const Slot& s) { return s.key() == key; };
  }

  const std::uint64_t id_;  // owns this memo's slots
  std::atomic<std::uint64_t> epoch_{1};
};

}  // namespace nfsgw::rpc
