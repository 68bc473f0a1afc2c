// Both KvStore implementations: the same behaviour, binary-safe keys and values;
// the RocksDB one also persists across reopening.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "cache/kv_store.h"
#include "temp_dir.h"

using namespace nfsgw::cache;
using nfsgw::cache::testing::TempDir;

namespace {

void exercise(KvStore& s) {
  EXPECT_FALSE(s.get("missing").has_value());
  s.put("a", "1");
  s.put("b", "");
  EXPECT_EQ(s.get("a"), "1");
  ASSERT_TRUE(s.get("b").has_value());
  EXPECT_EQ(*s.get("b"), "");
  s.put("a", "2");
  EXPECT_EQ(s.get("a"), "2");
  s.erase("a");
  EXPECT_FALSE(s.get("a").has_value());
  s.erase("never-there");  // not an error
  // Keys and values are bytes: embedded NULs and high bytes survive.
  std::string k("k\0\xff", 3), v("\0\x01\x80", 3);
  s.put(k, v);
  EXPECT_EQ(s.get(k), v);
  EXPECT_FALSE(s.get(std::string_view("k", 1)).has_value());
  EXPECT_FALSE(s.get(std::string("k\0", 2)).has_value());
}

}  // namespace

TEST(MemoryStore, Basics) {
  auto s = make_memory_store();
  exercise(*s);
}

TEST(RocksDbStore, Basics) {
  TempDir dir;
  auto s = open_rocksdb_store(dir / "db", 16);
  exercise(*s);
}

TEST(RocksDbStore, SurvivesReopen) {
  TempDir dir;
  {
    auto s = open_rocksdb_store(dir / "db", 16);
    s->put("kept", "value");
    s->put("gone", "x");
    s->erase("gone");
  }
  auto s = open_rocksdb_store(dir / "db", 16);
  EXPECT_EQ(s->get("kept"), "value");
  EXPECT_FALSE(s->get("gone").has_value());
}

TEST(RocksDbStore, CreatesMissingParents) {
  TempDir dir;
  auto s = open_rocksdb_store(dir / "a/b/c", 16);
  s->put("k", "v");
  EXPECT_EQ(s->get("k"), "v");
}

TEST(RocksDbStore, SecondOpenOfSameDirFailsWithMessage) {
  TempDir dir;
  auto first = open_rocksdb_store(dir / "db", 16);
  try {
    open_rocksdb_store(dir / "db", 16);
    FAIL() << "a second open of a locked database succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir / "db"), std::string::npos) << e.what();
  }
}

TEST(RocksDbStore, OpenOnAFileFails) {
  TempDir dir;
  std::ofstream(dir / "file") << "x";
  EXPECT_THROW(open_rocksdb_store(dir / "file", 16), std::runtime_error);
}
