// Several nodes: codecs that share the secret but not the store (each node its own
// cache directory) issue the same handles, and resolve each other's Root, Embedded
// and Delta handles without having seen them. Digest handles agree byte for byte but
// resolve only where they were wrapped once; legacy Mapped handles (a per-node
// counter, before Delta and Digest) still resolve where they were issued.
#include <gtest/gtest.h>

#include <string>

#include "cache/handle_codec.h"
#include "cache/keyed_hmac.h"
#include "handle_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::origin;
using nfsgw::cache::testing::secret;

namespace {

constexpr std::uint32_t kExport = 0x5eed;

/// An export's origin root handle of 60 bytes, like a long Linux or ganesha handle:
/// a fixed layout and file-system id, then the object's id.
nfs3::FileHandle long_root() { return origin(60, 40); }

/// A file of the same file system: the root's bytes with the last `differ` changed.
nfs3::FileHandle child(std::uint8_t n, std::size_t len = 60, std::size_t differ = 12) {
  auto h = long_root();
  h.len = static_cast<std::uint8_t>(len);
  for (std::size_t i = len - differ; i < len; ++i) h.bytes[i] = static_cast<std::uint8_t>(n * 3 + i);
  return h;
}

struct Node {
  std::unique_ptr<KvStore> store = make_memory_store();
  HandleCodec codec;
  explicit Node(std::uint8_t seed = 1) : codec(secret(seed), *store) {}
};

}  // namespace

TEST(HandleNodes, DeltaHandlesAgreeAndResolveOnANodeThatNeverSawThem) {
  const auto root = long_root();
  Node a, b, fresh;
  std::vector<nfs3::FileHandle> from_a, from_b(20);
  // Different orders: a per-node counter would give the two nodes different handles.
  for (std::uint8_t n = 0; n < 20; ++n) from_a.push_back(a.codec.wrap(kExport, child(n), &root));
  for (int n = 19; n >= 0; --n) from_b[n] = b.codec.wrap(kExport, child(static_cast<std::uint8_t>(n)), &root);
  for (std::uint8_t n = 0; n < 20; ++n) {
    ASSERT_EQ(from_a[n], from_b[n]) << int(n);
    auto d = fresh.codec.unwrap(from_a[n]);
    ASSERT_TRUE(d) << int(n);
    EXPECT_EQ(d->kind, HandleCodec::Kind::Delta);
    EXPECT_EQ(d->export_id, kExport);
    EXPECT_TRUE(d->origin.empty());
    auto o = HandleCodec::resolve_delta(d->delta, root);
    ASSERT_TRUE(o);
    EXPECT_EQ(*o, child(n));
  }
  int records = 0;
  fresh.store->scan(KvStore::kDefault, "", "", [&](std::string_view, std::string_view) { return ++records, true; });
  EXPECT_EQ(records, 0) << "resolving a delta writes nothing";
}

TEST(HandleNodes, DeltaRoundTripEveryLongSize) {
  const auto root = long_root();
  Node node;
  for (std::size_t len = 43; len <= 64; ++len) {
    for (std::size_t differ : {std::size_t{1}, std::size_t{8}, len - 40 > 20 ? std::size_t{20} : len - 40}) {
      const auto o = child(3, len, differ);
      const auto h = node.codec.wrap(kExport, o, &root);
      auto d = node.codec.unwrap(h);
      ASSERT_TRUE(d) << len << "/" << differ;
      ASSERT_EQ(d->kind, HandleCodec::Kind::Delta) << len << "/" << differ;
      EXPECT_EQ(HandleCodec::resolve_delta(d->delta, root), o) << len << "/" << differ;
    }
  }
}

TEST(HandleNodes, ADeltaAgainstAnotherRootIsRefused) {
  const auto root = long_root();
  Node node;
  const auto h = node.codec.wrap(kExport, child(1), &root);
  auto d = node.codec.unwrap(h);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->kind, HandleCodec::Kind::Delta);
  auto other_root = root;
  other_root.bytes[3] ^= 0x40;  // a byte the child shares with the root
  EXPECT_FALSE(HandleCodec::resolve_delta(d->delta, other_root));
  auto short_root = root;
  short_root.len = 10;
  EXPECT_FALSE(HandleCodec::resolve_delta(d->delta, short_root));
}

TEST(HandleNodes, TooDifferentFromTheRootGetsADigestThatAgreesAcrossNodes) {
  const auto root = long_root();
  Node a, b, fresh;
  // 64 bytes unlike the root's: the delta would need 1 + 8 + 64 bytes.
  const auto far1 = origin(64, 1), far2 = origin(64, 2);
  const auto a1 = a.codec.wrap(kExport, far1, &root);
  const auto a2 = a.codec.wrap(kExport, far2, &root);
  const auto b2 = b.codec.wrap(kExport, far2, &root);
  const auto b1 = b.codec.wrap(kExport, far1, &root);
  EXPECT_EQ(a1, b1);
  EXPECT_EQ(a2, b2);
  EXPECT_NE(a1, a2);
  ASSERT_TRUE(a.codec.unwrap(a1));
  EXPECT_EQ(a.codec.unwrap(a1)->kind, HandleCodec::Kind::Digest);
  EXPECT_EQ(b.codec.unwrap(a1)->origin, far1);
  // The known limit: a node that never wrapped it cannot resolve a digest...
  EXPECT_FALSE(fresh.codec.unwrap(a1));
  // ... until it has (a LOOKUP or READDIRPLUS through it, or `nfsgw warm`).
  EXPECT_EQ(fresh.codec.wrap(kExport, far1, &root), a1);
  EXPECT_EQ(fresh.codec.unwrap(a1)->origin, far1);
}

