// KvStore column families, batches, range erases, scans and usage, on both
// engines; RocksDB: families and data across reopening, and the memory-only tier.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cache/kv_store.h"
#include "temp_dir.h"

using namespace nfsgw::cache;
using nfsgw::cache::testing::TempDir;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs scan_all(KvStore& s, KvStore::Family f, std::string_view begin = {}, std::string_view end = {}) {
  Pairs out;
  s.scan(f, begin, end, [&](std::string_view k, std::string_view v) {
    out.emplace_back(std::string(k), std::string(v));
    return true;
  });
  return out;
}

std::string get_or(KvStore& s, KvStore::Family f, std::string_view k, std::string none = "<none>") {
  std::string v;
  return s.get(f, k, v, KvStore::Tier::Any) == KvStore::Found::Yes ? v : none;
}

enum class Engine { Memory, RocksDb };

class KvFamilies : public ::testing::TestWithParam<Engine> {
 protected:
  std::unique_ptr<KvStore> open(const std::vector<std::string>& families) {
    if (GetParam() == Engine::Memory) return make_memory_store(families);
    return open_rocksdb_store(dir_ / "db", 8, families);
  }
  TempDir dir_;
};

}  // namespace

TEST_P(KvFamilies, FamiliesAreNumberedInOrderAndSeparate) {
  auto s = open({"a", "b"});
  EXPECT_EQ(s->family("a"), 1u);
  EXPECT_EQ(s->family("b"), 2u);
  EXPECT_THROW(s->family("c"), std::out_of_range);

  KvStore::Batch b;
  b.put(KvStore::kDefault, "k", "default");
  b.put(s->family("a"), "k", "in a");
  b.put(s->family("b"), "k", "in b");
  s->write(b, KvStore::Durability::Unsynced);
  EXPECT_EQ(s->get("k"), "default");
  EXPECT_EQ(get_or(*s, 1, "k"), "in a");
  EXPECT_EQ(get_or(*s, 2, "k"), "in b");

  s->erase("k");  // the default family only
  EXPECT_FALSE(s->get("k").has_value());
  EXPECT_EQ(get_or(*s, 1, "k"), "in a");
  EXPECT_THROW(get_or(*s, 7, "k"), std::out_of_range);
}

TEST_P(KvFamilies, BatchAppliesInOrder) {
  auto s = open({"a"});
  const auto a = s->family("a");
  KvStore::Batch b;
  b.put(a, "x", "1");
  b.put(a, "y", "2");
  b.erase(a, "x");
  b.put(a, "y", "3");
  b.put(a, "z", "4");
  s->write(b, KvStore::Durability::Synced);
  EXPECT_EQ(scan_all(*s, a), (Pairs{{"y", "3"}, {"z", "4"}}));
  KvStore::Batch empty;
  EXPECT_TRUE(empty.empty());
  s->write(empty, KvStore::Durability::Unsynced);
  EXPECT_EQ(scan_all(*s, a).size(), 2u);
}

TEST_P(KvFamilies, EraseRangeIsHalfOpenAndPerFamily) {
  auto s = open({"a", "b"});
  const auto a = s->family("a"), bf = s->family("b");
  KvStore::Batch b;
  for (std::string k : {"p", "p\x01", "pa", "pz", "q", "q0", "r"}) {
    b.put(a, k, "v" + k);
    b.put(bf, k, "w" + k);
  }
  s->write(b, KvStore::Durability::Unsynced);

  KvStore::Batch e;
  e.erase_range(a, "pa", "q0");  // pa, pz, q; keeps q0
  s->write(e, KvStore::Durability::Unsynced);
  Pairs left;
  for (auto& [k, v] : scan_all(*s, a)) left.emplace_back(k, "");
  EXPECT_EQ(left, (Pairs{{"p", ""}, {"p\x01", ""}, {"q0", ""}, {"r", ""}}));
  EXPECT_EQ(scan_all(*s, bf).size(), 7u);  // the other family is untouched

  KvStore::Batch to_end, backwards;
  backwards.erase_range(a, "r", "p");  // empty range: nothing
  s->write(backwards, KvStore::Durability::Unsynced);
  EXPECT_EQ(scan_all(*s, a).size(), 4u);
  to_end.erase_range(a, "q", "");  // empty end: to the end
  s->write(to_end, KvStore::Durability::Unsynced);
  EXPECT_EQ(scan_all(*s, a), (Pairs{{"p", "vp"}, {"p\x01", "vp\x01"}}));
}

TEST_P(KvFamilies, ScanBoundsAndEarlyStop) {
  auto s = open({"a"});
  const auto a = s->family("a");
  KvStore::Batch b;
  for (char c = 'a'; c <= 'j'; ++c) b.put(a, std::string(1, c), std::string(2, c));
  b.put(a, std::string("\xff\x01", 2), "high");
  s->write(b, KvStore::Durability::Unsynced);

  EXPECT_EQ(scan_all(*s, a, "c", "f").size(), 3u);
  EXPECT_EQ(scan_all(*s, a, "c", "f").front(), (std::pair<std::string, std::string>{"c", "cc"}));
  EXPECT_EQ(scan_all(*s, a).size(), 11u);
  EXPECT_EQ(scan_all(*s, a).back().second, "high");  // bytes compare unsigned
  EXPECT_TRUE(scan_all(*s, a, "k", "m").empty());

  int seen = 0;
  s->scan(a, {}, {}, [&](std::string_view, std::string_view) { return ++seen < 4; });
  EXPECT_EQ(seen, 4);
}

