// `nfsgw warm`'s command line and manifest: what is accepted, and the message for
// what is not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gateway/cli/manifest.h"
#include "gateway/cli/warm_args.h"

namespace nfsgw::warm {
namespace {

std::string error_of(const std::vector<std::string>& args) {
  try {
    parse_warm_args(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(WarmArgs, Defaults) {
  const WarmArgs a = parse_warm_args({"--config", "/etc/nfsgw.toml", "/export/a"});
  EXPECT_EQ(a.config_path, "/etc/nfsgw.toml");
  EXPECT_EQ(a.target, "/export/a");
  EXPECT_FALSE(a.depth);
  EXPECT_FALSE(a.data);
  EXPECT_EQ(a.parallel, admin::kDefaultWarmParallel);
  EXPECT_FALSE(a.manifest_path);
}

TEST(WarmArgs, EveryOptionInAnyOrder) {
  const WarmArgs a = parse_warm_args(
      {"/export", "--depth", "3", "--data", "--parallel", "64", "--manifest", "list.txt", "--config", "c.toml"});
  EXPECT_EQ(a.target, "/export");
  EXPECT_EQ(a.depth, 3u);
  EXPECT_TRUE(a.data);
  EXPECT_EQ(a.parallel, 64u);
  EXPECT_EQ(a.manifest_path, "list.txt");
  EXPECT_EQ(a.config_path, "c.toml");
  EXPECT_EQ(parse_warm_args({"--config", "c", "/e", "--depth", "0"}).depth, 0u);
}

TEST(WarmArgs, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(error_of({"/export"}), "warm needs --config FILE");
  EXPECT_EQ(error_of({"--config", "c"}), "warm needs EXPORT[/PATH]");
  EXPECT_EQ(error_of({"--config"}), "--config needs a value");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--depth"}), "--depth needs a value");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--depth", "-1"}), "--depth takes a whole number 0..1000000, not '-1'");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--depth", "2x"}), "--depth takes a whole number 0..1000000, not '2x'");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--depth", "1000001"}), "--depth must be 0..1000000, not 1000001");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--parallel", "0"}), "--parallel must be 1..256, not 0");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--parallel", "99999999999"}),
            "--parallel takes a whole number 1..256, not '99999999999'");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--recursive"}), "unexpected argument '--recursive' for warm");
  EXPECT_EQ(error_of({"--config", "c", "/e", "/f"}),
            "warm takes one EXPORT[/PATH]; '/e' and '/f' given (list several paths in a --manifest file)");
  EXPECT_EQ(error_of({"--config", "c", "/e", "--manifest", ""}), "--manifest needs a file name");
}

std::string manifest_error(const std::string& text, const std::string& base = "") {
  try {
    parse_manifest(text, "/export", base);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(WarmManifest, RelativeAndAbsoluteLinesCommentsAndDuplicates) {
  const auto paths = parse_manifest(
      "# render job 42\n"
      "shots/s01/a.exr\n"
      "\n"
      "/export/shots/s02\r\n"
      "shots//s01/a.exr/\n"
      "name with spaces.txt\n"
      "/export\n",
      "/export", "");
  EXPECT_EQ(paths, (std::vector<std::string>{"/shots/s01/a.exr", "/shots/s02", "/name with spaces.txt", ""}));
}

TEST(WarmManifest, RelativeLinesAreBelowTheTarget) {
  EXPECT_EQ(parse_manifest("a\n/export/shots/b\n", "/export", "/shots"),
            (std::vector<std::string>{"/shots/a", "/shots/b"}));
  // An export mounted as "/" takes absolute paths as they are.
  EXPECT_EQ(parse_manifest("/x/y", "/", ""), (std::vector<std::string>{"/x/y"}));
}

TEST(WarmManifest, BadLinesAreNamed) {
  EXPECT_EQ(manifest_error("a\n../etc/passwd\n"),
            "manifest line 2: '.' and '..' are not allowed in a path: '/../etc/passwd'");
  EXPECT_EQ(manifest_error("/other/x\n"), "manifest line 1: '/other/x' is not under the target /export");
  EXPECT_EQ(manifest_error("/export/a\n", "/shots"), "manifest line 1: '/export/a' is not under the target /export/shots");
  EXPECT_EQ(manifest_error("/exportfoo/a\n"), "manifest line 1: '/exportfoo/a' is not under the target /export");
  EXPECT_EQ(manifest_error(std::string("a\nb\0c\n", 6)), "manifest line 2: contains a NUL byte");
  EXPECT_EQ(manifest_error(std::string(5000, 'x')), "manifest line 1: longer than 4096 bytes");
  EXPECT_EQ(manifest_error(""), "the manifest names no path (only empty or '#' lines)");
  EXPECT_EQ(manifest_error("# nothing\n\n"), "the manifest names no path (only empty or '#' lines)");
}

TEST(WarmManifest, UnreadableFileIsNamed) {
  try {
    read_manifest_file("/nonexistent/list.txt");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read the manifest /nonexistent/list.txt: No such file or directory");
  }
  const auto path = std::filesystem::temp_directory_path() / "nfsgw-manifest-test.txt";
  {
    std::ofstream f(path);
    f << "a\nb\n";
  }
  EXPECT_EQ(read_manifest_file(path.string()), "a\nb\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace nfsgw::warm
