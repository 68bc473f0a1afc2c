#include "gateway/admin/wire_fields.h"

#include <algorithm>
#include <charconv>

namespace nfsgw::admin {

std::optional<WireFields> parse_wire_fields(std::string_view line, std::string_view keyword) {
  if (line.substr(0, keyword.size()) != keyword) return std::nullopt;
  line.remove_prefix(keyword.size());
  if (!line.empty() && line[0] != ' ') return std::nullopt;
  WireFields out;
  while (!line.empty()) {
    if (line[0] == ' ') {
      line.remove_prefix(1);
      continue;
    }
    const std::size_t end = std::min(line.find(' '), line.size());
    const std::string_view token = line.substr(0, end);
    line.remove_prefix(end);
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    std::uint64_t v = 0;
    const std::string_view num = token.substr(eq + 1);
    const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size() || num.empty()) return std::nullopt;
    out[std::string(token.substr(0, eq))] = v;
  }
  return out;
}

std::uint64_t wire_field(const WireFields& fields, std::string_view key) {
  const auto it = fields.find(key);
  return it == fields.end() ? 0 : it->second;
}

}  // namespace nfsgw::admin
