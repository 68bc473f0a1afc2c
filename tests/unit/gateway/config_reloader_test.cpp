// ConfigReloader: a valid file is compared with the running configuration and
// handed to the gateway; a bad one is refused with the start-up message and the
// running configuration is kept (and nothing is applied).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "gateway/reload/config_reloader.h"

namespace nfsgw::reload {
namespace {

const char* kRunning = R"([[export]]
path = "/data"
origin = "nfs://filer/data"
dir_ttl = "30s"
)";

class ConfigReloaderTest : public ::testing::Test {
 protected:
  ConfigReloaderTest() {
    dir = std::filesystem::temp_directory_path() / ("nfsgw-reloader-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
    path = (dir / "nfsgw.toml").string();
    write(kRunning);
    reloader.emplace(config::load_config(path), path, [this](const config::Config& now, const config::ReloadPlan& plan) {
      ++applied;
      last_now = &now;
      last_plan = plan;
      return std::vector<std::string>{"note from the gateway"};
    });
  }
  ~ConfigReloaderTest() override {
    reloader.reset();
    std::filesystem::remove_all(dir);
  }
  void write(const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

  std::filesystem::path dir;
  std::string path;
  int applied = 0;
  const config::Config* last_now = nullptr;
  config::ReloadPlan last_plan;
  std::optional<ConfigReloader> reloader;
};

TEST_F(ConfigReloaderTest, AValidFileIsAppliedAndAnswered) {
  write(std::string(kRunning).replace(std::string(kRunning).find("30s"), 3, "1s"));
  const std::string answer = reloader->reload(path);
  EXPECT_EQ(applied, 1);
  EXPECT_EQ(answer, "applied: export /data: dir_ttl: \"30s\" -> \"1s\"\nnote from the gateway\n");
  ASSERT_NE(last_now, nullptr);
  EXPECT_EQ(last_now, &reloader->current());
  EXPECT_EQ(reloader->current().exports[0].coherency.dir_ttl, std::chrono::seconds(1));
}

TEST_F(ConfigReloaderTest, AnUnchangedFileAppliesNothing) {
  EXPECT_EQ(reloader->reload(path), "no changes\n");
  EXPECT_EQ(applied, 0);
}

TEST_F(ConfigReloaderTest, ABadFileIsRefusedWithTheStartUpMessageAndTheRunningOneIsKept) {
  const config::Config* before = &reloader->current();
  write(std::string(kRunning) + "squash = \"sometimes\"\n");
  std::string startup_message;
  try {
    config::load_config(path);
  } catch (const config::ConfigError& e) {
    startup_message = e.what();
  }
  ASSERT_NE(startup_message.find("squash"), std::string::npos) << startup_message;
  try {
    reloader->reload(path);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "invalid configuration: " + startup_message + " (the running configuration is kept)");
  }
  EXPECT_EQ(applied, 0);
  EXPECT_EQ(&reloader->current(), before);
  EXPECT_EQ(reloader->current().exports[0].coherency.dir_ttl, std::chrono::seconds(30));
  // A later good file applies against the running configuration, not the bad one.
  write(kRunning);
  EXPECT_EQ(reloader->reload(path), "no changes\n");
}

TEST_F(ConfigReloaderTest, AMissingFileIsRefused) {
  EXPECT_THROW(reloader->reload((dir / "absent.toml").string()), std::invalid_argument);
  EXPECT_EQ(applied, 0);
}

TEST_F(ConfigReloaderTest, ReloadInBackgroundReadsTheStartUpFile) {
  write(std::string(kRunning) + "squash = \"all\"\n");
  reloader->reload_in_background();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (reloader->current().exports[0].squash != config::Squash::All && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(reloader->current().exports[0].squash, config::Squash::All);
  reloader->stop();
  EXPECT_EQ(applied, 1);
}

}  // namespace
}  // namespace nfsgw::reload
