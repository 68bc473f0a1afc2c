// Every declared key is read, into its own field, and a reload treats it as its
// declaration says: a file that sets every key to something other than its
// default must load into a configuration that differs from the defaults in every
// key. A key declared but not read (or read into another key's field) fails here.
#include <gtest/gtest.h>

#include <string>

#include "config/key.h"
#include "config/reload_plan.h"
#include "config_test_helpers.h"

namespace nfsgw::config {
namespace {

using testing::kEveryKey;
using testing::left_out_line;

/// The smallest file, with the export under the same path as kEveryKey's.
const char* kMinimal = R"(
[[export]]
path = "/projects/alpha"
origin = "nfs://filer/vol/data"
)";

template <typename S>
void expect_every_key_differs(const SectionKeys<S>& section, const S& set, const S& defaults) {
  for (const auto& k : section.keys) {
    if (k.reload == Reload::Identity) continue;  // the same export in both files
    if (!left_out_line(k.name).empty()) continue;  // below
    EXPECT_NE(k.show(set), k.show(defaults))
        << "[" << section.name << "] " << k.name << " is declared but reads as its default";
  }
}

TEST(ConfigEveryKey, EveryDeclaredKeyIsRead) {
  const Config set = parse_config(kEveryKey, "every.toml");
  const Config defaults = parse_config(kMinimal, "minimal.toml");
  expect_every_key_differs(server_keys(), set.server, defaults.server);
  expect_every_key_differs(cache_keys(), set.cache, defaults.cache);
  ASSERT_EQ(set.exports.size(), 1u);
  expect_every_key_differs(export_keys(), set.exports[0], defaults.exports[0]);
  // The one key left out above, against an export of another path.
  const Config other = parse_config("[[export]]\npath = \"/data\"\norigin = \"nfs://filer/vol/data\"\n");
  EXPECT_NE(export_keys().keys[0].show(set.exports[0]), export_keys().keys[0].show(other.exports[0]));
  // The keys kEveryKey leaves out, each in an export of its own.
  for (const auto& [key, line] : testing::kEveryKeyLeftOut) {
    const Config alone = parse_config(std::string(kMinimal) + line + "\n", "alone.toml");
    for (const auto& k : export_keys().keys) {
      if (k.name != key) continue;
      EXPECT_NE(k.show(alone.exports[0]), k.show(defaults.exports[0])) << key;
    }
  }
}

/// kEveryKey's line setting `key` in the section `[name]` or `[[name]]` (or
/// kEveryKeyLeftOut's).
std::string line_of(const std::string& section, const std::string& key) {
  if (section == "export" && !left_out_line(key).empty()) return left_out_line(key);
  const std::string text = kEveryKey;
  std::string current;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.rfind('[', 0) == 0) current = line.substr(line.find_first_not_of('['), line.find(']') - line.find_first_not_of('['));
    if (current == section && line.rfind(key + " = ", 0) == 0) return line;
  }
  return "(no line for " + section + "." + key + ")";
}

const std::string kPath = "path = \"/data\"";
const std::string kOrigin = "origin = \"nfs://filer/vol/data\"";

/// The smallest file (export /data), with `line` setting `key` in `section`.
std::string only(const std::string& section, const std::string& key, const std::string& line) {
  if (section != "export") return "[" + section + "]\n" + line + "\n[[export]]\n" + kPath + "\n" + kOrigin + "\n";
  if (key == "path") return "[[export]]\n" + line + "\n" + kOrigin + "\n";
  if (key == "origin") return "[[export]]\n" + kPath + "\n" + line + "\n";
  return "[[export]]\n" + kPath + "\n" + kOrigin + "\n" + line + "\n";
}

/// Setting one key alone changes that key, and no other key of its section but
/// those whose default follows it: a key read into another key's field fails.
template <typename S, typename Pick>
void expect_each_key_alone(const SectionKeys<S>& section, Pick pick) {
  const S defaults = pick(parse_config("[[export]]\n" + kPath + "\n" + kOrigin + "\n", "minimal.toml"));
  for (const auto& k : section.keys) {
    const std::string toml = only(section.name, k.name, line_of(section.name, k.name));
    const S set = pick(parse_config(toml, "one.toml"));
    for (const auto& other : section.keys) {
      const bool follows = section.name == "cache" && k.name == "dir" && other.name == "secret_file";
      if (&other == &k) {
        EXPECT_NE(k.show(set), k.show(defaults)) << toml;
      } else if (!follows) {
        EXPECT_EQ(other.show(set), other.show(defaults)) << "setting " << k.name << " changed " << other.name;
      }
    }
  }
}

TEST(ConfigEveryKey, EachKeyFillsOnlyItsOwnField) {
  expect_each_key_alone(server_keys(), [](const Config& c) { return c.server; });
  expect_each_key_alone(cache_keys(), [](const Config& c) { return c.cache; });
  expect_each_key_alone(export_keys(), [](const Config& c) { return c.exports.at(0); });
}

bool has_line(const std::vector<std::string>& lines, const std::string& start) {
  for (const auto& l : lines)
    if (l.rfind(start, 0) == 0) return true;
  return false;
}

/// Each key of `section` changed by the reload is listed where its declaration
/// says, and the effective value is the new one (live) or the running one.
template <typename S>
void expect_reload_follows(const ReloadPlan& plan, const std::string& prefix, const SectionKeys<S>& section,
                           const S& running, const S& next, const S& effective) {
  for (const auto& k : section.keys) {
    if (k.reload == Reload::Identity || !left_out_line(k.name).empty()) continue;
    const std::string line = prefix + k.name + ": ";
    const bool live = k.reload == Reload::Live;
    EXPECT_EQ(has_line(plan.applied, line), live) << line;
    EXPECT_EQ(has_line(plan.needs_restart, line), !live) << line;
    EXPECT_EQ(k.show(effective), k.show(live ? next : running)) << line;
  }
}

TEST(ConfigEveryKey, ReloadFollowsEachDeclaration) {
  const Config running = parse_config(kMinimal, "minimal.toml");
  const Config next = parse_config(kEveryKey, "every.toml");
  const ReloadPlan plan = plan_reload(running, next);
  expect_reload_follows(plan, "[server] ", server_keys(), running.server, next.server, plan.effective.server);
  expect_reload_follows(plan, "[cache] ", cache_keys(), running.cache, next.cache, plan.effective.cache);
  expect_reload_follows(plan, "export /projects/alpha: ", export_keys(), running.exports[0], next.exports[0],
                        plan.effective.exports[0]);
  // Derived values go with the key they come from: the origin waits, so does its cache space.
  EXPECT_EQ(plan.effective.exports[0].cache_space, running.exports[0].cache_space);
  EXPECT_EQ(plan.effective.exports[0].id, running.exports[0].id);
}

TEST(ConfigEveryKey, KeyNamesAreUniqueInEachSection) {
  const auto check = [](const auto& section) {
    for (std::size_t i = 0; i < section.keys.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) EXPECT_NE(section.keys[i].name, section.keys[j].name) << section.name;
  };
  check(server_keys());
  check(cache_keys());
  check(export_keys());
}

}  // namespace
}  // namespace nfsgw::config
