// gateway/nlm/lock_table.h: POSIX byte-range locks per file and owner (conflicts,
// upgrades, downgrades, merges, splits, ranges to the end of the file), the
// blocked waiters, releasing an owner, and the bounds on locks and waiters.
#include "gateway/nlm/lock_table.h"

#include <gtest/gtest.h>

namespace nfsgw::nlm::nlm_lock_table_test {
namespace {

using nlm4::Stat;

constexpr OwnerId kA = 1, kB = 2, kC = 3;
const FileKey kFile = "file-1";
const FileKey kOther = "file-2";

Range r(std::uint64_t first, std::uint64_t last) { return {first, last}; }
HeldLock held(OwnerId o, std::uint64_t first, std::uint64_t last, bool exclusive) {
  return {o, {first, last}, exclusive};
}

LockTable table(std::size_t max_locks = 1000, std::size_t max_waiters = 100) {
  return LockTable(LockLimits{max_locks, max_waiters});
}

TEST(NlmRange, FromNlmOffsetAndLength) {
  EXPECT_EQ(Range::from_nlm(10, 5), r(10, 14));
  EXPECT_EQ(Range::from_nlm(10, 0), r(10, kEndOfFile)) << "length 0: to the end";
  EXPECT_EQ(Range::from_nlm(0, 1), r(0, 0));
  EXPECT_EQ(Range::from_nlm(kEndOfFile, 1), r(kEndOfFile, kEndOfFile));
  // An end past 2^64 - 1 is clamped to the end of the file, never wrapped.
  EXPECT_EQ(Range::from_nlm(kEndOfFile - 5, 100), r(kEndOfFile - 5, kEndOfFile));
  EXPECT_EQ(Range::from_nlm(1, kEndOfFile), r(1, kEndOfFile));
  EXPECT_EQ(Range::from_nlm(0, kEndOfFile), r(0, kEndOfFile - 1));
  // Back to NLM.
  EXPECT_EQ(r(10, 14).nlm_offset(), 10u);
  EXPECT_EQ(r(10, 14).nlm_length(), 5u);
  EXPECT_EQ(r(10, kEndOfFile).nlm_length(), 0u);
  EXPECT_TRUE(r(0, 9).overlaps(r(9, 20)));
  EXPECT_FALSE(r(0, 9).overlaps(r(10, 20)));
  EXPECT_TRUE(r(0, kEndOfFile).contains(r(5, 6)));
}

TEST(NlmLockTable, SharedLocksCoexistExclusiveOnesConflict) {
  LockTable t = table();
  EXPECT_EQ(t.lock(kFile, kA, r(0, 99), false), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kB, r(50, 149), false), Stat::Granted) << "shared with shared";
  EXPECT_EQ(t.lock(kFile, kC, r(90, 95), true), Stat::Denied) << "exclusive over shared";
  EXPECT_EQ(t.lock(kFile, kC, r(150, 200), true), Stat::Granted) << "touching is not overlapping";
  EXPECT_EQ(t.lock(kFile, kA, r(200, 200), false), Stat::Denied) << "shared over exclusive";
  EXPECT_EQ(t.lock(kOther, kA, r(0, 99), true), Stat::Granted) << "another file";
  EXPECT_EQ(t.lock_count(), 4u);
  EXPECT_EQ(t.file_count(), 2u);
  // A denied lock changed nothing.
  EXPECT_EQ(t.locks(kFile), (std::vector<HeldLock>{held(kA, 0, 99, false), held(kB, 50, 149, false),
                                                   held(kC, 150, 200, true)}));
}

TEST(NlmLockTable, AnOwnerNeverConflictsWithItself) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, r(0, 99), true), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kA, r(10, 20), true), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kA, r(10, 20), false), Stat::Granted);
  EXPECT_FALSE(t.test(kFile, kA, r(0, kEndOfFile), true));
  EXPECT_TRUE(t.test(kFile, kB, r(0, 0), false));
}

TEST(NlmLockTable, TestNamesTheConflictingLock) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kB, r(100, 199), true), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kC, r(0, 9), false), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kB, r(0, 9), false), Stat::Granted);
  EXPECT_EQ(t.test(kFile, kA, r(0, kEndOfFile), true), held(kB, 0, 9, false)) << "lowest owner, then offset";
  EXPECT_EQ(t.test(kFile, kA, r(0, kEndOfFile), false), held(kB, 100, 199, true)) << "shared: only exclusive ones";
  EXPECT_EQ(t.test(kFile, kA, r(5, 5), true), held(kB, 0, 9, false));
  EXPECT_FALSE(t.test(kFile, kA, r(10, 99), true));
  EXPECT_FALSE(t.test(kOther, kA, r(0, kEndOfFile), true));
}

