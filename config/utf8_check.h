// Whether a configuration text is UTF-8, as TOML 1.0 requires of a document.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace nfsgw::config {

/// The offset of the first byte that does not belong to a well-formed UTF-8
/// sequence (Unicode table 3-7: no overlong forms, no surrogates, nothing above
/// U+10FFFF), or nullopt when the whole text is well-formed.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

}  // namespace nfsgw::config
