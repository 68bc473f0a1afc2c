// The export's metadata cache keys: metadata_cache, consistency, access_check and
// every duration of cache::kDurationSettings (defaults, forms, errors, bounds), and
// [cache] metadata_max_gb.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cache/coherency.h"
#include "config/config.h"
#include "config/duration.h"
#include "config_test_helpers.h"

using namespace nfsgw::config;
using nfsgw::config::testing::expect_refused;
using nfsgw::config::testing::message_of;
namespace cache = nfsgw::cache;
using std::chrono::milliseconds;
using nfsgw::config::testing::kExport;

namespace {

const std::string kForms = "a number with a unit ms, s, m, h or d, such as \"30s\"";

cache::CoherencySettings coherency_of(const std::string& export_lines) {
  return parse_config(kExport + export_lines, "test.toml").exports.at(0).coherency;
}

std::string set(const char* key, const std::string& text) {
  return std::string(key) + " = \"" + text + "\"\n";
}

}  // namespace

TEST(ConfigCoherency, Defaults) {
  const auto c = coherency_of("");
  const cache::CoherencySettings d;
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.consistency, cache::Consistency::Ttl);
  EXPECT_EQ(c.access_check, cache::AccessCheck::Origin);
  for (const auto& s : cache::kDurationSettings) EXPECT_EQ(c.*s.field, d.*s.field) << s.key;
  // The documented defaults (docs/configuration.md).
  EXPECT_EQ(c.attr_ttl, milliseconds{30'000});
  EXPECT_EQ(c.dir_ttl, milliseconds{30'000});
  EXPECT_EQ(c.negative_ttl, milliseconds{10'000});
  EXPECT_EQ(c.access_ttl, milliseconds{30'000});
  EXPECT_EQ(c.fsstat_ttl, milliseconds{5'000});
  EXPECT_EQ(c.fsinfo_ttl, milliseconds{3'600'000});
}

TEST(ConfigCoherency, MetadataCacheSwitch) {
  EXPECT_FALSE(coherency_of("metadata_cache = false\n").enabled);
  EXPECT_TRUE(coherency_of("metadata_cache = true\n").enabled);
  expect_refused(kExport + "metadata_cache = \"no\"\n",
                 {"test.toml:4: export[0].metadata_cache", "expected true or false", "\"no\""});
  expect_refused(kExport + "metadata_cache = 0\n", {"export[0].metadata_cache", "integer 0"});
}

TEST(ConfigCoherency, Consistency) {
  EXPECT_EQ(coherency_of("consistency = \"ttl\"\n").consistency, cache::Consistency::Ttl);
  EXPECT_EQ(coherency_of("consistency = \"strict\"\n").consistency, cache::Consistency::Strict);
  EXPECT_EQ(coherency_of("consistency = \"immutable\"\n").consistency, cache::Consistency::Immutable);
  const std::string allowed = "allowed: \"ttl\", \"strict\", \"immutable\"";
  expect_refused(kExport + "consistency = \"weak\"\n",
                 {"test.toml:4: export[0].consistency", "\"weak\" is not a consistency mode", allowed});
  expect_refused(kExport + "consistency = \"TTL\"\n", {"export[0].consistency", "\"TTL\"", allowed});
  expect_refused(kExport + "consistency = \"\"\n", {"export[0].consistency", "\"\" is not", allowed});
  expect_refused(kExport + "consistency = 1\n", {"export[0].consistency", "expected a string", "integer 1"});
}

TEST(ConfigCoherency, AccessCheck) {
  EXPECT_EQ(coherency_of("access_check = \"origin\"\n").access_check, cache::AccessCheck::Origin);
  EXPECT_EQ(coherency_of("access_check = \"local\"\n").access_check, cache::AccessCheck::Local);
  expect_refused(kExport + "access_check = \"posix\"\n",
                 {"test.toml:4: export[0].access_check", "\"posix\" is not an access check",
                  "allowed: \"origin\", \"local\""});
  expect_refused(kExport + "access_check = true\n", {"export[0].access_check", "expected a string", "true"});
}

TEST(ConfigCoherency, EveryDurationKeyLandsInItsOwnField) {
  const cache::CoherencySettings d;
  for (const auto& s : cache::kDurationSettings) {
    const auto c = coherency_of(set(s.key, "1234ms"));
    for (const auto& other : cache::kDurationSettings) {
      if (other.field == s.field) {
        EXPECT_EQ(c.*other.field, milliseconds{1234}) << s.key;
      } else {
        EXPECT_EQ(c.*other.field, d.*other.field) << s.key << " changed " << other.key;
      }
    }
  }
}

TEST(ConfigCoherency, EveryDurationForm) {
  for (const auto& s : cache::kDurationSettings) {
    struct Form {
      const char* text;
      milliseconds value;
    };
    for (const Form& f : {Form{"500ms", milliseconds{500}}, Form{"30s", milliseconds{30'000}},
                          Form{"10m", milliseconds{600'000}}, Form{"2h", milliseconds{7'200'000}},
                          Form{"1d", milliseconds{86'400'000}}, Form{"0", milliseconds{0}},
                          Form{"0s", milliseconds{0}}}) {
      EXPECT_EQ(coherency_of(set(s.key, f.text)).*s.field, f.value) << s.key << " = " << f.text;
    }
  }
}

TEST(ConfigCoherency, AllKeysTogether) {
  const auto c = coherency_of(
      "metadata_cache = false\nconsistency = \"immutable\"\naccess_check = \"local\"\n"
      "attr_ttl = \"1s\"\ndir_ttl = \"2s\"\nnegative_ttl = \"3s\"\naccess_ttl = \"4s\"\n"
      "fsstat_ttl = \"5s\"\nfsinfo_ttl = \"6s\"\n");
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.consistency, cache::Consistency::Immutable);
  EXPECT_EQ(c.access_check, cache::AccessCheck::Local);
  EXPECT_EQ(c.attr_ttl, milliseconds{1000});
  EXPECT_EQ(c.dir_ttl, milliseconds{2000});
  EXPECT_EQ(c.negative_ttl, milliseconds{3000});
  EXPECT_EQ(c.access_ttl, milliseconds{4000});
  EXPECT_EQ(c.fsstat_ttl, milliseconds{5000});
  EXPECT_EQ(c.fsinfo_ttl, milliseconds{6000});
}

TEST(ConfigCoherency, ExportsAreIndependent) {
  auto cfg = parse_config(kExport + "attr_ttl = \"1s\"\nconsistency = \"strict\"\n" +
                              "[[export]]\npath = \"/f\"\norigin = \"nfs://h/f\"\n",
                          "test.toml");
  EXPECT_EQ(cfg.exports[0].coherency.attr_ttl, milliseconds{1000});
  EXPECT_EQ(cfg.exports[0].coherency.consistency, cache::Consistency::Strict);
  EXPECT_EQ(cfg.exports[1].coherency.attr_ttl, cache::CoherencySettings{}.attr_ttl);
  EXPECT_EQ(cfg.exports[1].coherency.consistency, cache::Consistency::Ttl);
}

TEST(ConfigCoherency, DurationSyntaxErrorsNameKeyValueAndForms) {
  struct Bad {
    std::string text;
    std::string why;
  };
  for (const auto& s : cache::kDurationSettings) {
    const std::string key = std::string("export[0].") + s.key;
    for (const Bad& b : {Bad{"30x", "unknown unit \"x\""}, Bad{"30", "no unit"},
                         Bad{"-5s", "negative"}, Bad{"1.5h", "not a whole number"},
                         Bad{"", "empty"}, Bad{"s", "no number"},
                         Bad{"99999999999999999999d", "too large"}}) {
      expect_refused(kExport + set(s.key, b.text),
                     {"test.toml:4: " + key + ": ", "\"" + b.text + "\" is not a duration: " + b.why,
                      "; allowed: " + kForms});
    }
  }
  // The example of the brief, verbatim apart from the reason.
  std::string m = message_of(kExport + "attr_ttl = \"30x\"\n");
  EXPECT_EQ(m, "test.toml:4: export[0].attr_ttl: \"30x\" is not a duration: unknown unit \"x\"; "
               "allowed: a number with a unit ms, s, m, h or d, such as \"30s\" (or \"0\")");
}

TEST(ConfigCoherency, DurationMustBeAString) {
  for (const auto& s : cache::kDurationSettings) {
    const std::string key = std::string("export[0].") + s.key;
    expect_refused(kExport + s.key + " = 30\n",
                   {key, "expected a duration string such as \"30s\"", "integer 30", kForms});
    expect_refused(kExport + s.key + " = 0\n", {key, "integer 0"});
    expect_refused(kExport + s.key + " = 1.5\n", {key, "float 1.5"});
    expect_refused(kExport + s.key + " = true\n", {key, "got true"});
  }
}

TEST(ConfigCoherency, BoundsComeFromTheTable) {
  for (const auto& s : cache::kDurationSettings) {
    const std::string key = std::string("export[0].") + s.key;
    const std::string range = "allowed: " + format_duration(s.min) + ".." + format_duration(s.max);
    // Both ends are accepted, written in their shortest form and in milliseconds.
    EXPECT_EQ(coherency_of(set(s.key, format_duration(s.max))).*s.field, s.max) << s.key;
    EXPECT_EQ(coherency_of(set(s.key, std::to_string(s.max.count()) + "ms")).*s.field, s.max) << s.key;
    EXPECT_EQ(coherency_of(set(s.key, format_duration(s.min))).*s.field, s.min) << s.key;
    // One millisecond beyond either end is refused with the range.
    const std::string above = std::to_string(s.max.count() + 1) + "ms";
    expect_refused(kExport + set(s.key, above), {key, "\"" + above + "\" is out of range", range});
    if (s.min.count() > 0) {
      const std::string below = std::to_string(s.min.count() - 1) + "ms";
      expect_refused(kExport + set(s.key, below), {key, "\"" + below + "\" is out of range", range});
    }
  }
  // Today's table: 0 up to 30 days for every key.
  expect_refused(kExport + "dir_ttl = \"31d\"\n",
                 {"test.toml:4: export[0].dir_ttl: \"31d\" is out of range; allowed: 0..30d"});
  EXPECT_EQ(coherency_of("dir_ttl = \"720h\"\n").dir_ttl, milliseconds{30LL * 86'400'000});
}

TEST(ConfigCoherency, UnknownKeyListsTheDurationKeys) {
  expect_refused(kExport + "attr_timeout = \"30s\"\n",
                 {"export[0].attr_timeout", "unknown key", "metadata_cache", "consistency",
                  "access_check", "attr_ttl", "dir_ttl", "negative_ttl", "access_ttl", "fsstat_ttl",
                  "fsinfo_ttl"});
}

TEST(ConfigCoherency, MetadataMaxGb) {
  EXPECT_EQ(parse_config(kExport).cache.metadata_max_gb, 4u);
  EXPECT_EQ(parse_config("[cache]\nmetadata_max_gb = 1\n" + kExport).cache.metadata_max_gb, 1u);
  EXPECT_EQ(parse_config("[cache]\nmetadata_max_gb = 65536\n" + kExport).cache.metadata_max_gb, 65536u);
  EXPECT_EQ(parse_config("[cache]\nmetadata_max_gb = 200\n" + kExport).cache.metadata_max_gb, 200u);
  expect_refused("[cache]\nmetadata_max_gb = 0\n" + kExport,
                 {"test.toml:2: cache.metadata_max_gb: 0 is out of range; allowed: 1..65536"});
  expect_refused("[cache]\nmetadata_max_gb = 65537\n" + kExport,
                 {"cache.metadata_max_gb", "65537", "1..65536"});
  expect_refused("[cache]\nmetadata_max_gb = \"4G\"\n" + kExport,
                 {"cache.metadata_max_gb", "expected an integer", "\"4G\"", "1..65536"});
  expect_refused("[cache]\nmetadata_max_gb = 4.5\n" + kExport, {"cache.metadata_max_gb", "float 4.5"});
  expect_refused("[cache]\nmetadata_gb = 4\n" + kExport, {"cache.metadata_gb", "unknown key", "metadata_max_gb"});
}
