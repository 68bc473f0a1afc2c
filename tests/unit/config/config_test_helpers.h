// Parsing a configuration that must be refused, for the config tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"

namespace nfsgw::config::testing {

/// The error message of parsing `toml` as "test.toml", or "" when it is accepted.
inline std::string message_of(const std::string& toml) {
  try {
    parse_config(toml, "test.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

/// Refused, and the message starts with the file and carries every substring.
inline void expect_refused(const std::string& toml, const std::vector<std::string>& expect) {
  std::string m = message_of(toml);
  ASSERT_FALSE(m.empty()) << "accepted:\n" << toml;
  EXPECT_EQ(m.rfind("test.toml:", 0), 0u) << m;
  for (const auto& s : expect) EXPECT_NE(m.find(s), std::string::npos) << "missing '" << s << "' in: " << m;
}

}  // namespace nfsgw::config::testing
