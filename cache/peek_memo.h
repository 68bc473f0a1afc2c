// A small per-thread memo of the metadata store's recent small reads.
//
// A cached LOOKUP reads four records (the folder's attributes, the name, the
// caller's ACCESS answer, the child's attributes), and the folder's two are read by
// every LOOKUP in that folder, from every thread. Through the shared memory layer
// each read takes the shard's mutex, moves the entry in its LRU list and bumps the
// record's reference count: writes to cache lines the other core writes too, so the
// hottest records cost the most. The memo keeps, per thread, its own copy of a
// record it read, with the shard's change counter at that moment: while the counter
// is unchanged nothing in the shard changed (every put, update, erase, range erase
// and swept record bumps it), so the copy is still what the store holds, and it is
// served without a lock. A slot first shares the store's record (filling it costs
// no allocation, so a memo that thrashes under random reads costs little); once
// it has been used `kCopyAfterUses` times it gets this thread's own copy, whose
// reference count no other core writes. Every `kUsesBeforeRefresh`th use goes
// through the memory layer again, so that its LRU order and the disk's last-used
// times still see the record as hot.
//
// Not thread-safe by design: one table per thread (thread_table.h), slots tagged
// with the store instance they came from, so stores (tests make many) never mix. A
// thread's table is at most 8,192 slots; its size comes from memory_mb
// (cache/memory_budget.h, shape()), which charges the slots, their keys and the
// records' own copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "cache/memory_budget.h"
#include "cache/thread_table.h"

namespace nfsgw::cache {

class PeekMemo {
 public:
  static constexpr std::uint32_t kUsesBeforeRefresh = 64;
  static constexpr std::uint32_t kCopyAfterUses = 2;

  struct Slot {
    std::uint64_t writes = 0;  // the shard's change counter when filled
    std::uint32_t uses = 0;
    bool own = false;  // `value` is this thread's own copy, not the store's record
    std::string key;
    std::shared_ptr<const void> value;
  };
  // Set-associative: a cached LOOKUP alone reads two records per name (the name and
  // the child's attributes), so a hot folder of a few thousand files needs several
  // thousand slots, and a direct-mapped table of that size still loses a third of
  // its records to collisions. Four ways with round-robin replacement keep a
  // working set up to about the table's size: 2,048 sets, 8,192 slots per thread.
  // Slots are owned by the store they came from.
  using Table = ThreadTable<Slot, 4, 2048>;
  using Set = Table::Set;

  /// What a set costs: its probe data and slots, and per slot a key on the heap
  /// (kind byte and encoded key: an export id and a handle, up to about 55 bytes in
  /// a 64-byte block) and this thread's copy of a record (an attribute record, the
  /// largest memoized one, with its control block in a 144-byte block).
  static constexpr std::size_t kKeyHeapBytes = 64;
  static constexpr std::size_t kCopyBytes = 144;
  static MemoShape shape() {
    return {Table::table_bytes(1) + Table::kWays * (kKeyHeapBytes + kCopyBytes), Table::kSets};
  }
  /// The sets of the tables threads make from now on (before they start).
  static void set_sets(std::size_t sets) { Table::set_sets(sets); }
  /// Makes the calling thread's table now (ThreadTable::make_for_this_thread).
  static void make_for_this_thread() { Table::make_for_this_thread(); }

  /// This thread's set for `hash`.
  static Set& set_of(std::size_t hash) { return Table::set_of(hash); }

  /// The way holding `key` of `store` (its value possibly outdated), or nullptr.
  static Slot* find(Set& set, std::uint64_t store, std::size_t hash, std::string_view key) {
    return Table::find(set, store, hash, [key](const Slot& s) { return s.key == key; });
  }

  /// True when `s`, filled at change count `writes`, may be served: nothing in its
  /// shard changed since, and it is not yet time to refresh.
  static bool usable(Slot& s, std::uint64_t writes) {
    if (s.writes != writes) return false;
    return ++s.uses < kUsesBeforeRefresh;
  }

  /// True when the slot's record is used often enough to be worth a copy of its own.
  static bool wants_copy(const Slot& s) { return !s.own && s.uses >= kCopyAfterUses; }

  /// Where `key` of `store` goes, already owned by it (ThreadTable::place): fill it.
  static Slot& victim(Set& set, std::uint64_t store, std::size_t hash, std::string_view key) {
    return Table::place(set, store, hash, [key](const Slot& s) { return s.key == key; });
  }

  /// Fills `s` (from victim()) with `key`'s record, read at change count `writes`.
  static void fill(Slot& s, std::string_view key, std::uint64_t writes, std::shared_ptr<const void> record) {
    s.writes = writes;
    s.uses = 0;
    s.own = false;
    s.key.assign(key);
    s.value = std::move(record);
  }
};

}  // namespace nfsgw::cache