TEST(HandleNodes, ADamagedDigestRecordIsRefused) {
  Node node;
  const auto o = origin(50, 1);
  const auto h = node.codec.wrap(kExport, o);
  // Damage every d2o record: the record no longer matches its digest.
  std::vector<std::string> keys;
  node.store->scan(KvStore::kDefault, "fh/d2o/", "fh/d2o0", [&](std::string_view k, std::string_view) {
    keys.emplace_back(k);
    return true;
  });
  ASSERT_EQ(keys.size(), 1u);
  std::string bad = *node.store->get(keys[0]);
  bad.back() ^= 1;
  node.store->put(keys[0], bad);
  // A new codec: the memo has not seen the handle, so the record is read.
  HandleCodec again(secret(1), *node.store);
  EXPECT_FALSE(again.unwrap(h));
}

TEST(HandleNodes, EmbeddedAndRootHandlesAgreeWithoutAStore) {
  Node a, b;
  EXPECT_EQ(a.codec.root(kExport), b.codec.root(kExport));
  EXPECT_EQ(a.codec.wrap(kExport, origin(30)), b.codec.wrap(kExport, origin(30)));
  EXPECT_EQ(b.codec.unwrap(a.codec.wrap(kExport, origin(42, 7)))->origin, origin(42, 7));
}

TEST(HandleNodes, AnotherSecretRefusesDeltaAndDigestHandles) {
  const auto root = long_root();
  Node a(1), other(2);
  EXPECT_FALSE(other.codec.unwrap(a.codec.wrap(kExport, child(1), &root)));
  const auto far = origin(64, 9);
  const auto digest = a.codec.wrap(kExport, far, &root);
  other.codec.wrap(kExport, far, &root);  // even with the origin handle mapped there
  EXPECT_FALSE(other.codec.unwrap(digest));
}

TEST(HandleNodes, EveryBitFlipOfDeltaAndDigestHandlesIsRefused) {
  const auto root = long_root();
  Node node;
  for (const auto& good : {node.codec.wrap(kExport, child(2), &root), node.codec.wrap(kExport, origin(64, 3), &root)}) {
    for (std::size_t byte = 0; byte < good.len; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        auto bad = good;
        bad.bytes[byte] ^= static_cast<std::uint8_t>(1u << bit);
        EXPECT_FALSE(node.codec.unwrap(bad)) << byte << "/" << bit;
      }
    }
  }
}

// The layout nfsgw wrote before Delta and Digest (kind 3, an 8-byte id from a
// per-node counter, "fh/i2o/<id>" -> <export id><origin>), built here by hand as an
// existing cache holds it: such handles keep resolving after the upgrade.
TEST(HandleNodes, LegacyMappedHandlesStillResolve) {
  Node node;
  const auto o = origin(60, 5);
  const std::uint64_t id = 7;
  std::string key = "fh/i2o/", record;
  for (int s = 56; s >= 0; s -= 8) key.push_back(static_cast<char>((id >> s) & 0xff));
  for (int s = 24; s >= 0; s -= 8) record.push_back(static_cast<char>((kExport >> s) & 0xff));
  record.append(reinterpret_cast<const char*>(o.bytes.data()), o.len);
  node.store->put(key, record);

  std::vector<std::uint8_t> h = {1, 0, 0, 0x5e, 0xed, 3};
  for (int s = 56; s >= 0; s -= 8) h.push_back(static_cast<std::uint8_t>((id >> s) & 0xff));
  const auto s = secret(1);
  constexpr char kLabel[] = "nfsgw file handle mac v1";
  const auto key_bytes = hmac_sha256(s, kLabel, sizeof kLabel - 1);
  const auto mac = hmac_sha256(key_bytes, h.data(), h.size());
  h.insert(h.end(), mac.begin(), mac.begin() + 16);
  const nfs3::FileHandle legacy{std::span<const std::uint8_t>(h)};

  auto d = node.codec.unwrap(legacy);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->kind, HandleCodec::Kind::Mapped);
  EXPECT_EQ(d->export_id, kExport);
  EXPECT_EQ(d->origin, o);
  // New wraps of the same origin handle give the deterministic form, not the id.
  EXPECT_NE(node.codec.wrap(kExport, o), legacy);
  // Without its record (another node), the legacy handle is refused.
  Node other;
  EXPECT_FALSE(other.codec.unwrap(legacy));
}
