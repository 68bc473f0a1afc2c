// gateway/nlm/lock_table.h against a model that keeps one state per byte: random
// sequences of lock, unlock and test (bounded in count, fixed seeds) over a small
// file of kBytes bytes plus a "tail" cell standing for every byte from kBytes to
// 2^64 - 1 (ranges end inside the small file or run to the end of the file, so
// the tail is always uniform). After every step the table's locks, expanded to
// bytes, equal the model's for every owner; each owner's locks are canonical (as
// many ranges as the model has runs); its answers (granted, denied, the bound)
// are the model's; a TEST answer names a lock that really conflicts.
#include "gateway/nlm/lock_table.h"

#include <gtest/gtest.h>

#include <array>
#include <random>

namespace nfsgw::nlm::nlm_lock_table_property_test {
namespace {

using nlm4::Stat;

constexpr std::size_t kBytes = 24;
constexpr std::size_t kCells = kBytes + 1;  // the last one: [kBytes, 2^64 - 1]
constexpr OwnerId kOwners = 3;
const FileKey kFile = "f";

enum class Cell : std::uint8_t { None, Shared, Exclusive };
using OwnerCells = std::array<Cell, kCells>;
using Model = std::array<OwnerCells, kOwners + 1>;  // index = owner id (0 unused)

std::size_t last_cell(const Range& r) { return r.last == kEndOfFile ? kBytes : static_cast<std::size_t>(r.last); }

bool model_conflict(const Model& m, OwnerId owner, const Range& r, bool exclusive) {
  for (OwnerId o = 1; o <= kOwners; ++o) {
    if (o == owner) continue;
    for (std::size_t c = r.first; c <= last_cell(r); ++c) {
      if (m[o][c] == Cell::Exclusive || (m[o][c] == Cell::Shared && exclusive)) return true;
    }
  }
  return false;
}

/// Runs of equal non-None cells: what the canonical form has as ranges.
std::size_t runs(const OwnerCells& cells) {
  std::size_t n = 0;
  for (std::size_t c = 0; c < kCells; ++c) {
    if (cells[c] != Cell::None && (c == 0 || cells[c - 1] != cells[c])) ++n;
  }
  return n;
}

std::size_t total_runs(const Model& m) {
  std::size_t n = 0;
  for (OwnerId o = 1; o <= kOwners; ++o) n += runs(m[o]);
  return n;
}

/// The owner's locks from the table, as cells; fails the test on a range that
/// ends inside the tail (the model cannot hold it, and the table never makes one).
OwnerCells table_cells(const LockTable& t, OwnerId owner) {
  OwnerCells cells{};
  for (const HeldLock& l : t.locks_of(kFile, owner)) {
    EXPECT_TRUE(l.range.last < kBytes || l.range.last == kEndOfFile) << l.range.first << ".." << l.range.last;
    EXPECT_LE(l.range.first, kBytes);
    for (std::size_t c = l.range.first; c <= std::min(last_cell(l.range), kBytes); ++c) {
      EXPECT_EQ(cells[c], Cell::None) << "overlapping ranges of one owner";
      cells[c] = l.exclusive ? Cell::Exclusive : Cell::Shared;
    }
  }
  return cells;
}

void run(std::uint32_t seed, std::size_t max_locks, int steps) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " max_locks " + std::to_string(max_locks));
  std::mt19937 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  LockTable t(LockLimits{max_locks, 16});
  Model m{};
  std::size_t granted = 0, denied = 0, nolocks = 0;
  for (int step = 0; step < steps; ++step) {
    const OwnerId owner = static_cast<OwnerId>(1 + pick(kOwners));
    Range r;
    r.first = pick(kBytes);
    r.last = pick(4) == 0 ? kEndOfFile : r.first + pick(std::min<std::size_t>(kBytes - r.first, 8));
    const bool exclusive = pick(2) == 0;
    const std::size_t op = pick(10);
    SCOPED_TRACE("step " + std::to_string(step) + " owner " + std::to_string(owner) + " op " +
                 std::to_string(op) + " [" + std::to_string(r.first) + "," + std::to_string(last_cell(r)) + "]" +
                 (exclusive ? " X" : " S"));
    if (op < 5) {  // lock
      Model after = m;
      for (std::size_t c = r.first; c <= last_cell(r); ++c) after[owner][c] = exclusive ? Cell::Exclusive : Cell::Shared;
      const Stat want = model_conflict(m, owner, r, exclusive) ? Stat::Denied
                        : total_runs(after) > max_locks && total_runs(after) > total_runs(m)
                            ? Stat::DeniedNoLocks
                            : Stat::Granted;
      const Stat got = t.lock(kFile, owner, r, exclusive);
      ASSERT_EQ(got, want);
      if (got == Stat::Granted) m = after;
      granted += got == Stat::Granted;
      denied += got == Stat::Denied;
      nolocks += got == Stat::DeniedNoLocks;
    } else if (op < 8) {  // unlock
      Model after = m;
      for (std::size_t c = r.first; c <= last_cell(r); ++c) after[owner][c] = Cell::None;
      const Stat want = total_runs(after) > max_locks && total_runs(after) > total_runs(m) ? Stat::DeniedNoLocks
                                                                                          : Stat::Granted;
      const Stat got = t.unlock(kFile, owner, r);
      ASSERT_EQ(got, want);
      if (got == Stat::Granted) m = after;
      nolocks += got == Stat::DeniedNoLocks;
    } else {  // test
      const auto holder = t.test(kFile, owner, r, exclusive);
      ASSERT_EQ(holder.has_value(), model_conflict(m, owner, r, exclusive));
      if (holder) {
        EXPECT_NE(holder->owner, owner);
        EXPECT_TRUE(holder->range.overlaps(r));
        EXPECT_TRUE(holder->exclusive || exclusive);
        const auto theirs = t.locks_of(kFile, holder->owner);
        EXPECT_NE(std::find(theirs.begin(), theirs.end(), *holder), theirs.end()) << "a lock the table holds";
      }
    }
    std::size_t ranges = 0;
    for (OwnerId o = 1; o <= kOwners; ++o) {
      ASSERT_EQ(table_cells(t, o), m[o]) << "owner " << o;
      ASSERT_EQ(t.locks_of(kFile, o).size(), runs(m[o])) << "owner " << o << ": not canonical";
      ranges += runs(m[o]);
    }
    ASSERT_EQ(t.lock_count(), ranges);
    ASSERT_LE(t.lock_count(), max_locks);
  }
  // Each kind of answer happened (the run is not vacuous).
  EXPECT_GT(granted, 0u);
  EXPECT_GT(denied, 0u);
  if (max_locks < 12) {
    EXPECT_GT(nolocks, 0u);
  }
}

TEST(NlmLockTableProperty, RandomSequencesMatchAPerByteModel) {
  for (std::uint32_t seed = 1; seed <= 8; ++seed) run(seed, 1000, 1000);
}

TEST(NlmLockTableProperty, RandomSequencesMatchTheModelAtATightBound) {
  for (std::uint32_t seed = 101; seed <= 108; ++seed) run(seed, 5, 1000);
}

}  // namespace
}  // namespace nfsgw::nlm::nlm_lock_table_property_test
