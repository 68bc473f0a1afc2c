// How deeply a configuration text nests arrays and inline tables, bounded before
// toml11 parses it: toml11 3.7 recurses once per level and overflows the stack
// on a few thousand '[' (found by tests/fuzz/fuzz_config).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace nfsgw::config {

/// nfsgw's own keys nest two levels at most; this leaves room and stays far from
/// any stack limit.
inline constexpr std::size_t kMaxNesting = 32;

/// The offset of the first '[' or '{' that opens a level beyond `max` (counting
/// every bracket outside comments, in or out of strings: conservative), or nullopt.
std::optional<std::size_t> first_too_deep(std::string_view text, std::size_t max = kMaxNesting);

}  // namespace nfsgw::config
