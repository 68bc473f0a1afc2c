// Files of awkward and large sizes (0, 1, 4095, 1 MiB + 7, 1 GiB) round-trip
// byte-identical through nfsgw with nfs-cp, in both directions: a local file is
// copied up and compared with the origin's file on disk, and a file put straight on
// the origin's disk is copied down and compared. Content is pseudo-random (never
// sparse), compared by SHA-256; every temp file is removed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/support/file_digest.h"
#include "tests/support/gateway_env.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginAndGatewayEnvironment);

class LargeFiles : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  void SetUp() override { INTEG_REQUIRE_GATEWAY(); }
};

TEST_P(LargeFiles, NfsCpRoundTripIsByteIdentical) {
  const std::uint64_t size = GetParam();
  const auto limit = std::chrono::seconds(size > (64u << 20) ? 900 : 120);
  TempDir local("large");
  const std::string name = "large_" + std::to_string(size);
  const std::string on_origin = shared_origin().export_dir() + "/" + name;

  // Up: local -> nfsgw -> origin disk.
  const std::string up_src = local.sub("up");
  write_random_file(up_src, size, size + 1);
  const std::string want_up = sha256_file(up_src);
  auto up = run({"nfs-cp", up_src, gateway_url(name + ".up")}, limit);
  ASSERT_EQ(up.exit_code, 0) << "nfs-cp up failed:\n" << up.output;
  EXPECT_EQ(file_size(on_origin + ".up"), static_cast<long long>(size));
  EXPECT_EQ(sha256_file(on_origin + ".up"), want_up) << "content changed on the way up";
  ::unlink(up_src.c_str());
  ::unlink((on_origin + ".up").c_str());

  // Down: origin disk -> nfsgw -> local.
  write_random_file(on_origin + ".down", size, size + 2);
  const std::string want_down = sha256_file(on_origin + ".down");
  const std::string down_dst = local.sub("down");
  auto down = run({"nfs-cp", gateway_url(name + ".down"), down_dst}, limit);
  ASSERT_EQ(down.exit_code, 0) << "nfs-cp down failed:\n" << down.output;
  EXPECT_EQ(file_size(down_dst), static_cast<long long>(size));
  EXPECT_EQ(sha256_file(down_dst), want_down) << "content changed on the way down";
  ::unlink(down_dst.c_str());
  ::unlink((on_origin + ".down").c_str());
}

INSTANTIATE_TEST_SUITE_P(Sizes, LargeFiles,
                         ::testing::Values(0ull, 1ull, 4095ull, (1ull << 20) + 7, 1ull << 30),
                         [](const auto& info) { return "bytes_" + std::to_string(info.param); });

// nfs-ls and nfs-cat see through nfsgw what is on the origin.
TEST(LibnfsUtils, LsAndCatMatchTheOrigin) {
  INTEG_REQUIRE_GATEWAY();
  make_dirs(shared_origin().export_dir() + "/utils");
  write_text_file(shared_origin().export_dir() + "/utils/one.txt", "first file\n");
  write_text_file(shared_origin().export_dir() + "/utils/two.txt", "second\n");
  auto cat = run({"nfs-cat", gateway_url("utils/one.txt")}, std::chrono::seconds(60));
  ASSERT_EQ(cat.exit_code, 0) << cat.output;
  EXPECT_EQ(cat.output, "first file\n");
  // nfs-ls mounts the URL's path: list the export root, the only thing nfsgw exports.
  auto ls = run({"nfs-ls", gateway_url()}, std::chrono::seconds(60));
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("utils"), std::string::npos) << ls.output;
  auto straight = run({"nfs-ls", shared_origin().url()},
                      std::chrono::seconds(60));
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  EXPECT_EQ(ls.output, straight.output) << "nfs-ls through nfsgw differs from straight";
}

}  // namespace
