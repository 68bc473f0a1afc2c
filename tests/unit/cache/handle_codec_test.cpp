// HandleCodec round trips: root, embedded and digest handles; stability; limits;
// concurrent wraps of long handles. Delta handles and agreement between nodes:
// handle_nodes_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <latch>
#include <set>
#include <thread>
#include <vector>

#include "cache/handle_codec.h"
#include "handle_helpers.h"
#include "tests/support/waiting.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::origin;
using nfsgw::cache::testing::secret;

TEST(HandleCodec, RootRoundTrip) {
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  for (std::uint32_t id : {0u, 1u, 1240880126u, 0xffffffffu}) {
    auto h = codec.root(id);
    EXPECT_EQ(h.len, 22);
    auto d = codec.unwrap(h);
    ASSERT_TRUE(d) << id;
    EXPECT_EQ(d->export_id, id);
    EXPECT_EQ(d->kind, HandleCodec::Kind::Root);
    EXPECT_TRUE(d->origin.empty());
  }
  EXPECT_NE(codec.root(1), codec.root(2));
}

TEST(HandleCodec, EmbeddedRoundTripEverySize) {
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  for (std::size_t len = 1; len <= 42; ++len) {
    auto o = origin(len);
    auto h = codec.wrap(7, o);
    EXPECT_EQ(h.len, 22 + len);
    auto d = codec.unwrap(h);
    ASSERT_TRUE(d) << len;
    EXPECT_EQ(d->kind, HandleCodec::Kind::Embedded);
    EXPECT_EQ(d->export_id, 7u);
    EXPECT_EQ(d->origin, o);
  }
}

TEST(HandleCodec, DigestRoundTripEverySize) {
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  for (std::size_t len = 43; len <= 64; ++len) {
    auto o = origin(len);
    auto h = codec.wrap(7, o);  // no root given: the Digest form
    EXPECT_EQ(h.len, 38);
    auto d = codec.unwrap(h);
    ASSERT_TRUE(d) << len;
    EXPECT_EQ(d->kind, HandleCodec::Kind::Digest);
    EXPECT_EQ(d->export_id, 7u);
    EXPECT_EQ(d->origin, o);
  }
}

TEST(HandleCodec, SameOriginSameHandle) {
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  EXPECT_EQ(codec.wrap(3, origin(20)), codec.wrap(3, origin(20)));
  EXPECT_EQ(codec.wrap(3, origin(64)), codec.wrap(3, origin(64)));
  EXPECT_NE(codec.wrap(3, origin(64, 1)), codec.wrap(3, origin(64, 2)));
  // Same origin bytes under two exports: distinct handles, each unwraps to its export.
  auto a = codec.wrap(3, origin(64)), b = codec.wrap(4, origin(64));
  EXPECT_NE(a, b);
  EXPECT_EQ(codec.unwrap(a)->export_id, 3u);
  EXPECT_EQ(codec.unwrap(b)->export_id, 4u);
}

TEST(HandleCodec, TwoCodecsSharingSecretAndStoreAgree) {
  auto store = make_memory_store();
  HandleCodec one(secret(5), *store), two(secret(5), *store);
  EXPECT_EQ(one.root(9), two.root(9));
  EXPECT_EQ(one.wrap(9, origin(30)), two.wrap(9, origin(30)));
  auto mapped = one.wrap(9, origin(60));
  EXPECT_EQ(two.wrap(9, origin(60)), mapped);
  ASSERT_TRUE(two.unwrap(mapped));
  EXPECT_EQ(two.unwrap(mapped)->origin, origin(60));
}

TEST(HandleCodec, DifferentSecretRefuses) {
  auto store = make_memory_store();
  HandleCodec one(secret(5), *store), other(secret(6), *store);
  EXPECT_FALSE(other.unwrap(one.root(1)));
  EXPECT_FALSE(other.unwrap(one.wrap(1, origin(10))));
  EXPECT_FALSE(other.unwrap(one.wrap(1, origin(50))));
}

TEST(HandleCodec, ShortSecretRejected) {
  auto store = make_memory_store();
  EXPECT_THROW(HandleCodec(std::vector<std::uint8_t>(31, 1), *store), std::invalid_argument);
  EXPECT_NO_THROW(HandleCodec(std::vector<std::uint8_t>(32, 1), *store));
}

TEST(HandleCodec, ExportIdIsNotJudgedByTheCodec) {
  // The codec binds the export id with the mac but does not know which exports
  // exist: a genuine handle of any id decodes, and the caller checks the id.
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  auto d = codec.unwrap(codec.wrap(0xdeadbeef, origin(12)));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->export_id, 0xdeadbeefu);
}

TEST(HandleCodec, DigestUnknownToStoreIsRefused) {
  auto store = make_memory_store(), empty = make_memory_store();
  HandleCodec issuer(secret(1), *store), other_node(secret(1), *empty);
  auto h = issuer.wrap(1, origin(50));
  ASSERT_TRUE(issuer.unwrap(h));
  EXPECT_FALSE(other_node.unwrap(h));
}

namespace {

/// A store whose reads pause briefly: it widens the window between "not mapped
/// yet" and "mapped" so that concurrent wraps of one handle overlap. The assertions do not depend on the pause; only the chance to catch a
/// missing lock does.
class SlowStore final : public KvStore {
 public:
  using KvStore::get;
  Family family(std::string_view name) const override { return inner_->family(name); }
  Found get(Family f, std::string_view key, std::string& value, Tier tier) override {
    test::pass_time(std::chrono::microseconds(200), "a slow store: the race window is the point");
    return inner_->get(f, key, value, tier);
  }
  void write(const Batch& batch, Durability durability) override { inner_->write(batch, durability); }
  void scan(Family f, std::string_view begin, std::string_view end,
            const std::function<bool(std::string_view, std::string_view)>& visit) override {
    inner_->scan(f, begin, end, visit);
  }
  FamilyUsage usage(Family f) override { return inner_->usage(f); }

 private:
  std::unique_ptr<KvStore> inner_ = make_memory_store();
};

}  // namespace

TEST(HandleCodec, ConcurrentWrapsOfOneLongHandleGiveOneHandle) {
  SlowStore store;
  HandleCodec codec(secret(1), store);
  constexpr int kThreads = 8, kRounds = 30;
  for (int round = 0; round < kRounds; ++round) {
    auto o = origin(64, static_cast<std::uint8_t>(round));
    std::vector<nfs3::FileHandle> got(kThreads);
    std::vector<std::thread> threads;
    std::latch start(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        got[t] = codec.wrap(1, o);
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(got[t], got[0]) << "round " << round;
    ASSERT_EQ(codec.unwrap(got[0])->origin, o);
  }
}

TEST(HandleCodec, ConcurrentWrapsOfDistinctHandlesGetDistinctHandles) {
  SlowStore store;
  HandleCodec codec(secret(1), store);
  constexpr int kThreads = 4, kEach = 40;
  std::vector<std::vector<nfs3::FileHandle>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto o = origin(50, static_cast<std::uint8_t>(t));
        o.bytes[0] = static_cast<std::uint8_t>(i);
        got[t].push_back(codec.wrap(2, o));
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::vector<std::uint8_t>> distinct;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; ++i) {
      auto v = got[t][i].view();
      distinct.emplace(v.begin(), v.end());
      auto d = codec.unwrap(got[t][i]);
      ASSERT_TRUE(d);
      EXPECT_EQ(d->origin.bytes[0], i);
      EXPECT_EQ(d->origin.bytes[1], origin(50, static_cast<std::uint8_t>(t)).bytes[1]);
    }
  }
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kThreads * kEach));
}
