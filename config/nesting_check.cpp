#include "config/nesting_check.h"

namespace nfsgw::config {

std::optional<std::size_t> first_too_deep(std::string_view text, std::size_t max) {
  std::size_t depth = 0;
  bool comment = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (comment) {
      comment = c != '\n';
      continue;
    }
    if (c == '#') {
      comment = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace nfsgw::config