TEST(NlmLockTable, UpgradeInTheMiddleSplitsTheSharedLock) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, r(0, 99), false), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kA, r(40, 59), true), Stat::Granted);
  EXPECT_EQ(t.locks_of(kFile, kA),
            (std::vector<HeldLock>{held(kA, 0, 39, false), held(kA, 40, 59, true), held(kA, 60, 99, false)}));
  EXPECT_EQ(t.lock_count(), 3u);
  EXPECT_EQ(t.lock(kFile, kB, r(0, 39), false), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kB, r(39, 40), false), Stat::Denied);
  // The upgrade is refused while another owner shares the range.
  EXPECT_EQ(t.lock(kFile, kA, r(0, 99), true), Stat::Denied);
  EXPECT_EQ(t.lock_count(), 4u);
}

TEST(NlmLockTable, DowngradeLetsOthersShare) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, r(0, kEndOfFile), true), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kB, r(1000, 1000), false), Stat::Denied);
  ASSERT_EQ(t.lock(kFile, kA, r(0, kEndOfFile), false), Stat::Granted);
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, kEndOfFile, false)}));
  EXPECT_EQ(t.lock(kFile, kB, r(1000, 1000), false), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kB, r(1000, 1000), true), Stat::Denied);
}

TEST(NlmLockTable, LocksOfOneTypeMergeOthersDoNot) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, r(0, 9), true), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kA, r(10, 19), true), Stat::Granted);  // touching
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, 19, true)}));
  ASSERT_EQ(t.lock(kFile, kA, r(30, 39), true), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kA, r(15, 35), true), Stat::Granted);  // bridges the gap
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, 39, true)}));
  ASSERT_EQ(t.lock(kFile, kA, r(40, 49), false), Stat::Granted);  // touching, other type
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, 39, true), held(kA, 40, 49, false)}));
  ASSERT_EQ(t.lock(kFile, kA, r(0, 49), false), Stat::Granted);  // one type over both
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, 49, false)}));
  EXPECT_EQ(t.lock_count(), 1u);
}

TEST(NlmLockTable, UnlockSplitsTrimsAndIgnoresWhatIsNotHeld) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, r(0, 99), true), Stat::Granted);
  ASSERT_EQ(t.unlock(kFile, kA, r(40, 59)), Stat::Granted);
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, 39, true), held(kA, 60, 99, true)}));
  EXPECT_EQ(t.lock(kFile, kB, r(40, 59), true), Stat::Granted) << "the hole is free";
  ASSERT_EQ(t.unlock(kFile, kA, r(90, kEndOfFile)), Stat::Granted);
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, 39, true), held(kA, 60, 89, true)}));
  EXPECT_EQ(t.unlock(kFile, kC, r(0, kEndOfFile)), Stat::Granted) << "nothing held";
  EXPECT_EQ(t.unlock(kOther, kA, r(0, kEndOfFile)), Stat::Granted) << "no such file";
  EXPECT_EQ(t.unlock(kFile, kB, r(0, 39)), Stat::Granted) << "another owner's range";
  EXPECT_EQ(t.locks_of(kFile, kA).size(), 2u);
  ASSERT_EQ(t.unlock(kFile, kA, r(0, kEndOfFile)), Stat::Granted);
  ASSERT_EQ(t.unlock(kFile, kB, r(0, kEndOfFile)), Stat::Granted);
  EXPECT_EQ(t.lock_count(), 0u);
  EXPECT_EQ(t.file_count(), 0u) << "an empty file's state is dropped";
  EXPECT_FALSE(t.holds_anything(kA));
}

TEST(NlmLockTable, RangesToTheEndOfTheFileAnd64BitOffsets) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, Range::from_nlm(1ull << 40, 0), true), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kB, Range::from_nlm(1ull << 62, 1), false), Stat::Denied);
  EXPECT_EQ(t.lock(kFile, kB, Range::from_nlm(kEndOfFile, 1), false), Stat::Denied) << "the last byte";
  EXPECT_EQ(t.lock(kFile, kB, Range::from_nlm((1ull << 40) - 10, 10), true), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kB, Range::from_nlm((1ull << 40) - 10, 11), true), Stat::Denied);
  ASSERT_EQ(t.unlock(kFile, kA, Range::from_nlm(kEndOfFile, 1)), Stat::Granted);
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 1ull << 40, kEndOfFile - 1, true)}));
  EXPECT_EQ(t.lock(kFile, kB, Range::from_nlm(kEndOfFile, 1), true), Stat::Granted);
}

