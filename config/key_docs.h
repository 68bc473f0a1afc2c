// The key lists of docs/configuration.md, made from the key tables (config/key.h);
// a unit test compares them with the docs, so the docs cannot drift from the code.
#pragma once

#include <string>

namespace nfsgw::config {

/// The Markdown table of the keys of `section` ("server", "cache" or "export"): a
/// header row, then one row per key in declaration order. Throws
/// std::invalid_argument for another section name.
std::string key_table_markdown(const std::string& section);

}  // namespace nfsgw::config
