#include "tools/nfsgw-bench/file_picker.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace nfsgw::bench {
namespace {

TEST(FilePicker, SequentialGivesDistinctFilesInOrderThenNextRound) {
  FilePicker p(5, true, 1, 0, 1);
  for (std::size_t i = 0; i < 5; ++i) {
    FilePick f = p.next();
    EXPECT_EQ(f.file, i);
    EXPECT_EQ(f.round, 0u);
  }
  FilePick f = p.next();
  EXPECT_EQ(f.file, 0u);
  EXPECT_EQ(f.round, 1u);
}

TEST(FilePicker, SequentialPartsShareTheOrderWithoutOverlap) {
  // Three threads over 10 files, 10 picks in all: every file exactly once.
  std::vector<FilePicker> parts;
  for (unsigned t = 0; t < 3; ++t) parts.emplace_back(10, true, 1, t, 3);
  std::multiset<std::size_t> seen;
  for (unsigned k = 0; k < 10; ++k) {
    FilePick f = parts[k % 3].next();
    EXPECT_EQ(f.round, 0u);
    seen.insert(f.file);
  }
  EXPECT_EQ(seen, (std::multiset<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(FilePicker, RandomStaysInRangeAtRoundZeroAndDependsOnTheSeed) {
  FilePicker a(7, false, 1, 0, 1), b(7, false, 1, 0, 1), c(7, false, 2, 0, 1);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    FilePick x = a.next(), y = b.next(), z = c.next();
    EXPECT_LT(x.file, 7u);
    EXPECT_EQ(x.round, 0u);
    EXPECT_EQ(x.file, y.file);
    differs = differs || x.file != z.file;
  }
  EXPECT_TRUE(differs);
}

TEST(FilePicker, ZeroFilesIsTreatedAsOne) {
  FilePicker p(0, true, 1, 0, 1);
  EXPECT_EQ(p.next().file, 0u);
  EXPECT_EQ(p.next().round, 1u);
}

}  // namespace
}  // namespace nfsgw::bench