TEST(NlmLockTable, MaxLocksIsExactAndChangesNothingPastIt) {
  LockTable t = table(3);
  ASSERT_EQ(t.lock(kFile, kA, r(0, 9), true), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kA, r(20, 29), true), Stat::Granted);
  ASSERT_EQ(t.lock(kOther, kB, r(0, 9), false), Stat::Granted);
  EXPECT_EQ(t.lock_count(), 3u);
  EXPECT_EQ(t.lock(kFile, kC, r(100, 109), true), Stat::DeniedNoLocks) << "a fourth range";
  EXPECT_EQ(t.lock(kFile, kA, r(40, 49), true), Stat::DeniedNoLocks);
  EXPECT_EQ(t.lock(kFile, kA, r(5, 15), true), Stat::Granted) << "merges: no more ranges";
  EXPECT_EQ(t.lock(kFile, kA, r(10, 25), true), Stat::Granted) << "merges two into one";
  EXPECT_EQ(t.lock_count(), 2u);
  ASSERT_EQ(t.lock(kFile, kC, r(500, 599), false), Stat::Granted);
  EXPECT_EQ(t.lock(kFile, kA, r(12, 12), false), Stat::DeniedNoLocks) << "a downgrade that splits";
  EXPECT_EQ(t.unlock(kFile, kA, r(12, 12)), Stat::DeniedNoLocks) << "an unlock that splits";
  EXPECT_EQ(t.locks_of(kFile, kA), (std::vector<HeldLock>{held(kA, 0, 29, true)})) << "unchanged";
  EXPECT_EQ(t.unlock(kFile, kA, r(0, 12)), Stat::Granted) << "trimming needs no room";
  EXPECT_EQ(t.unlock(kFile, kC, r(0, kEndOfFile)), Stat::Granted);
  EXPECT_EQ(t.unlock(kFile, kA, r(20, 20)), Stat::Granted) << "room again";
  EXPECT_EQ(t.lock_count(), 3u);
}

TEST(NlmLockTable, WaitersAreBoundedAndRetransmissionsKeepTheirPlace) {
  LockTable t = table(100, 2);
  ASSERT_EQ(t.lock(kFile, kA, r(0, 99), true), Stat::Granted);
  const auto w1 = t.add_waiter(kFile, kB, r(0, 9), true);
  ASSERT_TRUE(w1);
  EXPECT_EQ(t.add_waiter(kFile, kB, r(0, 9), true), w1) << "the same request again";
  const auto w2 = t.add_waiter(kFile, kC, r(0, 9), false);
  ASSERT_TRUE(w2);
  EXPECT_NE(*w1, *w2);
  EXPECT_FALSE(t.add_waiter(kFile, kC, r(50, 59), true)) << "past max_waiters";
  EXPECT_EQ(t.add_waiter(kFile, kB, r(0, 9), true), w1) << "a known request still finds its place";
  EXPECT_EQ(t.waiter_count(), 2u);
  ASSERT_NE(t.waiter(*w1), nullptr);
  EXPECT_EQ(t.waiter(*w1)->owner, kB);
  EXPECT_TRUE(t.cancel_waiter(kFile, kB, r(0, 9), true));
  EXPECT_FALSE(t.cancel_waiter(kFile, kB, r(0, 9), true)) << "already gone";
  EXPECT_FALSE(t.cancel_waiter(kFile, kC, r(0, 9), true)) << "the type must match";
  EXPECT_EQ(t.waiter(*w1), nullptr);
  EXPECT_TRUE(t.add_waiter(kFile, kC, r(50, 59), true)) << "room again";
}