TEST_P(KvFamilies, ScanVisitorMayWrite) {
  auto s = open({"a"});
  const auto a = s->family("a");
  KvStore::Batch b;
  for (int i = 0; i < 600; ++i) b.put(a, "k" + std::to_string(1000 + i), "v");
  s->write(b, KvStore::Durability::Unsynced);
  int visited = 0;
  s->scan(a, {}, {}, [&](std::string_view k, std::string_view) {
    ++visited;
    KvStore::Batch e;
    e.erase(a, k);
    s->write(e, KvStore::Durability::Unsynced);
    return true;
  });
  EXPECT_EQ(visited, 600);
  EXPECT_TRUE(scan_all(*s, a).empty());
}

TEST_P(KvFamilies, UsageGrowsWithDataPerFamily) {
  auto s = open({"a", "b"});
  const auto a = s->family("a"), bf = s->family("b");
  const auto a0 = s->usage(a), b0 = s->usage(bf);
  EXPECT_EQ(a0.keys, 0u);
  KvStore::Batch b;
  for (int i = 0; i < 1000; ++i) b.put(a, "key" + std::to_string(i), std::string(100, 'x'));
  s->write(b, KvStore::Durability::Unsynced);
  const auto a1 = s->usage(a), b1 = s->usage(bf);
  EXPECT_GE(a1.keys, 900u);
  EXPECT_LE(a1.keys, 1100u);
  EXPECT_GE(a1.bytes, a0.bytes + 50'000);
  EXPECT_EQ(b1.keys, b0.keys);
}

INSTANTIATE_TEST_SUITE_P(Engines, KvFamilies, ::testing::Values(Engine::Memory, Engine::RocksDb),
                         [](const auto& info) { return info.param == Engine::Memory ? "Memory" : "RocksDb"; });

TEST(MemoryStoreFamilies, MemoryOnlyTierAnswersLikeAny) {
  auto s = make_memory_store({"a"});
  KvStore::Batch b;
  b.put(1, "k", "v");
  s->write(b, KvStore::Durability::Unsynced);
  std::string v;
  EXPECT_EQ(s->get(1, "k", v, KvStore::Tier::MemoryOnly), KvStore::Found::Yes);
  EXPECT_EQ(s->get(1, "nope", v, KvStore::Tier::MemoryOnly), KvStore::Found::No);
}

TEST(MemoryStoreFamilies, RefusesDuplicateNames) {
  EXPECT_THROW(make_memory_store({"a", "a"}), std::invalid_argument);
}

TEST(RocksDbFamilies, ReopenKeepsFamiliesAndData) {
  TempDir dir;
  {
    auto s = open_rocksdb_store(dir / "db", 8, {"a", "b"});
    KvStore::Batch b;
    b.put(s->family("a"), "ka", "va");
    b.put(s->family("b"), "kb", "vb");
    s->write(b, KvStore::Durability::Unsynced);
    s->put("handle", "synced");
  }
  {
    // A superset: the new family is created, the old ones keep their data.
    auto s = open_rocksdb_store(dir / "db", 8, {"a", "b", "c"});
    EXPECT_EQ(get_or(*s, s->family("a"), "ka"), "va");
    EXPECT_EQ(get_or(*s, s->family("b"), "kb"), "vb");
    EXPECT_EQ(get_or(*s, s->family("c"), "ka"), "<none>");
    KvStore::Batch b;
    b.put(s->family("c"), "kc", "vc");
    s->write(b, KvStore::Durability::Unsynced);
    EXPECT_EQ(s->get("handle"), "synced");
  }
  {
    // A subset, in another order: families are found by name, not by position.
    auto s = open_rocksdb_store(dir / "db", 8, {"c", "a"});
    EXPECT_EQ(s->family("c"), 1u);
    EXPECT_EQ(get_or(*s, 1, "kc"), "vc");
    EXPECT_EQ(get_or(*s, 2, "ka"), "va");
    EXPECT_THROW(s->family("b"), std::out_of_range);
  }
  auto s = open_rocksdb_store(dir / "db", 8, {"b"});
  EXPECT_EQ(get_or(*s, s->family("b"), "kb"), "vb");  // "b" survived an open without it
  EXPECT_EQ(s->get("handle"), "synced");
}

TEST(RocksDbFamilies, RefusesBadFamilyNames) {
  TempDir dir;
  EXPECT_THROW(open_rocksdb_store(dir / "db", 8, {"default"}), std::runtime_error);
  EXPECT_THROW(open_rocksdb_store(dir / "db", 8, {"a", "a"}), std::runtime_error);
}

TEST(RocksDbFamilies, MemoryOnlyTierSaysNotInMemoryForAColdValue) {
  TempDir dir;
  {
    auto s = open_rocksdb_store(dir / "db", 8, {"a"});
    KvStore::Batch b;
    for (int i = 0; i < 100; ++i) b.put(1, "key" + std::to_string(i), std::string(200, 'v'));
    s->write(b, KvStore::Durability::Unsynced);
    std::string v;
    // Positive control: fresh in the memtable, the memory tier has it.
    EXPECT_EQ(s->get(1, "key7", v, KvStore::Tier::MemoryOnly), KvStore::Found::Yes);
  }
  // Reopened: the WAL is replayed into a table file, the block cache is cold.
  auto s = open_rocksdb_store(dir / "db", 8, {"a"});
  std::string v;
  EXPECT_EQ(s->get(1, "key7", v, KvStore::Tier::MemoryOnly), KvStore::Found::NotInMemory);
  EXPECT_EQ(s->get(1, "key7", v, KvStore::Tier::Any), KvStore::Found::Yes);
  EXPECT_EQ(v, std::string(200, 'v'));
  // Now its block is cached.
  EXPECT_EQ(s->get(1, "key7", v, KvStore::Tier::MemoryOnly), KvStore::Found::Yes);
}
