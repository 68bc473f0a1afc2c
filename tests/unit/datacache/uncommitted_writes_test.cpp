// The bookkeeping behind dropping blocks when the origin's write verifier changes.
#include "gateway/datacache/uncommitted_writes.h"

#include <gtest/gtest.h>

#include <vector>

namespace nfsgw::datacache {
namespace {

nfs3::FileHandle fh(std::uint8_t n) {
  const std::vector<std::uint8_t> b{n, 1, 2, 3};
  return nfs3::FileHandle(b);
}
constexpr nfs3::WriteVerf kA{1, 1, 1, 1, 1, 1, 1, 1};
constexpr nfs3::WriteVerf kB{2, 2, 2, 2, 2, 2, 2, 2};

TEST(UncommittedWrites, TheFirstVerifierSeenIsNoChange) {
  UncommittedWrites u;
  auto f = u.written(fh(1), kA, true);
  EXPECT_FALSE(f.verifier_changed);
  EXPECT_TRUE(f.files.empty());
  EXPECT_EQ(u.files(), 1u);
}

TEST(UncommittedWrites, AChangedVerifierGivesEveryUncommittedFileOnce) {
  UncommittedWrites u;
  u.written(fh(1), kA, true);
  u.written(fh(2), kA, true);
  u.written(fh(2), kA, true);
  u.written(fh(3), kA, false);  // FILE_SYNC: nothing to lose
  auto f = u.written(fh(4), kB, false);
  EXPECT_TRUE(f.verifier_changed);
  ASSERT_EQ(f.files.size(), 2u);
  EXPECT_EQ(u.files(), 0u);
  EXPECT_EQ(u.verifier_changes(), 1u);
  EXPECT_TRUE(u.written(fh(1), kB, true).files.empty()) << "the new verifier is the reference now";
}

TEST(UncommittedWrites, AWholeFileCommitForgetsTheFileARangeCommitDoesNot) {
  UncommittedWrites u;
  u.written(fh(1), kA, true);
  u.written(fh(2), kA, true);
  EXPECT_TRUE(u.committed(fh(1), kA, true).files.empty());
  EXPECT_TRUE(u.committed(fh(2), kA, false).files.empty());
  EXPECT_EQ(u.files(), 1u);
  auto f = u.committed(fh(1), kB, true);
  EXPECT_TRUE(f.verifier_changed);
  ASSERT_EQ(f.files.size(), 1u);
  EXPECT_EQ(f.files[0], fh(2));
}

TEST(UncommittedWrites, BoundedAFileBeyondTheBoundIsDroppedAtOnce) {
  UncommittedWrites u(2);
  EXPECT_TRUE(u.written(fh(1), kA, true).files.empty());
  EXPECT_TRUE(u.written(fh(2), kA, true).files.empty());
  auto f = u.written(fh(3), kA, true);
  EXPECT_FALSE(f.verifier_changed);
  ASSERT_EQ(f.files.size(), 1u);
  EXPECT_EQ(f.files[0], fh(3));
  EXPECT_EQ(u.files(), 2u);
}

}  // namespace
}  // namespace nfsgw::datacache
