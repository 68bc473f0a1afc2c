#include "config/utf8_check.h"

#include <cstdint>

namespace nfsgw::config {

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
  const auto in = [](std::uint8_t b, std::uint8_t lo, std::uint8_t hi) { return b >= lo && b <= hi; };
  std::size_t i = 0;
  while (i < text.size()) {
    const std::uint8_t b = byte(i);
    if (b < 0x80) {
      ++i;
      continue;
    }
    // Length of the sequence and the range allowed for its second byte.
    std::size_t len = 0;
    std::uint8_t lo = 0x80, hi = 0xbf;
    if (in(b, 0xc2, 0xdf)) {
      len = 2;
    } else if (b == 0xe0) {
      len = 3, lo = 0xa0;
    } else if (in(b, 0xe1, 0xec) || in(b, 0xee, 0xef)) {
      len = 3;
    } else if (b == 0xed) {
      len = 3, hi = 0x9f;  // no surrogates
    } else if (b == 0xf0) {
      len = 4, lo = 0x90;
    } else if (in(b, 0xf1, 0xf3)) {
      len = 4;
    } else if (b == 0xf4) {
      len = 4, hi = 0x8f;  // nothing above U+10FFFF
    } else {
      return i;  // a continuation byte first, an overlong lead (C0, C1), or F5..FF
    }
    if (text.size() - i < len || !in(byte(i + 1), lo, hi)) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (!in(byte(i + k), 0x80, 0xbf)) return i;
    }
    i += len;
  }
  return std::nullopt;
}

}  // namespace nfsgw::config
