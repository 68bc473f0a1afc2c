// Binary integer literals too long for a 64-bit integer, refused before toml11
// parses them: toml11 3.7 adds up a 0b literal's digits in an int64 without a
// bound, a signed overflow (undefined behaviour; found by tests/fuzz/fuzz_config
// under UBSan with "n = 0b" and 109 ones, then with 63 ones).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace nfsgw::config {

/// toml11 doubles its place value for every digit, leading zeros included, and the
/// place value after the last digit must still fit an int64: 62 digits at most
/// (values up to 2^62 - 1; larger ones are written in decimal or hex).
inline constexpr std::size_t kMaxBinaryDigits = 62;

/// The offset of the first binary literal ("0b...", outside comments and strings)
/// with more than kMaxBinaryDigits digits ('_' separators not counted), or nullopt.
std::optional<std::size_t> first_overlong_binary(std::string_view text);

}  // namespace nfsgw::config
