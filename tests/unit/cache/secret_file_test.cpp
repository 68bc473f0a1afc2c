// load_or_create_secret(): creation (mode 0600, 32 random bytes), reuse, refusal
// of short files, and concurrent creators agreeing on one secret.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cache/handle_codec.h"
#include "temp_dir.h"

using namespace nfsgw::cache;
using nfsgw::cache::testing::TempDir;

namespace {

/// Writes n bytes with mode `mode` (a secret file is for its owner alone).
void write_file(const std::string& path, std::size_t n, mode_t mode = 0600) {
  {
    std::ofstream out(path, std::ios::binary);
    for (std::size_t i = 0; i < n; ++i) out.put(static_cast<char>(i + 1));
  }
  ::chmod(path.c_str(), mode);
}

/// Sets the umask for one scope, so tests can check the mode is explicit.
class Umask {
 public:
  explicit Umask(mode_t m) : old_(::umask(m)) {}
  ~Umask() { ::umask(old_); }

 private:
  mode_t old_;
};

}  // namespace

TEST(SecretFile, CreatedWithMode0600And32Bytes) {
  TempDir dir;
  Umask permissive(0);
  auto s = load_or_create_secret(dir / "secret");
  EXPECT_EQ(s.size(), 32u);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  // Not all zero (getrandom really filled it).
  EXPECT_NE(s, std::vector<std::uint8_t>(32, 0));
  // No temporary files left behind.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(SecretFile, ReusedOnSecondLoad) {
  TempDir dir;
  auto first = load_or_create_secret(dir / "secret");
  auto second = load_or_create_secret(dir / "secret");
  EXPECT_EQ(first, second);
}

TEST(SecretFile, TwoPathsGetDifferentSecrets) {
  TempDir dir;
  EXPECT_NE(load_or_create_secret(dir / "a"), load_or_create_secret(dir / "b"));
}

TEST(SecretFile, ExistingFileUsedAsItIs) {
  TempDir dir;
  write_file(dir / "secret", 48);
  auto s = load_or_create_secret(dir / "secret");
  ASSERT_EQ(s.size(), 48u);
  EXPECT_EQ(s[0], 1);
  EXPECT_EQ(s[47], 48);
}

TEST(SecretFile, ShortFileRefusedWithClearMessage) {
  TempDir dir;
  write_file(dir / "secret", 31);
  try {
    load_or_create_secret(dir / "secret");
    FAIL() << "a 31-byte secret was accepted";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(dir / "secret"), std::string::npos) << m;
    EXPECT_NE(m.find("31 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("at least 32"), std::string::npos) << m;
  }
  // The short file was left alone, not replaced.
  EXPECT_EQ(std::filesystem::file_size(dir / "secret"), 31u);
  write_file(dir / "empty", 0);
  EXPECT_THROW(load_or_create_secret(dir / "empty"), std::runtime_error);
}

TEST(SecretFile, FileOpenToGroupOrOthersIsRefusedWithTheModeAndTheFix) {
  TempDir dir;
  const std::string path = dir / "secret";
  for (mode_t mode : {0640, 0604, 0620, 0602, 0644, 0666}) {
    write_file(path, 32, mode);
    try {
      load_or_create_secret(path);
      FAIL() << "a secret of mode " << std::oct << mode << " was accepted";
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      char want[8];
      std::snprintf(want, sizeof want, "%04o", static_cast<unsigned>(mode));
      EXPECT_NE(m.find(std::string("mode ") + want), std::string::npos) << m;
      EXPECT_NE(m.find("chmod 600 " + path), std::string::npos) << m;
    }
    std::filesystem::remove(path);
  }
  // The owner's own bits (and execute bits) do not matter; group and others' do.
  for (mode_t mode : {0600, 0400, 0700, 0611}) {
    write_file(path, 32, mode);
    EXPECT_EQ(load_or_create_secret(path).size(), 32u) << std::oct << mode;
    std::filesystem::remove(path);
  }
}

TEST(SecretFile, MissingDirectoryIsAnError) {
  TempDir dir;
  try {
    load_or_create_secret(dir / "no/such/dir/secret");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir"), std::string::npos) << e.what();
  }
}

TEST(SecretFile, DirectoryIsRefused) {
  TempDir dir;
  std::filesystem::create_directory(dir / "secret");
  EXPECT_THROW(load_or_create_secret(dir / "secret"), std::runtime_error);
}

TEST(SecretFile, ConcurrentCreatorsAgree) {
  for (int round = 0; round < 20; ++round) {
    TempDir dir;
    constexpr int kThreads = 6;
    std::vector<std::vector<std::uint8_t>> got(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { got[t] = load_or_create_secret(dir / "secret"); });
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
      ASSERT_EQ(got[t].size(), 32u);
      ASSERT_EQ(got[t], got[0]) << "round " << round;
    }
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
    EXPECT_EQ(entries, 1u);
  }
}
