// The handle codec's per-thread memo: handles this thread verified or wrapped lately.
//
// Every call verifies its handle's MAC, and every LOOKUP, CREATE or READDIRPLUS
// answer signs the handles it returns: an HMAC-SHA256 each, the largest cost of a
// cached LOOKUP after the RPC itself. Both are pure functions while the codec lives:
// a handle whose exact bytes were verified before is valid now (the secret does not
// change), and an origin handle wrapped before gets the same gateway handle (an
// embedded handle is deterministic, a mapped id never changes once written). So each
// thread keeps both directions of the handles it used last, tagged with the codec
// instance. A slot answers only for a key equal byte for byte, never by hash alone;
// what a forged handle can do is evict entries, costing HMACs, not trust.
//
// Four-way set-associative, at most 2,048 sets a direction (about 2.5 MiB a
// thread); the size comes from memory_mb (cache/memory_budget.h, shape()). (With two ways a random 2,000-handle working set missed about one call
// in six in callgrind: an HMAC each, 4 % of a cached GETATTR's instructions.) Not
// thread-safe by design: one table per thread and direction (thread_table.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cache/memory_budget.h"
#include "cache/thread_table.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::cache {

class HandleMemo {
 public:
  enum class Direction { Unwrap, Wrap };
  struct Slot {
    std::uint32_t export_id = 0;
    std::uint8_t kind = 0;
    nfs3::FileHandle key;    // Unwrap: the gateway handle; Wrap: the origin handle
    nfs3::FileHandle value;  // Unwrap: the origin handle (empty for a root); Wrap: the gateway handle
  };

  /// What `codec` kept in direction `d` for `key` of export `export_id`, or nullptr.
  static const Slot* find(Direction d, std::uint64_t codec, std::size_t hash, std::uint32_t export_id,
                          const nfs3::FileHandle& key) {
    return d == Direction::Unwrap ? find_in<Unwraps>(codec, hash, export_id, key)
                                  : find_in<Wraps>(codec, hash, export_id, key);
  }
  /// Keeps `slot` of `codec` in direction `d`, in place of what it kept for the same key.
  static void keep(Direction d, std::uint64_t codec, std::size_t hash, Slot slot) {
    if (d == Direction::Unwrap) {
      keep_in<Unwraps>(codec, hash, std::move(slot));
    } else {
      keep_in<Wraps>(codec, hash, std::move(slot));
    }
  }

  /// What a set costs, in both directions (the slots own nothing on the heap).
  static MemoShape shape() {
    return {Unwraps::table_bytes(1) + Wraps::table_bytes(1), Unwraps::kSets};
  }
  /// The sets of the tables threads make from now on (before they start).
  /// Makes the calling thread's tables now (ThreadTable::make_for_this_thread).
  static void make_for_this_thread() {
    Unwraps::make_for_this_thread();
    Wraps::make_for_this_thread();
  }
  static void set_sets(std::size_t sets) {
    Unwraps::set_sets(sets);
    Wraps::set_sets(sets);
  }

 private:
  // A table per direction, so that an origin handle and a gateway handle with the
  // same bytes never answer for each other.
  struct UnwrapUse;
  struct WrapUse;
  using Unwraps = ThreadTable<Slot, 4, 2048, UnwrapUse>;
  using Wraps = ThreadTable<Slot, 4, 2048, WrapUse>;

  /// A slot answers only for a key equal byte for byte, in the same export.
  static auto same_key(std::uint32_t export_id, const nfs3::FileHandle& key) {
    return [export_id, &key](const Slot& s) { return s.export_id == export_id && s.key == key; };
  }
  template <typename Table>
  static const Slot* find_in(std::uint64_t codec, std::size_t hash, std::uint32_t export_id,
                             const nfs3::FileHandle& key) {
    return Table::find(Table::set_of(hash), codec, hash, same_key(export_id, key));
  }
  template <typename Table>
  static void keep_in(std::uint64_t codec, std::size_t hash, Slot slot) {
    Table::place(Table::set_of(hash), codec, hash, same_key(slot.export_id, slot.key)) = std::move(slot);
  }
};

}  // namespace nfsgw::cache
