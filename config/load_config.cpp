// Reading nfsgw's TOML configuration into typed structs, with strict validation.
//
// Every problem becomes a ConfigError of the form
//   "<file>:<line>: <key>: <what is wrong with the value>; allowed: <...>"
// so an operator can fix the file without reading the source. Unknown keys are
// errors, not warnings: a misspelt "acess = \"ro\"" silently ignored would export
// a tree read-write.
// Which keys there are, and how each is read, is in the key tables (config/key.h);
// this file checks the text, parses it and walks the tables.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <toml.hpp>

#include "config/config.h"
#include "config/integer_check.h"
#include "config/key.h"
#include "config/nesting_check.h"
#include "config/toml_input.h"
#include "config/utf8_check.h"

namespace nfsgw::config {
namespace {

/// A section's keys, read by its table of keys (config/key.h): unknown ones are
/// refused, each declared one is read or defaulted, then the rules between keys.
template <typename S>
S read_section(const Input& table, const SectionKeys<S>& section) {
  if (table.present()) {
    std::vector<std::string> names;
    for (const auto& k : section.keys) names.push_back(k.name);
    table.only(names);
  }
  S s;
  for (const auto& k : section.keys) {
    const Input in = table.key(k.name);
    if (in.present()) {
      k.read(in, s);
    } else if (k.absent) {
      k.absent(in, s);
    }
  }
  if (section.finish) section.finish(table, s);
  return s;
}

/// Every [[export]]: at least one, paths (and the ids derived from them) unique.
std::vector<ExportConfig> read_exports(const Input& root) {
  const std::string none = "no exports; add at least one [[export]] table with path and origin";
  const Input list = root.key("export");
  if (!list.present()) list.fail(none);
  const std::size_t n = list.array_size("[[export]] tables");
  if (n == 0) list.fail(none);
  std::vector<ExportConfig> out;
  for (std::size_t k = 0; k < n; ++k) {
    const Input table = list.item(k);
    table.expect_table("[[export]]");
    ExportConfig e = read_section(table, export_keys());
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].path == e.path) {
        table.key("path").fail(quote(e.path) + " is already exported by export[" + std::to_string(j) +
                               "]; allowed: each path once");
      }
      if (out[j].id == e.id) {
        table.key("path").fail(quote(e.path) + " hashes to the same export id (" + std::to_string(e.id) +
                               ") as export[" + std::to_string(j) + "].path " + quote(out[j].path) +
                               "; rename one of them");
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

Config parse_config(const std::string& toml_text, const std::string& origin_name) {
  // A TOML document is UTF-8 (TOML 1.0). Refused here, before toml11 3.7 sees it:
  // a literal string ('...' or '''...''') holding invalid UTF-8 makes its error path
  // read outside the text (found by tests/fuzz/fuzz_config).
  if (auto bad = first_invalid_utf8(toml_text)) {
    const auto before = std::string_view(toml_text).substr(0, *bad);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto column = *bad - (before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1) + 1;
    throw ConfigError(origin_name + ":" + std::to_string(line) + ": not valid UTF-8 at column " +
                      std::to_string(column) + " (a TOML file must be UTF-8 text)");
  }
  // toml11 recurses once per nested array or inline table: bounded here, or a few
  // thousand '[' overflow the stack (found by tests/fuzz/fuzz_config).
  if (auto deep = first_too_deep(toml_text)) {
    const auto before = std::string_view(toml_text).substr(0, *deep);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    throw ConfigError(origin_name + ":" + std::to_string(line) + ": arrays or tables nested deeper than " +
                      std::to_string(kMaxNesting) + " levels");
  }
  // toml11 adds up a binary literal's digits in an int64 with no bound (a signed
  // overflow; found by tests/fuzz/fuzz_config under UBSan): too long ones stop here.
  if (auto big = first_overlong_binary(toml_text)) {
    const auto before = std::string_view(toml_text).substr(0, *big);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    throw ConfigError(origin_name + ":" + std::to_string(line) + ": a binary integer of more than " +
                      std::to_string(kMaxBinaryDigits) +
                      " digits (leading zeros included) cannot be read; write it in decimal or hex");
  }
  toml::value root;
  try {
    std::istringstream in(toml_text);
    root = toml::parse(in, origin_name);
  } catch (const toml::exception& e) {
    // toml11's message shows the offending line with a caret under the column;
    // the line number goes up front too, in the same form as validation errors.
    std::string where = origin_name;
    if (auto line = e.location().line(); line > 0) where += ":" + std::to_string(line);
    throw ConfigError(where + ": TOML syntax error: " + e.what());
  } catch (const std::exception& e) {
    throw ConfigError(origin_name + ": cannot parse TOML: " + e.what());
  }
  if (!root.is_table()) throw ConfigError(origin_name + ": the document is not a TOML table");
  const Input doc(origin_name, root);
  doc.only({"server", "cache", "export"});
  const Input server = doc.key("server");
  server.expect_table("[server]");
  const Input cache = doc.key("cache");
  cache.expect_table("[cache]");
  Config cfg;
  cfg.server = read_section(server, server_keys());
  cfg.cache = read_section(cache, cache_keys());
  cfg.exports = read_exports(doc);
  return cfg;
}

Config load_config(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(path + ": is a directory, not a configuration file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path + ": cannot open the configuration file: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read the configuration file");
  return parse_config(text.str(), path);
}

}  // namespace nfsgw::config
