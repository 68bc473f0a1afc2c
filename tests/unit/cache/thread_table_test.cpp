// The per-thread set-associative table under the memos (thread_table.h): what is
// placed is found by its whole key and owner, replacement goes round the ways, a
// key placed again keeps one slot, and no thread sees another's table.
//
// Every test uses a table of its own (a `Use` type of its own), so that what one
// test placed never changes the ways or the cursor another test sees.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cache/thread_table.h"

using nfsgw::cache::new_table_owner;
using nfsgw::cache::ThreadTable;

namespace {

struct Entry {
  int key = 0;
  int value = 0;
};

template <typename Use>
using Table = ThreadTable<Entry, 4, 64, Use>;

// Every key under one hash: one set, told apart by the whole key only.
constexpr std::size_t kHash = 0x9e3779b97f4a7c15ull;

auto key_is(int key) {
  return [key](const Entry& e) { return e.key == key; };
}

template <typename T>
void put(std::uint64_t owner, int key, int value, std::size_t hash = kHash) {
  T::place(T::set_of(hash), owner, hash, key_is(key)) = Entry{key, value};
}

/// The value kept for `key`, or -1.
template <typename T>
int get(std::uint64_t owner, int key, std::size_t hash = kHash) {
  const Entry* e = T::find(T::set_of(hash), owner, hash, key_is(key));
  return e != nullptr ? e->value : -1;
}

}  // namespace

TEST(ThreadTable, FindsWhatWasPlacedByItsWholeKey) {
  using T = Table<struct FindUse>;
  const std::uint64_t owner = new_table_owner();
  EXPECT_EQ(get<T>(owner, 0, 0), -1) << "an empty slot (tag 0, owner 0) answers for nothing";
  put<T>(owner, 1, 10);
  EXPECT_EQ(get<T>(owner, 1), 10);
  EXPECT_EQ(get<T>(owner, 2), -1) << "the same hash is not the same key";
  EXPECT_EQ(get<T>(owner, 1, kHash + (std::size_t{1} << 40)), -1) << "nor is another hash";
}

TEST(ThreadTable, ReplacesEmptyWaysFirstThenRoundRobin) {
  using T = Table<struct OrderUse>;
  const std::uint64_t owner = new_table_owner();
  for (int k = 1; k <= 4; ++k) put<T>(owner, k, k);  // four ways, all empty: nothing evicted
  for (int k = 1; k <= 4; ++k) EXPECT_EQ(get<T>(owner, k), k);
  put<T>(owner, 5, 5);  // evicts the first way (key 1)
  EXPECT_EQ(get<T>(owner, 1), -1);
  for (int k = 2; k <= 5; ++k) EXPECT_EQ(get<T>(owner, k), k);
  put<T>(owner, 6, 6);  // then the second (key 2)
  EXPECT_EQ(get<T>(owner, 2), -1);
  for (int k = 3; k <= 6; ++k) EXPECT_EQ(get<T>(owner, k), k);
}

TEST(ThreadTable, AKeyPlacedAgainReusesItsSlot) {
  // With the cursor on another way than the key's (the old HandleMemo::keep took
  // the next way in turn): the key must not be kept twice, and nothing else lost.
  using T = Table<struct AgainUse>;
  const std::uint64_t owner = new_table_owner();
  for (int k = 1; k <= 5; ++k) put<T>(owner, k, k);  // key 5 in the first way, cursor on the second
  put<T>(owner, 5, 50);
  EXPECT_EQ(get<T>(owner, 5), 50) << "the new value, not an outdated copy";
  for (int k = 2; k <= 4; ++k) EXPECT_EQ(get<T>(owner, k), k) << "key " << k << " was evicted for a key already kept";
}

TEST(ThreadTable, OwnersNeverMix) {
  using T = Table<struct OwnerUse>;
  const std::uint64_t a = new_table_owner(), b = new_table_owner();
  ASSERT_NE(a, b);
  put<T>(a, 1, 10);
  EXPECT_EQ(get<T>(b, 1), -1) << "the same key of another owner";
  put<T>(b, 1, 20);  // beside a's, not over it
  EXPECT_EQ(get<T>(a, 1), 10);
  EXPECT_EQ(get<T>(b, 1), 20);
}

TEST(ThreadTable, EachThreadHasItsOwnTable) {
  using T = Table<struct ThreadUse>;
  const std::uint64_t owner = new_table_owner();
  put<T>(owner, 1, 10);
  std::thread([&] {
    EXPECT_EQ(T::set_if_made(kHash), nullptr) << "no table before this thread's first place";
    EXPECT_EQ(get<T>(owner, 1), -1) << "another thread's value";
    put<T>(owner, 2, 20);
    EXPECT_NE(T::set_if_made(kHash), nullptr);
    EXPECT_EQ(get<T>(owner, 2), 20);
  }).join();
  EXPECT_EQ(get<T>(owner, 1), 10);
  EXPECT_EQ(get<T>(owner, 2), -1) << "a value placed on the other thread";
}

namespace thread_table_test_lazy {

// Counts its constructions and destructions (one counter pair per test).
struct Counted {
  static inline std::atomic<int> made{0}, gone{0};
  int key = 0;
  Counted() { ++made; }
  Counted(const Counted& o) : key(o.key) { ++made; }
  Counted& operator=(const Counted&) = default;
  ~Counted() { ++gone; }
};
struct LazyUse {};
using LazyTable = ThreadTable<Counted, 4, 1024, LazyUse>;

}  // namespace thread_table_test_lazy

// A table's slots are constructed as they are first filled, not when the table is
// made: a thread's first call must not write every page of a multi-megabyte memo
// (the first walk after a restart paid for that). Its slots are destroyed with it.
TEST(ThreadTable, SlotsAreMadeWhenFirstFilledAndDestroyedWithTheTable) {
  using namespace thread_table_test_lazy;
  const auto owner = new_table_owner();
  std::thread([&] {
    auto& set = LazyTable::set_of(kHash);
    EXPECT_EQ(Counted::made.load(), 0);  // the table exists, no slot is made
    for (int k = 1; k <= 3; ++k) LazyTable::place(set, owner, kHash, [k](const Counted& c) { return c.key == k; }).key = k;
    EXPECT_EQ(Counted::made.load(), 3);
    // A key placed again reuses its slot; a fifth key in a full set replaces one.
    LazyTable::place(set, owner, kHash, [](const Counted& c) { return c.key == 2; }).key = 2;
    LazyTable::place(set, owner, kHash, [](const Counted& c) { return c.key == 4; }).key = 4;
    LazyTable::place(set, owner, kHash, [](const Counted& c) { return c.key == 5; }).key = 5;
    EXPECT_EQ(Counted::made.load(), 4);
    EXPECT_NE(LazyTable::find(set, owner, kHash, [](const Counted& c) { return c.key == 5; }), nullptr);
    // An unfilled set finds nothing.
    auto& other = LazyTable::set_of(kHash + 1);
    EXPECT_EQ(LazyTable::find(other, owner, kHash + 1, [](const Counted&) { return true; }), nullptr);
    EXPECT_EQ(Counted::gone.load(), 0);
  }).join();
  EXPECT_EQ(Counted::gone.load(), 4);  // the thread's table went with it
}
