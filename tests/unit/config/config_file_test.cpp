// load_config(): the sample file from the docs, and file-level failures.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "config/config.h"

using namespace nfsgw::config;

TEST(ConfigFile, SampleLoads) {
  auto c = load_config(NFSGW_SAMPLE_CONFIG);
  EXPECT_EQ(c.server.nfs_port, 2049);
  EXPECT_EQ(c.cache.memory_mb, 512u);
  EXPECT_EQ(c.cache.metadata_max_gb, 4u);
  EXPECT_EQ(c.cache.secret_file, "/var/lib/nfsgw/secret");
  ASSERT_EQ(c.exports.size(), 2u);
  EXPECT_EQ(c.exports[0].path, "/projects");
  EXPECT_EQ(c.exports[0].upstream_connections, 8u);
  EXPECT_EQ(c.exports[0].coherency.fsinfo_ttl, std::chrono::hours{1});
  EXPECT_EQ(c.exports[1].coherency.consistency, nfsgw::cache::Consistency::Immutable);
  EXPECT_TRUE(c.exports[0].allows("10.20.30.40"));
  EXPECT_TRUE(c.exports[0].allows("fd00:1::abcd"));
  EXPECT_FALSE(c.exports[0].allows("192.168.0.1"));
  EXPECT_EQ(c.exports[1].access, Access::ReadOnly);
  EXPECT_EQ(c.exports[1].squash, Squash::All);
  EXPECT_EQ(c.exports[1].origin.mount_port, 20048);
  EXPECT_TRUE(c.exports[1].allows("192.168.0.1"));
  EXPECT_NE(c.exports[0].id, c.exports[1].id);
}

TEST(ConfigFile, MissingFileNamesPath) {
  try {
    load_config("/nonexistent/nfsgw.toml");
    FAIL();
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("/nonexistent/nfsgw.toml"), std::string::npos) << m;
    EXPECT_NE(m.find("No such file"), std::string::npos) << m;
  }
}

TEST(ConfigFile, DirectoryIsRefused) {
  try {
    load_config("/");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

TEST(ConfigFile, ErrorsNameTheFile) {
  std::string path = ::testing::TempDir() + "nfsgw_config_bad.toml";
  {
    std::ofstream out(path);
    out << "[server]\nthreads = -2\n[[export]]\npath = \"/e\"\norigin = \"nfs://h/e\"\n";
  }
  try {
    load_config(path);
    FAIL();
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind(path + ":2: server.threads", 0), 0u) << m;
    EXPECT_NE(m.find("-2"), std::string::npos) << m;
  }
  std::remove(path.c_str());
}

TEST(ConfigFile, BinaryGarbageIsRefusedCleanly) {
  std::string junk("\x00\xff\xfe[[[\"\x01", 9);
  EXPECT_THROW(parse_config(junk, "junk"), ConfigError);
}
