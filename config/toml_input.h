// One value of a parsed TOML document as the loader sees it: where it is, what it
// is called in messages ("export[0].clients[1]") and typed reads that refuse
// anything else with a ConfigError of the form
//   "<file>:<line>: <name>: <what is wrong with the value>; allowed: <...>"
// so that every key's errors read alike, whichever kind of key it is.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <toml.hpp>

namespace nfsgw::config {

/// `s` in double quotes, with quotes, backslashes and control bytes escaped.
std::string quote(const std::string& s);

class Input {
 public:
  /// The document itself, read from `file` (which must outlive every Input).
  Input(const std::string& file, const toml::value& root);

  /// The value of `key` in this table: absent when this table is absent or lacks it.
  Input key(const std::string& key) const;
  /// Element `i` of this array.
  Input item(std::size_t i) const;
  /// `first`, named as such, where it is written; else `second`'s place (for a rule
  /// between two keys, only one of which may be in the file).
  Input either(const std::string& first, const std::string& second) const;

  bool present() const { return value_ != nullptr; }
  const std::string& name() const { return name_; }

  /// Throws the ConfigError for this value (or for its table when it is absent).
  [[noreturn]] void fail(const std::string& what) const;

  /// Typed reads of a present value; each refuses another type, naming `expected`.
  bool boolean() const;
  std::int64_t integer(std::int64_t lo, std::int64_t hi) const;
  const std::string& string(const std::string& expected = "a string") const;
  /// A duration string (config/duration.h) in lo..hi, or "0" too when `zero_too`.
  std::chrono::milliseconds duration(std::chrono::milliseconds lo, std::chrono::milliseconds hi,
                                     bool zero_too = false) const;
  std::size_t array_size(const std::string& expected) const;
  /// Refuses a present value that is not a table; `spelled` is how one is
  /// written in the file ("[server]", "[[export]]").
  void expect_table(const std::string& spelled) const;
  /// Refuses the first key (in sorted order, so the message is deterministic) of
  /// this table that is not in `allowed`, listing those.
  void only(const std::vector<std::string>& allowed) const;

 private:
  Input(const std::string* file, const toml::value* value, const toml::value* parent, std::string name);
  /// "the integer 3", "the string \"x\"", "a table": the value in messages.
  std::string shown() const;

  const std::string* file_;
  const toml::value* value_;   // nullptr: absent
  const toml::value* parent_;  // where an absent value is reported
  std::string name_;
};

}  // namespace nfsgw::config
