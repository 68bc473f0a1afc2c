// The key lists of docs/configuration.md are the ones the key tables make: a key
// added, renamed, re-bounded or made reloadable in the code fails here until the
// docs say so too.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "config/key_docs.h"

namespace nfsgw::config {
namespace {

/// The table of the docs' section headed `heading`: its lines from the first that
/// starts with "| key |" to the last "|" line after it.
std::string table_under(const std::string& doc, const std::string& heading) {
  const auto at = doc.find("\n" + heading + "\n");
  if (at == std::string::npos) return "(no heading " + heading + ")";
  auto line = doc.find("\n| key |", at);
  if (line == std::string::npos) return "(no key table under " + heading + ")";
  std::string out;
  for (++line; line < doc.size() && doc[line] == '|';) {
    const auto end = doc.find('\n', line);
    out += doc.substr(line, end - line) + "\n";
    line = end + 1;
  }
  return out;
}

TEST(ConfigDocs, KeyListsAreTheKeyTables) {
  std::ifstream in(NFSGW_CONFIGURATION_DOC);
  ASSERT_TRUE(in) << NFSGW_CONFIGURATION_DOC;
  std::ostringstream doc;
  doc << in.rdbuf();
  for (const auto& [heading, section] : {std::pair<std::string, std::string>{"## `[server]`", "server"},
                                         {"## `[cache]`", "cache"},
                                         {"## `[[export]]`", "export"}}) {
    EXPECT_EQ(table_under(doc.str(), heading), key_table_markdown(section))
        << "docs/configuration.md, " << heading << ": replace the table with the one expected above";
  }
}

TEST(ConfigDocs, OnlyTheThreeSectionsHaveTables) {
  EXPECT_THROW(key_table_markdown("exports"), std::invalid_argument);
}

}  // namespace
}  // namespace nfsgw::config