TEST(NlmLockTable, ReadyWaitersInArrivalOrderWithoutConflictsAmongThem) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, r(0, 99), true), Stat::Granted);
  const WaiterId b = *t.add_waiter(kFile, kB, r(0, 9), true);
  const WaiterId c = *t.add_waiter(kFile, kC, r(5, 14), true);    // conflicts with b
  const WaiterId c2 = *t.add_waiter(kFile, kC, r(50, 59), false);  // free once A goes
  const WaiterId b2 = *t.add_waiter(kFile, kB, r(55, 55), false);  // shares with c2
  EXPECT_TRUE(t.ready_waiters(kFile).empty()) << "A still holds everything";
  ASSERT_EQ(t.unlock(kFile, kA, r(0, 49)), Stat::Granted);
  EXPECT_EQ(t.ready_waiters(kFile), (std::vector<WaiterId>{b})) << "c conflicts with b, which came first";
  ASSERT_EQ(t.unlock(kFile, kA, r(0, kEndOfFile)), Stat::Granted);
  EXPECT_EQ(t.ready_waiters(kFile), (std::vector<WaiterId>{b, c2, b2}));
  for (WaiterId w : t.ready_waiters(kFile)) EXPECT_EQ(t.grant_waiter(w), Stat::Granted) << w;
  EXPECT_EQ(t.waiters(kFile).size(), 1u);
  EXPECT_EQ(t.grant_waiter(c), Stat::Denied) << "still conflicts with b's lock";
  ASSERT_NE(t.waiter(c), nullptr) << "and stays queued";
  ASSERT_EQ(t.unlock(kFile, kB, r(0, kEndOfFile)), Stat::Granted);
  EXPECT_EQ(t.ready_waiters(kFile), (std::vector<WaiterId>{c}));
  EXPECT_EQ(t.grant_waiter(c), Stat::Granted);
  EXPECT_EQ(t.locks_of(kFile, kC), (std::vector<HeldLock>{held(kC, 5, 14, true), held(kC, 50, 59, false)}));
  EXPECT_EQ(t.grant_waiter(c), Stat::Denied) << "no longer a waiter";
  EXPECT_EQ(t.waiter_count(), 0u);
}

TEST(NlmLockTable, GrantingAWaiterRespectsMaxLocks) {
  LockTable t = table(1);
  ASSERT_EQ(t.lock(kFile, kA, r(0, 9), true), Stat::Granted);
  const WaiterId w = *t.add_waiter(kOther, kB, r(0, 9), true);
  EXPECT_EQ(t.ready_waiters(kOther), (std::vector<WaiterId>{w}));
  EXPECT_EQ(t.grant_waiter(w), Stat::DeniedNoLocks);
  EXPECT_NE(t.waiter(w), nullptr);
  t.drop_waiter(w);
  EXPECT_EQ(t.waiter(w), nullptr);
  EXPECT_EQ(t.file_count(), 1u);
}

TEST(NlmLockTable, ReleaseOwnerReturnsWhatItHeldAndFreesOthers) {
  LockTable t = table();
  ASSERT_EQ(t.lock(kFile, kA, r(0, 9), true), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kA, r(20, 29), false), Stat::Granted);
  ASSERT_EQ(t.lock(kOther, kA, r(0, kEndOfFile), false), Stat::Granted);
  ASSERT_EQ(t.lock(kFile, kB, r(100, 109), true), Stat::Granted);
  const WaiterId own = *t.add_waiter(kFile, kA, r(100, 100), true);  // A waits for B
  const WaiterId bw = *t.add_waiter(kFile, kB, r(0, 0), true);       // B waits for A
  ASSERT_TRUE(t.ready_waiters(kFile).empty());

  LockTable::Released rel = t.release_owner(kA);
  ASSERT_EQ(rel.locks.size(), 3u);
  EXPECT_EQ(rel.locks[0], (std::pair<FileKey, HeldLock>{kFile, held(kA, 0, 9, true)}));
  EXPECT_EQ(rel.locks[1], (std::pair<FileKey, HeldLock>{kFile, held(kA, 20, 29, false)}));
  EXPECT_EQ(rel.locks[2], (std::pair<FileKey, HeldLock>{kOther, held(kA, 0, kEndOfFile, false)}));
  ASSERT_EQ(rel.waiters.size(), 1u);
  EXPECT_EQ(rel.waiters[0].id, own);
  EXPECT_FALSE(t.holds_anything(kA));
  EXPECT_EQ(t.waiter(own), nullptr);
  EXPECT_EQ(t.ready_waiters(kFile), (std::vector<WaiterId>{bw}));
  EXPECT_EQ(t.lock_count(), 1u);
  EXPECT_EQ(t.file_count(), 1u) << "kOther held only A's lock";
  EXPECT_TRUE(t.release_owner(kA).locks.empty()) << "twice is harmless";
  t.release_owner(kB);
  EXPECT_EQ(t.file_count(), 0u);
  EXPECT_EQ(t.waiter_count(), 0u);
  EXPECT_EQ(t.lock_count(), 0u);
}

}  // namespace
}  // namespace nfsgw::nlm::nlm_lock_table_test
