// Damaged configuration files: whatever the bytes, parse_config either returns a
// config or throws ConfigError; it never crashes or throws anything else.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "config/config.h"

using namespace nfsgw::config;

namespace {

std::string sample_text() {
  std::ifstream in(NFSGW_SAMPLE_CONFIG);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Parses and reports: 0 accepted, 1 ConfigError; anything else fails the test.
int outcome(const std::string& text) {
  try {
    parse_config(text, "fuzz.toml");
    return 0;
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("fuzz.toml", 0), 0u) << e.what();
    return 1;
  }
}

}  // namespace

TEST(ConfigFuzz, MutatedSampleNeverCrashes) {
  const std::string base = sample_text();
  ASSERT_GT(base.size(), 100u);
  ASSERT_EQ(outcome(base), 0);
  std::mt19937 rng(2024);
  const std::string alphabet = "[]{}=\".,/:#\\\n 0123456789abcdefxyz-_'\x01\xff";
  int refused = 0;
  for (int i = 0; i < 400; ++i) {
    std::string t = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !t.empty(); ++e) {
      std::size_t pos = rng() % t.size();
      switch (rng() % 4) {
        case 0: t[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: t.erase(pos, 1 + rng() % 8); break;
        case 2: t.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        default: t.resize(pos); break;
      }
    }
    refused += outcome(t);
  }
  // Most damage must be noticed: a parser that accepted everything would fail here.
  EXPECT_GT(refused, 200);
}
