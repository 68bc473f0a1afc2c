// Every result nfsgw makes up is built in one place (gateway/made_up.h), marked
// as nfsgw's own: a status set by hand somewhere else is how the marks came to
// disagree (a TOOSMALL of the cache unmarked, the translator's marked). This test
// reads the gateway's sources and fails on any other place that marks a result.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> places_that_mark_by_hand() {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(NFSGW_SOURCE_DIR) / "gateway")) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    if (entry.path().filename() == "made_up.h") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find("gateway_status = true") != std::string::npos)
        found.push_back(entry.path().string() + ":" + std::to_string(n));
    }
  }
  return found;
}

TEST(MadeUp, NoResultIsMarkedAsNfsgwsOwnOutsideMadeUpH) {
  const auto found = places_that_mark_by_hand();
  std::ostringstream where;
  for (const auto& f : found) where << "\n  " << f;
  EXPECT_TRUE(found.empty()) << "build these with made_up<Res>(status):" << where.str();
}

TEST(MadeUp, TheScanSeesTheSources) {
  // Positive control: the folder is where the test looks, and it is not empty.
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(NFSGW_SOURCE_DIR) / "gateway" / "made_up.h"));
}

}  // namespace
