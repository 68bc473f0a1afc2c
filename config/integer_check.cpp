#include "config/integer_check.h"

namespace nfsgw::config {

namespace {

bool starts_with(std::string_view text, std::size_t i, std::string_view what) {
  return text.substr(i, what.size()) == what;
}

// Where the string opening at `i` ends (one past its closing quote, or the end).
std::size_t skip_string(std::string_view text, std::size_t i) {
  const char q = text[i];
  const bool basic = q == '"';
  const std::string_view triple = basic ? std::string_view("\"\"\"") : std::string_view("'''");
  const bool multi = starts_with(text, i, triple);
  std::size_t j = i + (multi ? 3 : 1);
  while (j < text.size()) {
    if (basic && text[j] == '\\') {
      j += 2;
      continue;
    }
    if (multi ? starts_with(text, j, triple) : text[j] == q) return j + (multi ? 3 : 1);
    if (!multi && text[j] == '\n') return j;  // unterminated: toml11 reports it
    ++j;
  }
  return text.size();
}

bool word_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' ||
         c == '.';
}

}  // namespace

std::optional<std::size_t> first_overlong_binary(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      i = skip_string(text, i);
    } else if (c == '0' && i + 1 < text.size() && text[i + 1] == 'b' && (i == 0 || !word_char(text[i - 1]))) {
      const std::size_t start = i;
      std::size_t digits = 0;
      for (i += 2; i < text.size() && (text[i] == '0' || text[i] == '1' || text[i] == '_'); ++i) {
        if (text[i] != '_' && ++digits > kMaxBinaryDigits) return start;
      }
    } else {
      ++i;
    }
  }
  return std::nullopt;
}

}  // namespace nfsgw::config
