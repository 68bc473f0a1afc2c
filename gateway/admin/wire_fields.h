// The `keyword k=v k=v` body lines that streamed admin replies carry (the warm's
// and the flush's progress and summary lines: gateway/admin/warm_wire.h,
// flush_wire.h). Values are unsigned decimals; a reader ignores keys it does not
// know, so fields can be added without a new protocol version.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace nfsgw::admin {

using WireFields = std::map<std::string, std::uint64_t, std::less<>>;

/// The fields of `line` (without '\n') when it is `keyword` followed by
/// space-separated `key=decimal` tokens; nullopt otherwise.
std::optional<WireFields> parse_wire_fields(std::string_view line, std::string_view keyword);

/// The value of `key`, 0 when absent.
std::uint64_t wire_field(const WireFields& fields, std::string_view key);

}  // namespace nfsgw::admin
