// The [server] limits on what clients may hold: defaults, every key read, bounds and
// the relations between them refused with a message naming key, value and range.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "config/config.h"
#include "config_test_helpers.h"

using namespace nfsgw::config;
using namespace std::chrono_literals;
using nfsgw::config::testing::kEveryKey;
using nfsgw::config::testing::kExport;

namespace {

std::string server_error_of(const std::string& server_body) {
  try {
    parse_config("[server]\n" + server_body + kExport, "test.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ConfigServerLimits, Defaults) {
  const auto c = parse_config(kExport);
  EXPECT_EQ(c.server.max_connections, 1024u);
  EXPECT_EQ(c.server.max_calls_in_flight, 128u);
  EXPECT_EQ(c.server.max_calls_in_flight_total, 4096u);
  EXPECT_EQ(c.server.max_pending_mb, 256u);
  EXPECT_EQ(c.server.max_pending_mb_per_connection, 16u);
  EXPECT_EQ(c.server.idle_timeout, 6min);
}

TEST(ConfigServerLimits, EveryKeyIsRead) {
  const auto c = parse_config(kEveryKey);
  EXPECT_EQ(c.server.max_connections, 5000u);
  EXPECT_EQ(c.server.max_calls_in_flight, 64u);
  EXPECT_EQ(c.server.max_calls_in_flight_total, 10000u);
  EXPECT_EQ(c.server.max_pending_mb, 1024u);
  EXPECT_EQ(c.server.max_pending_mb_per_connection, 32u);
  EXPECT_EQ(c.server.idle_timeout, 90s);
  EXPECT_EQ(parse_config("[server]\nidle_timeout = \"0\"\n" + kExport).server.idle_timeout, 0ms);
}

TEST(ConfigServerLimits, OutOfRangeIsRefused) {
  struct Case {
    std::string body;
    std::vector<std::string> expect;
  };
  for (const auto& c : std::vector<Case>{
           {"max_connections = 0\n", {"server.max_connections", "0 is out of range", "1..1000000"}},
           {"max_calls_in_flight = 0\n", {"server.max_calls_in_flight", "1..65536"}},
           {"max_calls_in_flight_total = 1000001\n", {"server.max_calls_in_flight_total", "1000001"}},
           {"max_pending_mb = 0\n", {"server.max_pending_mb", "0 is out of range"}},
           {"max_pending_mb_per_connection = -1\n", {"server.max_pending_mb_per_connection", "-1"}},
           {"idle_timeout = 30\n", {"server.idle_timeout", "expected a duration string"}},
           {"idle_timeout = \"500ms\"\n", {"server.idle_timeout", "\"500ms\" is too short", "1s..7d"}},
           {"idle_timeout = \"8d\"\n", {"server.idle_timeout", "out of range"}},
           {"max_calls_in_flight = 200\nmax_calls_in_flight_total = 100\n",
            {"test.toml:2", "server.max_calls_in_flight", "200 is more than server.max_calls_in_flight_total (100)"}},
           {"max_pending_mb_per_connection = 64\nmax_pending_mb = 32\n",
            {"server.max_pending_mb_per_connection", "64 is more than server.max_pending_mb (32)"}},
           {"max_pending_mb = 8\n", {"server.max_pending_mb_per_connection", "16 is more than server.max_pending_mb (8)"}},
           {"max_conections = 5\n", {"max_conections"}},
       }) {
    const std::string m = server_error_of(c.body);
    ASSERT_FALSE(m.empty()) << "accepted: " << c.body;
    for (const auto& s : c.expect) EXPECT_NE(m.find(s), std::string::npos) << "missing '" << s << "' in: " << m;
  }
}
