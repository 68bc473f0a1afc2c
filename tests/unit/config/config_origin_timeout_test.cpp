// [[export]] origin_timeout: default, the duration forms it takes, its bounds, and
// the errors for values that are not durations.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "config/config.h"
#include "config_test_helpers.h"

using namespace nfsgw::config;
using nfsgw::config::testing::expect_refused;
using namespace std::chrono_literals;
using nfsgw::config::testing::kExport;
using nfsgw::config::testing::export_of;

TEST(ConfigOriginTimeout, DefaultIsALinuxTcpClientsTimeo) {
  EXPECT_EQ(export_of("").origin_timeout, 60s);
}

TEST(ConfigOriginTimeout, TakesDurationsWithinOneSecondToTenMinutes) {
  EXPECT_EQ(export_of("origin_timeout = \"2s\"\n").origin_timeout, 2s);
  EXPECT_EQ(export_of("origin_timeout = \"1500ms\"\n").origin_timeout, 1500ms);
  EXPECT_EQ(export_of("origin_timeout = \"1s\"\n").origin_timeout, 1s);
  EXPECT_EQ(export_of("origin_timeout = \"10m\"\n").origin_timeout, 10min);
}

TEST(ConfigOriginTimeout, EachExportHasItsOwn) {
  const auto c = parse_config(kExport + "origin_timeout = \"5s\"\n" +
                                  "[[export]]\npath = \"/f\"\norigin = \"nfs://h/f\"\n",
                              "test.toml");
  EXPECT_EQ(c.exports.at(0).origin_timeout, 5s);
  EXPECT_EQ(c.exports.at(1).origin_timeout, 60s);
}

TEST(ConfigOriginTimeout, OutOfRangeAndMalformedValuesAreRefused) {
  expect_refused(kExport + "origin_timeout = \"999ms\"\n",
                 {"export[0].origin_timeout", "out of range", "1s..10m"});
  expect_refused(kExport + "origin_timeout = \"0\"\n",
                 {"export[0].origin_timeout", "out of range", "1s..10m"});
  expect_refused(kExport + "origin_timeout = \"11m\"\n",
                 {"export[0].origin_timeout", "out of range", "1s..10m"});
  expect_refused(kExport + "origin_timeout = 60\n",
                 {"export[0].origin_timeout", "expected a duration string"});
  expect_refused(kExport + "origin_timeout = \"60\"\n",
                 {"export[0].origin_timeout", "is not a duration"});
}

TEST(ConfigOriginTimeout, MisspelledKeyIsRefused) {
  // The key is known; a near miss is not silently ignored.
  expect_refused(kExport + "orgin_timeout = \"2s\"\n", {"orgin_timeout"});
}
