#include "tools/nfsgw-bench/working_set.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nfsgw::bench {
namespace {

TEST(WorkingSetNames, FilesAndMissingNames) {
  EXPECT_EQ(file_name(0), "f000000");
  EXPECT_EQ(file_name(1999), "f001999");
  EXPECT_EQ(missing_name(7), "nx000007");
}

// churn creates names the working set never holds, distinct per thread and per
// request, and different from one run (pid) to the next.
TEST(WorkingSetNames, ChurnNamesAreFresh) {
  std::set<std::string> seen;
  for (unsigned thread = 0; thread < 4; ++thread)
    for (std::uint64_t n = 0; n < 1000; ++n) {
      std::string name = churn_name(4242, thread, n);
      EXPECT_TRUE(seen.insert(name).second) << name;
      EXPECT_EQ(name.rfind("cr", 0), 0u) << name;
    }
  EXPECT_EQ(churn_name(4242, 0, 17), "cr4242-0-17");
  EXPECT_NE(churn_name(4242, 1, 0), churn_name(4243, 1, 0));
  // The widest name stays far below NFSv3's usual 255-byte name limit.
  EXPECT_LT(churn_name(~std::uint64_t{0}, 63, ~std::uint64_t{0}).size(), 64u);
}

}  // namespace
}  // namespace nfsgw::bench
