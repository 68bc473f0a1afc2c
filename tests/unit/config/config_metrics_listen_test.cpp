// [server] metrics_listen: off by default, an "ADDRESS:PORT" literal when set, and
// anything else refused with a message naming the key, the value and the forms.
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"
#include "config/listen_address.h"
#include "config/reload_plan.h"
#include "config_test_helpers.h"

using namespace nfsgw::config;
using nfsgw::config::testing::expect_refused;
using nfsgw::config::testing::kExport;

namespace {
}

TEST(ConfigMetricsListen, OffByDefault) {
  EXPECT_EQ(parse_config(kExport).server.metrics_listen, "");
}

TEST(ConfigMetricsListen, IPv4AndIPv6AreRead) {
  EXPECT_EQ(parse_config("[server]\nmetrics_listen = \"127.0.0.1:9464\"\n" + kExport).server.metrics_listen,
            "127.0.0.1:9464");
  EXPECT_EQ(parse_config("[server]\nmetrics_listen = \"[::1]:9100\"\n" + kExport).server.metrics_listen,
            "[::1]:9100");
}

TEST(ConfigMetricsListen, BadAddressesAreRefused) {
  const std::vector<std::string> common = {"server.metrics_listen", "127.0.0.1:9464"};
  struct Case {
    std::string value, says;
  };
  for (const Case& c : std::vector<Case>{{"localhost:9464", "not an IPv4 address"},
                                         {"127.0.0.1", "no \":PORT\""},
                                         {"127.0.0.1:0", "out of range"},
                                         {"127.0.0.1:65536", "out of range"},
                                         {"127.0.0.1:http", "not a port number"},
                                         {"::1:9464", "must be in brackets"},
                                         {"[::1", "lacks its ']'"},
                                         {"[::1]9464", "no \":PORT\""},
                                         {"[127.0.0.1]:9464", "not an IPv6 address"},
                                         {":9464", "no address"},
                                         {"", "empty"}}) {
    SCOPED_TRACE(c.value);
    auto expect = common;
    expect.push_back(c.says);
    expect_refused("[server]\nmetrics_listen = \"" + c.value + "\"\n" + kExport, expect);
  }
  expect_refused("[server]\nmetrics_listen = 9464\n" + kExport, {"server.metrics_listen", "expected a string"});
}

TEST(ListenAddress, Parts) {
  auto a = parse_listen_address("10.1.2.3:80");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "10.1.2.3");
  EXPECT_EQ(a->port, 80);
  EXPECT_FALSE(a->v6);
  auto b = parse_listen_address("[fe80::1]:65535");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->host, "fe80::1");
  EXPECT_EQ(b->port, 65535);
  EXPECT_TRUE(b->v6);
}

TEST(ConfigMetricsListen, AChangeWaitsForARestart) {
  const Config running = parse_config("[server]\nmetrics_listen = \"127.0.0.1:9464\"\n" + kExport);
  const Config next = parse_config("[server]\nmetrics_listen = \"127.0.0.1:9465\"\n" + kExport);
  const ReloadPlan plan = plan_reload(running, next);
  ASSERT_EQ(plan.needs_restart.size(), 1u);
  EXPECT_NE(plan.needs_restart[0].find("[server] metrics_listen"), std::string::npos) << plan.needs_restart[0];
  EXPECT_TRUE(plan_reload(running, running).unchanged());
}
