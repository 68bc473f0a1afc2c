#include "config/toml_input.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "config/config.h"
#include "config/duration.h"

namespace nfsgw::config {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

Input::Input(const std::string& file, const toml::value& root) : Input(&file, &root, nullptr, "") {}

Input::Input(const std::string* file, const toml::value* value, const toml::value* parent, std::string name)
    : file_(file), value_(value), parent_(parent), name_(std::move(name)) {}

Input Input::key(const std::string& key) const {
  const toml::value* v = nullptr;
  if (value_ && value_->is_table()) {
    const auto& t = value_->as_table();
    if (auto it = t.find(key); it != t.end()) v = &it->second;
  }
  // A section missing from the document has no line to point at.
  const toml::value* parent = name_.empty() ? nullptr : value_ ? value_ : parent_;
  return Input(file_, v, parent, name_.empty() ? key : name_ + "." + key);
}

Input Input::item(std::size_t i) const {
  return Input(file_, &value_->as_array().at(i), value_, name_ + "[" + std::to_string(i) + "]");
}

Input Input::either(const std::string& first, const std::string& second) const {
  Input a = key(first);
  if (a.present()) return a;
  Input b = key(second);
  b.name_ = a.name_;
  return b;
}

void Input::fail(const std::string& what) const {
  std::string where = *file_;
  if (const toml::value* at = value_ ? value_ : parent_) {
    if (auto line = at->location().line(); line > 0) where += ":" + std::to_string(line);
  }
  throw ConfigError(where + ": " + (name_.empty() ? "" : name_ + ": ") + what);
}

std::string Input::shown() const {
  const toml::value& v = *value_;
  switch (v.type()) {
    case toml::value_t::string: return "the string " + quote(v.as_string().str);
    case toml::value_t::integer: return "the integer " + std::to_string(v.as_integer());
    case toml::value_t::floating: {
      std::ostringstream os;
      os << v.as_floating();
      return "the float " + os.str();
    }
    case toml::value_t::boolean: return v.as_boolean() ? "true" : "false";
    case toml::value_t::table: return "a table";
    case toml::value_t::array: return "an array";
    case toml::value_t::empty: return "nothing";
    default: return "a date/time";
  }
}

bool Input::boolean() const {
  if (!value_->is_boolean()) fail("expected true or false, got " + shown());
  return value_->as_boolean();
}

std::int64_t Input::integer(std::int64_t lo, std::int64_t hi) const {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (!value_->is_integer()) fail("expected an integer (" + range + "), got " + shown());
  const std::int64_t i = value_->as_integer();
  if (i < lo || i > hi) fail(std::to_string(i) + " is out of range; allowed: " + range);
  return i;
}

const std::string& Input::string(const std::string& expected) const {
  if (!value_->is_string()) fail("expected " + expected + ", got " + shown());
  return value_->as_string().str;
}

std::chrono::milliseconds Input::duration(std::chrono::milliseconds lo, std::chrono::milliseconds hi,
                                          bool zero_too) const {
  if (!value_->is_string()) {
    fail("expected a duration string such as \"30s\", got " + shown() + "; allowed: " + kDurationForms);
  }
  const std::string& text = value_->as_string().str;
  std::string why;
  const auto d = parse_duration(text, &why);
  if (!d) fail(quote(text) + " is not a duration: " + why + "; allowed: " + kDurationForms);
  if (zero_too && d->count() == 0) return *d;
  const std::string range = (zero_too ? "\"0\" (never) or " : "") + format_duration(lo) + ".." + format_duration(hi);
  // Below a floor that is not zero, "too short" says which way the value is off.
  if (*d < lo && zero_too) fail(quote(text) + " is too short; allowed: " + range);
  if (*d < lo || *d > hi) fail(quote(text) + " is out of range; allowed: " + range);
  return *d;
}

std::size_t Input::array_size(const std::string& expected) const {
  if (!value_->is_array()) fail("expected " + expected + ", got " + shown());
  return value_->as_array().size();
}

void Input::expect_table(const std::string& spelled) const {
  if (value_ && !value_->is_table()) fail("expected a table (" + spelled + "), got " + shown());
}

void Input::only(const std::vector<std::string>& allowed) const {
  std::vector<std::string> keys;
  for (const auto& [k, _] : value_->as_table()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (const auto& k : keys) {
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    const Input bad = key(k);
    bad.fail("unknown key " + quote(k) + " (value " + bad.shown() + ")" +
             (name_.empty() ? " at top level" : " in " + name_) + "; allowed: " + list);
  }
}

}  // namespace nfsgw::config
