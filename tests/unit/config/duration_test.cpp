// parse_duration() and format_duration(): every accepted form, every refusal and
// its reason, overflow, and the round trip through format_duration().
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "config/duration.h"

using namespace nfsgw::config;
using std::chrono::milliseconds;

namespace {

milliseconds ok(const std::string& text) {
  std::string why;
  auto d = parse_duration(text, &why);
  EXPECT_TRUE(d.has_value()) << text << ": " << why;
  return d.value_or(milliseconds{-1});
}

std::string refused(const std::string& text) {
  std::string why;
  auto d = parse_duration(text, &why);
  EXPECT_FALSE(d.has_value()) << text << " accepted as " << d.value_or(milliseconds{}).count() << " ms";
  EXPECT_FALSE(why.empty()) << text;
  return why;
}

}  // namespace

TEST(Duration, EveryUnit) {
  EXPECT_EQ(ok("500ms"), milliseconds{500});
  EXPECT_EQ(ok("30s"), milliseconds{30'000});
  EXPECT_EQ(ok("10m"), milliseconds{600'000});
  EXPECT_EQ(ok("2h"), milliseconds{7'200'000});
  EXPECT_EQ(ok("3d"), milliseconds{3LL * 86'400'000});
}

TEST(Duration, Zero) {
  EXPECT_EQ(ok("0"), milliseconds{0});
  EXPECT_EQ(ok("0ms"), milliseconds{0});
  EXPECT_EQ(ok("0s"), milliseconds{0});
  EXPECT_EQ(ok("0d"), milliseconds{0});
  EXPECT_EQ(ok("00"), milliseconds{0});
}

TEST(Duration, LeadingZerosAndLargeValues) {
  EXPECT_EQ(ok("030s"), milliseconds{30'000});
  EXPECT_EQ(ok("86400000ms"), milliseconds{86'400'000});
  // The largest count of milliseconds that fits.
  const auto max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(ok(std::to_string(max) + "ms"), milliseconds{max});
}

TEST(Duration, Refusals) {
  EXPECT_EQ(refused(""), "empty");
  EXPECT_EQ(refused("30"), "no unit");
  EXPECT_EQ(refused("30x"), "unknown unit \"x\"");
  EXPECT_EQ(refused("30sec"), "unknown unit \"sec\"");
  EXPECT_EQ(refused("30S"), "unknown unit \"S\"");
  EXPECT_EQ(refused("2w"), "unknown unit \"w\"");
  EXPECT_EQ(refused("1us"), "unknown unit \"us\"");
  EXPECT_EQ(refused("30 s"), "unknown unit");  // not echoed: starts with a space
  EXPECT_EQ(refused("30s "), "unknown unit");
  EXPECT_EQ(refused("1s30ms"), "unknown unit \"s30ms\"");
  EXPECT_EQ(refused("-5s"), "negative");
  EXPECT_EQ(refused("+5s"), "no number before the unit");
  EXPECT_EQ(refused("s"), "no number before the unit");
  EXPECT_EQ(refused(" 30s"), "no number before the unit");
  EXPECT_NE(refused("1.5h").find("not a whole number"), std::string::npos);
  EXPECT_NE(refused("1,5h").find("not a whole number"), std::string::npos);
  EXPECT_EQ(refused(std::string("3\0s", 3)), "unknown unit");
}

TEST(Duration, Overflow) {
  EXPECT_EQ(refused("9223372036854775808ms"), "too large");  // 2^63
  EXPECT_EQ(refused("99999999999999999999999999s"), "too large");
  EXPECT_EQ(refused("9223372036854775807s"), "too large");   // fits as a number, not in ms
  EXPECT_EQ(refused("106751991167301d"), "too large");
  EXPECT_EQ(ok("106751991167d"), milliseconds{106751991167LL * 86'400'000});
}

TEST(Duration, WhyIsOptional) {
  EXPECT_FALSE(parse_duration("bad").has_value());
  EXPECT_EQ(parse_duration("1m"), milliseconds{60'000});
}

TEST(Duration, FormatPicksTheLargestExactUnit) {
  EXPECT_EQ(format_duration(milliseconds{0}), "0");
  EXPECT_EQ(format_duration(milliseconds{500}), "500ms");
  EXPECT_EQ(format_duration(milliseconds{1500}), "1500ms");
  EXPECT_EQ(format_duration(milliseconds{30'000}), "30s");
  EXPECT_EQ(format_duration(milliseconds{90'000}), "90s");
  EXPECT_EQ(format_duration(milliseconds{600'000}), "10m");
  EXPECT_EQ(format_duration(milliseconds{3'600'000}), "1h");
  EXPECT_EQ(format_duration(milliseconds{30LL * 86'400'000}), "30d");
  EXPECT_EQ(format_duration(milliseconds{30LL * 86'400'000 + 1}), "2592000001ms");
}

TEST(Duration, FormatRoundTrips) {
  for (long long ms : {0LL, 1LL, 999LL, 1000LL, 59'000LL, 60'000LL, 3'600'000LL, 86'400'000LL,
                       86'400'001LL, 2'592'000'000LL}) {
    EXPECT_EQ(ok(format_duration(milliseconds{ms})), milliseconds{ms}) << ms;
  }
}
