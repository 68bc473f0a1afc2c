// The logger nfsgw gives RocksDB for its LOG file (cache/rocksdb_log.h): lines are
// written, the file starts again past its limit (the full one kept as .old), and a
// database opened by open_rocksdb_store logs through it. That it survives a full
// disk is tested for real in tests/integration/crash_test.cpp (a filled tmpfs).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <rocksdb/env.h>

#include "cache/kv_store.h"
#include "cache/rocksdb_log.h"
#include "temp_dir.h"

using namespace nfsgw::cache;
using nfsgw::cache::testing::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST(RocksDbLog, WritesLinesAndStartsAgainPastItsLimit) {
  TempDir dir;
  const std::string path = dir / "LOG";
  {
    auto log = make_tolerant_rocksdb_logger(path, 4096);
    for (int i = 0; i < 100; ++i)
      rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, log, "line %d of the test, padded to be long enough", i);
  }
  const std::string now = slurp(path), old = slurp(path + ".old");
  EXPECT_LE(now.size(), 4096u);
  EXPECT_GT(old.size(), 3000u);  // the full file, kept
  EXPECT_LE(old.size(), 4096u);
  EXPECT_NE(now.find("line 99 of the test"), std::string::npos) << now;
  EXPECT_EQ(now.find("line 0 of"), std::string::npos);
  EXPECT_EQ(now.back(), '\n');
}

TEST(RocksDbLog, TheDatabaseLogsThroughIt) {
  TempDir dir;
  const std::string db = dir / "db";
  std::filesystem::create_directories(db);
  std::ofstream(db + "/LOG") << "the previous run's log\n";
  { auto kv = open_rocksdb_store(db, 8); }
  EXPECT_EQ(slurp(db + "/LOG.old"), "the previous run's log\n");
  EXPECT_NE(slurp(db + "/LOG").find("RocksDB version"), std::string::npos);
}
