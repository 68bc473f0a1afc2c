// Command line parsing: the forms README.md documents, and rejection of bad input.
#include "tools/wan-emu/options.h"

#include <gtest/gtest.h>

namespace nfsgw::wanemu {
namespace {

TEST(Options, ParsesPairsDelayBandwidthControl) {
  Options o = parse_options({"--pair", "127.0.0.1:22001=127.0.0.1:20490", "--pair", "127.0.0.1:22002=127.0.0.1:20048",
                             "--delay-ms", "100", "--delay-down-ms", "30", "--bandwidth-kbps", "8000", "--control",
                             "127.0.0.1:22000", "--stats-file", "/tmp/s.json"});
  ASSERT_EQ(o.pairs.size(), 2u);
  EXPECT_EQ(o.pairs[0].listen.port(), 22001);
  EXPECT_EQ(o.pairs[1].target.port(), 20048);
  EXPECT_EQ(o.delay_up_ms, 100u);
  EXPECT_EQ(o.delay_down_ms, 30u);
  EXPECT_EQ(o.bandwidth_kbps, 8000u);
  ASSERT_TRUE(o.control);
  EXPECT_EQ(o.control->port(), 22000);
  EXPECT_EQ(o.stats_file, "/tmp/s.json");
}

TEST(Options, CtlModeTakesTheRestAsCommand) {
  Options o = parse_options({"--ctl", "127.0.0.1:22000", "delay", "50", "60"});
  ASSERT_TRUE(o.ctl);
  EXPECT_EQ(o.ctl_command, "delay 50 60");
  EXPECT_TRUE(o.pairs.empty());
}

TEST(Options, RejectsBadInput) {
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {},
           {"--pair", "127.0.0.1:1"},
           {"--pair", "127.0.0.1:1=nohost"},
           {"--pair", "127.0.0.1:70000=127.0.0.1:1"},
           {"--pair", "x:1=127.0.0.1:1"},
           {"--pair", "127.0.0.1:1=127.0.0.1:2", "--delay-ms", "-5"},
           {"--pair", "127.0.0.1:1=127.0.0.1:2", "--delay-ms", "99999"},
           {"--pair", "127.0.0.1:1=127.0.0.1:2", "--delay-ms"},
           {"--pair", "127.0.0.1:1=127.0.0.1:2", "--frobnicate"},
           {"--ctl", "127.0.0.1:22000"},
       }) {
    EXPECT_THROW(parse_options(bad), UsageError) << (bad.empty() ? "(empty)" : bad.back());
  }
}

}  // namespace
}  // namespace nfsgw::wanemu
