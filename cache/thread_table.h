// One per-thread, set-associative table: the storage, set choice, lookup and
// replacement of the memos that keep a thread's recent answers (peek_memo.h,
// handle_memo.h, gateway/rpc/answer_memo.h). What a slot holds and when it may be
// served is each memo's own business; how slots are found and replaced is here.
//
// Layout. Each set has 32 bytes of probe data (the ways' hash tags side by side,
// the replacement cursor, where its slots are), apart from the slots: a lookup
// reads that half cache line and, at most, the one slot whose tag matches. With
// each slot's own hash, a probe touched four or five lines; with the hashes beside
// large slots, the probe lines of a big table fell out of the cache and the probe
// itself missed (60 % of a kept answer's time, answer_memo.h). A tag is 32 bits of
// the hash, not all 64, so that four of them, the cursor and the pointer fit.
//
// A tag is only a filter: a slot answers when its owner and its whole key (the
// caller's predicate) are equal, never by hash alone, so a key chosen to collide
// can evict entries but never be served another's.
//
// Not thread-safe by design: each thread has its own table (thread_local), made on
// first use, so that reads and writes touch no line another core writes. Slots are
// tagged with the instance that owns them (new_table_owner()), so that instances
// (tests make many) never mix and need no cleanup when they go.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

#include <sys/mman.h>

namespace nfsgw::cache {

/// A fresh owner id (never 0) for an instance whose slots must not mix with
/// others'. One counter for every table: an id is never reused in the process.
inline std::uint64_t new_table_owner() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

/// `Value` is what a slot holds besides its owner; `Use` tells apart tables of the
/// same value type and shape (each instantiation has its own per-thread table).
/// `Sets` is the most sets a table has; the process may choose fewer before its
/// threads make their tables (set_sets(): the memos are sized from memory_mb,
/// cache/memory_budget.h).
template <typename Value, std::size_t Ways, std::size_t Sets, typename Use = Value>
class ThreadTable {
 public:
  static_assert(Ways >= 1 && Ways <= 4, "a set's tags, cursor and slot pointer fit half a cache line");
  static_assert(std::has_single_bit(Sets), "the set index is the low bits of the mixed hash");
  static constexpr std::size_t kSets = Sets;  // the most
  static constexpr std::size_t kWays = Ways;
  static constexpr std::size_t kMinSets = Sets < 16 ? Sets : 16;

  struct Slot {
    std::uint64_t owner = 0;  // 0: empty
    Value value{};
  };
  /// One set's probe data; its slots are in the table's slot array.
  struct alignas(32) Set {
    std::array<std::uint32_t, Ways> tags{};
    std::uint8_t next = 0;  // the way the next new key replaces (round robin)
    std::uint8_t made = 0;  // bit i: slot i is constructed (see Table)
    Slot* ways = nullptr;
  };
  static_assert(sizeof(Set) == 32);

  /// The sets of the tables made from now on: `sets` rounded down to a power of
  /// two, within [kMinSets, kSets]. Tables made before keep their size (a thread
  /// makes its own on first use: call this before the threads start).
  static void set_sets(std::size_t sets) {
    sets = std::clamp(sets, kMinSets, kSets);
    sets_wanted().store(std::bit_floor(sets), std::memory_order_relaxed);
  }
  /// The sets of a table made now.
  static std::size_t sets() { return sets_wanted().load(std::memory_order_relaxed); }
  /// Bytes of a table of `sets` sets, the slots' own memory only (what a slot's
  /// value owns on the heap is the memo's to add).
  static constexpr std::size_t table_bytes(std::size_t sets) { return sets * (sizeof(Set) + Ways * sizeof(Slot)); }

  /// The set of `hash` in a table of `sets` sets: its low bits after folding bits 29
  /// and up into them, so that a hash whose low bits vary little still spreads over
  /// every set (the memos' hashes are well mixed already; this is cheap insurance).
  /// The tag is the high 32 bits: two keys of one set share it about once in four
  /// billion, and then their whole keys tell them apart.
  static std::size_t set_index(std::size_t hash, std::size_t sets = Sets) { return (hash ^ (hash >> 29)) & (sets - 1); }
  static std::uint32_t tag_of(std::size_t hash) { return static_cast<std::uint32_t>(hash >> 32); }

  /// Makes this thread's table now, its memory populated in one system call and
  /// then touched once a page from this thread, instead of paying for that on
  /// first use (a server thread calls it before it serves: after a restart the
  /// first calls paid for it, populate()). Does nothing when the table exists.
  static void make_for_this_thread() {
    auto& table = thread_table();
    if (table) return;
    table = std::make_unique<Table>(sets());
    populate(table->slots, table->count * Ways * sizeof(Slot));
  }

  /// This thread's set for `hash`; the table is made on first use (table_bytes()).
  static Set& set_of(std::size_t hash) {
    auto& table = thread_table();
    if (!table) table = std::make_unique<Table>(sets());
    return table->sets[set_index(hash, table->count)];
  }
  /// The same, or nullptr while this thread has no table (a reader that should not
  /// allocate one just to miss).
  static Set* set_if_made(std::size_t hash) {
    Table* table = thread_table().get();
    return table != nullptr ? &table->sets[set_index(hash, table->count)] : nullptr;
  }

