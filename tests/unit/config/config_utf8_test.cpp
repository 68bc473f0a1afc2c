// A configuration must be UTF-8 text (TOML 1.0), checked before toml11 parses it:
// toml11 3.7 reads out of bounds when a literal string holds invalid UTF-8
// (tests/fuzz/fuzz_config found it; under ASan the reproducer below aborted).
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>

#include <toml.hpp>

#include "config/config.h"
#include "config/integer_check.h"
#include "config/nesting_check.h"
#include "config/utf8_check.h"
#include "tests/unit/config/config_test_helpers.h"

namespace nfsgw::config {
namespace {

using testing::expect_refused;
using testing::message_of;

const std::string kExport = "[[export]]\npath = \"/e\"\norigin = \"nfs://filer/vol\"\n";

TEST(ConfigUtf8, InvalidUtf8InALiteralStringIsRefusedWithItsLine) {
  // The fuzzer's input, shortened: a multi-line literal string with 0xff bytes.
  expect_refused("[cache]\ndir = '''/var/\xff\xff/lib'''\n" + kExport, {"test.toml:2:", "not valid UTF-8", "column 15"});
  // And a one-line literal string, the other toml11 path with the same fault.
  expect_refused(kExport + "clients = ['10.0.0.0/8\xc0\xaf']\n", {"test.toml:4:", "not valid UTF-8"});
}

TEST(ConfigUtf8, TheFuzzersReproducerIsRefused) {
  std::string text = "[ccche]\norigin = '''\"n~~~~~~~~~~cche";
  text.append(79, '\xff');
  text += "]\norigin = '''\"n~~~~~~~~~~~~~~~~~~~~~~~~~~~rogt/~~~~~~~~~~~~~~~~~rogt/vol\xb4\n";
  expect_refused(text, {"test.toml:2:", "not valid UTF-8"});
}

TEST(ConfigUtf8, InvalidUtf8InACommentIsRefusedToo) {
  expect_refused("# r\xe9sum\xe9 in Latin-1\n" + kExport, {"test.toml:1:", "column 4"});
}

TEST(ConfigUtf8, WellFormedMultibyteTextIsAccepted) {
  // 2-, 3- and 4-byte sequences in a comment and in a string value.
  EXPECT_EQ(message_of("# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81\n[cache]\ndir = '/var/lib/\xc3\xa9t\xc3\xa9'\n" + kExport), "");
}

TEST(ConfigUtf8, FirstInvalidUtf8FollowsUnicodeTable3_7) {
  EXPECT_EQ(first_invalid_utf8(""), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("plain ascii\n"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x93\x81\xf4\x8f\xbf\xbf"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("ab\x80"), 2u);              // continuation byte first
  EXPECT_EQ(first_invalid_utf8("\xc0\xaf"), 0u);            // overlong '/'
  EXPECT_EQ(first_invalid_utf8("\xe0\x80\xaf"), 0u);        // overlong, 3 bytes
  EXPECT_EQ(first_invalid_utf8("\xed\xa0\x80"), 0u);        // surrogate U+D800
  EXPECT_EQ(first_invalid_utf8("\xf4\x90\x80\x80"), 0u);    // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\xf5\x80\x80\x80"), 0u);
  EXPECT_EQ(first_invalid_utf8("x\xe2\x82"), 1u);           // cut short at the end
  EXPECT_EQ(first_invalid_utf8("\xe2\x28\xa1"), 0u);        // bad continuation
}

// A binary literal too long for 64 bits is refused before toml11 adds up its
// digits in an int64 (fuzz_config found the signed overflow under UBSan).
TEST(ConfigIntegers, AnOverlongBinaryLiteralIsRefusedWithItsLine) {
  const std::string text = "[cache]\nmemory_mb = 0b" + std::string(109, '1') + "\n";
  testing::expect_refused(text, {"test.toml:2:", "binary integer", "62 digits"});
  // 63 digits: the place value toml11 keeps would reach 2^63 (fuzz_config's second find).
  testing::expect_refused("[cache]\nmemory_mb = 0b" + std::string(63, '1') + "\n",
                          {"test.toml:2:", "binary integer"});
  testing::expect_refused("[cache]\nmemory_mb = 0b" + std::string(70, '0') + "1\n",
                          {"test.toml:2:", "binary integer"});
}

TEST(ConfigIntegers, EveryBinaryLiteralThatPassesTheCheckIsReadExactly) {
  // Under UBSan (CI's sanitizer stage) an overflow in toml11 fails this test.
  for (std::size_t n = 1; n <= kMaxBinaryDigits; ++n) {
    for (const char fill : {'0', '1'}) {
      const std::string digits = std::string(n - 1, fill) + "1";
      const std::string text = "[cache]\nmemory_mb = 0b" + digits + "\n";
      ASSERT_EQ(first_overlong_binary(text), std::nullopt) << n;
      std::istringstream in(text);
      const auto value = toml::parse(in, "test.toml");  // toml11 itself, as nfsgw calls it
      const std::int64_t want = fill == '1' ? static_cast<std::int64_t>((std::uint64_t{1} << n) - 1) : 1;
      EXPECT_EQ(toml::find<std::int64_t>(value, "cache", "memory_mb"), want) << n;
    }
  }
}

TEST(ConfigIntegers, LookalikesInStringsCommentsAndKeysPass) {
  EXPECT_EQ(first_overlong_binary("n = 0b1_0" + std::string(61, '1')), 4u);  // 63 digits, '_' not counted
  EXPECT_EQ(first_overlong_binary("n = 0b1_0" + std::string(60, '1')), std::nullopt);
  EXPECT_EQ(first_overlong_binary("# 0b" + std::string(100, '1') + "\nx = 1\n"), std::nullopt);
  EXPECT_EQ(first_overlong_binary("p = \"0b" + std::string(100, '1') + "\"\n"), std::nullopt);
  EXPECT_EQ(first_overlong_binary("p = '''\n0b" + std::string(100, '1') + "'''\n"), std::nullopt);
  EXPECT_EQ(first_overlong_binary("k10b" + std::string(100, '1') + " = 1"), std::nullopt);  // part of a key
  EXPECT_EQ(first_overlong_binary("a = [0b" + std::string(63, '1') + "]"), 5u);
}

}  // namespace
}  // namespace nfsgw::config

namespace nfsgw::config {
namespace {

// Deep nesting is refused before toml11 recurses into it (fuzz_config found a
// stack overflow on a few thousand '[').
TEST(ConfigNesting, DeeplyNestedArraysAreRefusedWithTheirLine) {
  const std::string text = "[cache]\ndir = " + std::string(5000, '[') + "\n";
  testing::expect_refused(text, {"test.toml:2:", "nested deeper than 32"});
}

TEST(ConfigNesting, OrdinaryNestingAndBracketsInCommentsPass) {
  EXPECT_EQ(first_too_deep("a = [[1, 2], [3]]\n# " + std::string(100, '[') + "\n[[export]]\n"), std::nullopt);
  EXPECT_EQ(first_too_deep(std::string(32, '[') + std::string(32, ']')), std::nullopt);
  EXPECT_EQ(first_too_deep(std::string(33, '[')), 32u);
  EXPECT_EQ(first_too_deep("x = {a = " + std::string(40, '{')), 40u);
}

}  // namespace
}  // namespace nfsgw::config
