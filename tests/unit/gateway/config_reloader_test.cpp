// ConfigReloader: a valid file is compared with the running configuration and
// handed to the gateway; a bad one is refused with the start-up message and the
// running configuration is kept (and nothing is applied).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <mutex>
#include <string>

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
      {
        std::lock_guard lock(applied_mu);
        ++applied;
      }
      applied_cv.notify_all();
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
  /// Waits until `n` configurations have been applied; false after `limit`.
  bool wait_applied(int n, std::chrono::seconds limit) {
    std::unique_lock lock(applied_mu);
    return applied_cv.wait_for(lock, limit, [&] { return applied >= n; });
  }

  std::filesystem::path dir;
  std::string path;
  std::mutex applied_mu;
  std::condition_variable applied_cv;
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
  ASSERT_TRUE(wait_applied(1, std::chrono::seconds(10))) << "the background reload applied nothing";
  EXPECT_EQ(reloader->current().exports[0].squash, config::Squash::All);
  reloader->stop();
  EXPECT_EQ(applied, 1);
}

}  // namespace
}  // namespace nfsgw::reload