  /// The value `owner` keeps in `set` under `hash` for which `same_key(value)`
  /// holds, or nullptr.
  template <typename SameKey>
  static Value* find(Set& set, std::uint64_t owner, std::size_t hash, SameKey&& same_key) {
    Slot* s = slot_holding(set, owner, hash, same_key);
    return s != nullptr ? &s->value : nullptr;
  }

  /// The slot to fill for a key of `owner` under `hash`: the one that holds the key
  /// already (its value outdated), else an empty one, else the next in turn. It is
  /// tagged for the key at once; the caller writes the whole value.
  template <typename SameKey>
  static Value& place(Set& set, std::uint64_t owner, std::size_t hash, SameKey&& same_key) {
    const Slot* held = slot_holding(set, owner, hash, same_key);
    std::size_t way = held != nullptr ? static_cast<std::size_t>(held - set.ways) : Ways;
    for (std::size_t i = 0; i < Ways && way == Ways; ++i)
      if (!made(set, i) || set.ways[i].owner == 0) way = i;
    if (way == Ways) {
      way = set.next;
      set.next = static_cast<std::uint8_t>((way + 1) % Ways);
    }
    if (!made(set, way)) {
      new (&set.ways[way]) Slot{};
      set.made = static_cast<std::uint8_t>(set.made | (1u << way));
    }
    set.tags[way] = tag_of(hash);
    set.ways[way].owner = owner;
    return set.ways[way].value;
  }

  /// Starts loading the slots that may hold a key under `hash`, so that they
  /// arrive while the caller does other work. Changes nothing.
  static void prefetch(const Set& set, std::size_t hash) {
    const std::uint32_t tag = tag_of(hash);
    for (std::size_t i = 0; i < Ways; ++i) {
      if (set.tags[i] != tag) continue;
      const char* slot = reinterpret_cast<const char*>(&set.ways[i]);
      for (std::size_t off = 0; off < sizeof(Slot); off += 64) __builtin_prefetch(slot + off);
    }
  }

 private:
  /// The slots are raw memory, each constructed when place() first fills it: a
  /// table is megabytes (the answer memo's, 4,096 sets of four 560-byte slots),
  /// and constructing them all up front wrote every page of it in the thread's
  /// first call: the page faults a profile of the first walk after a restart
  /// showed (docs/benchmarks.md, "The first walk after kill -9: the memo tables'
  /// pages"). Now a page is touched when a slot on it is first used.
  struct Table {
    std::size_t count;
    std::unique_ptr<Set[]> sets;
    Slot* slots;
    explicit Table(std::size_t n)
        : count(n),
          sets(new Set[n]),
          slots(static_cast<Slot*>(::operator new(n * Ways * sizeof(Slot), std::align_val_t{alignof(Slot)}))) {
      for (std::size_t i = 0; i < n; ++i) sets[i].ways = &slots[i * Ways];
    }
    ~Table() {
      for (std::size_t i = 0; i < count; ++i)
        for (std::size_t w = 0; w < Ways; ++w)
          if (made(sets[i], w)) sets[i].ways[w].~Slot();
      ::operator delete(slots, std::align_val_t{alignof(Slot)});
    }
    Table(const Table&) = delete;  // the sets point into the slots
    Table& operator=(const Table&) = delete;
  };
  static bool made(const Set& set, std::size_t way) { return ((set.made >> way) & 1u) != 0; }
  /// The pages written in one system call (best effort: the kernel may not know
  /// MADV_POPULATE_WRITE, before 5.14; then the touches below fault them in), then
  /// one byte of each page written from user space. MADV_POPULATE_WRITE fills the
  /// kernel's page tables but not what a hypervisor keeps beside them: on a VM with
  /// shadow paging (the 2-core test VM, a PVM guest) the first user access to each
  /// populated page still cost 5-7 us, not counted as a page fault by the guest
  /// (a 9 MiB buffer: 5.2-6.8 us a page on its first pass, 0.03 us once touched).
  /// The profile of the first walk after kill -9 showed it in AnswerMemo::keep and
  /// the handle and peek memos (docs/benchmarks.md). The slots are raw storage, not
  /// yet constructed (place() constructs them), so writing a zero there is harmless.
  static void populate(void* p, std::size_t bytes) {
    const std::uintptr_t page = 4096, first = reinterpret_cast<std::uintptr_t>(p),
                         start = (first + page - 1) & ~(page - 1), end = (first + bytes) & ~(page - 1);
    if (end > start) (void)::madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_WRITE);
    volatile unsigned char* const bytes_of = static_cast<unsigned char*>(p);
    for (std::uintptr_t a = first & ~(page - 1); a < first + bytes; a += page)
      bytes_of[std::max(a, first) - first] = 0;
  }

  static std::atomic<std::size_t>& sets_wanted() {
    static std::atomic<std::size_t> n{Sets};
    return n;
  }
  static std::unique_ptr<Table>& thread_table() {
    thread_local std::unique_ptr<Table> table;
    return table;
  }
  template <typename SameKey>
  static Slot* slot_holding(const Set& set, std::uint64_t owner, std::size_t hash, SameKey& same_key) {
    const std::uint32_t tag = tag_of(hash);
    Slot* const ways = set.ways;
    for (std::size_t i = 0; i < Ways; ++i)
      if (set.tags[i] == tag && made(set, i) && ways[i].owner == owner &&
          same_key(static_cast<const Value&>(ways[i].value)))
        return &ways[i];
    return nullptr;
  }
};

}  // namespace nfsgw::cache
