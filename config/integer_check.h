// Binary integer literals too long for a 64-bit integer, refused before toml11
// parses them: toml11 3.7 adds up a 0b literal's digits in an int64 without a
// bound, a signed overflow (undefined behaviour; found by tests/fuzz/fuzz_config
// under UBSan with "n = 0b" and 109 ones).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace nfsgw::config {

/// A TOML integer is a signed 64-bit value: a binary literal has at most 63
/// significant digits.
inline constexpr std::size_t kMaxBinaryDigits = 63;

/// The offset of the first binary literal ("0b...", outside comments and strings)
/// with more than kMaxBinaryDigits significant digits, or nullopt.
std::optional<std::size_t> first_overlong_binary(std::string_view text);

}  // namespace nfsgw::config
