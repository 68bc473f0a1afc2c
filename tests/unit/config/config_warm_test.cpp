// The export keys warm_uid and warm_gid: whom `nfsgw warm` walks an export as.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "config_test_helpers.h"

using namespace nfsgw::config;
using nfsgw::config::testing::expect_refused;
using nfsgw::config::testing::kExport;
using nfsgw::config::testing::export_of;

TEST(ConfigWarm, UnsetByDefaultSoTheWarmUsesTheAnonymousIds) {
  const auto e = export_of("anon_uid = 1000\n");
  EXPECT_FALSE(e.warm_uid);
  EXPECT_FALSE(e.warm_gid);
}

TEST(ConfigWarm, SetIds) {
  const auto e = export_of("warm_uid = 0\nwarm_gid = 4294967295\n");
  EXPECT_EQ(e.warm_uid, 0u);
  EXPECT_EQ(e.warm_gid, 4294967295u);
}

TEST(ConfigWarm, OutOfRangeOrWrongTypeIsRefused) {
  expect_refused(kExport + "warm_uid = -1\n", {"export[0].warm_uid", "-1", "0..4294967295"});
  expect_refused(kExport + "warm_gid = 4294967296\n", {"export[0].warm_gid", "0..4294967295"});
  expect_refused(kExport + "warm_uid = \"root\"\n", {"export[0].warm_uid"});
  expect_refused(kExport + "warm_user = 5\n", {"warm_user"});
}
