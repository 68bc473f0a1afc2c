// Digest handles survive a restart: reopen the RocksDB store, load the secret
// file again, build a new codec, and old handles still resolve.
#include <gtest/gtest.h>

#include <set>

#include "cache/handle_codec.h"
#include "handle_helpers.h"
#include "temp_dir.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::origin;
using nfsgw::cache::testing::TempDir;

TEST(HandlePersistence, DigestHandlesSurviveRestart) {
  TempDir dir;
  std::vector<nfs3::FileHandle> issued;
  {
    auto store = open_rocksdb_store(dir / "db", 16);
    HandleCodec codec(load_or_create_secret(dir / "secret"), *store);
    for (std::uint8_t tag = 0; tag < 20; ++tag) issued.push_back(codec.wrap(5, origin(64, tag)));
    issued.push_back(codec.wrap(5, origin(10)));
    issued.push_back(codec.root(5));
  }
  auto store = open_rocksdb_store(dir / "db", 16);
  HandleCodec codec(load_or_create_secret(dir / "secret"), *store);
  for (std::uint8_t tag = 0; tag < 20; ++tag) {
    auto d = codec.unwrap(issued[tag]);
    ASSERT_TRUE(d) << int(tag);
    EXPECT_EQ(d->kind, HandleCodec::Kind::Digest);
    EXPECT_EQ(d->origin, origin(64, tag));
    // The same origin handle is given the same gateway handle after the restart.
    EXPECT_EQ(codec.wrap(5, origin(64, tag)), issued[tag]);
  }
  EXPECT_EQ(codec.unwrap(issued[20])->origin, origin(10));
  EXPECT_EQ(codec.unwrap(issued[21])->kind, HandleCodec::Kind::Root);

  // A new long handle gets a handle of its own.
  auto fresh = codec.wrap(5, origin(64, 200));
  std::set<std::vector<std::uint8_t>> all;
  for (const auto& h : issued) all.emplace(h.view().begin(), h.view().end());
  EXPECT_EQ(all.count({fresh.view().begin(), fresh.view().end()}), 0u);
  EXPECT_EQ(codec.unwrap(fresh)->origin, origin(64, 200));
  for (std::uint8_t tag = 0; tag < 20; ++tag) EXPECT_EQ(codec.unwrap(issued[tag])->origin, origin(64, tag));
}

TEST(HandlePersistence, NewSecretRefusesOldHandles) {
  TempDir dir;
  nfs3::FileHandle root, embedded, mapped;
  {
    auto store = open_rocksdb_store(dir / "db", 16);
    HandleCodec codec(load_or_create_secret(dir / "secret"), *store);
    root = codec.root(5);
    embedded = codec.wrap(5, origin(20));
    mapped = codec.wrap(5, origin(64));
  }
  auto store = open_rocksdb_store(dir / "db", 16);
  HandleCodec codec(load_or_create_secret(dir / "other-secret"), *store);
  EXPECT_FALSE(codec.unwrap(root));
  EXPECT_FALSE(codec.unwrap(embedded));
  EXPECT_FALSE(codec.unwrap(mapped));
}
