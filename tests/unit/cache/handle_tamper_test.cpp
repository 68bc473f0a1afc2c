// Forged, altered, truncated, extended and foreign handles are all refused.
#include <gtest/gtest.h>

#include <random>

#include "cache/handle_codec.h"
#include "handle_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::origin;
using nfsgw::cache::testing::secret;

namespace {

class HandleTamper : public ::testing::Test {
 protected:
  std::unique_ptr<KvStore> store = make_memory_store();
  HandleCodec codec{secret(1), *store};

  std::vector<nfs3::FileHandle> samples() {
    // Two mapped handles, so a flip in the id can land on another valid id.
    codec.wrap(1, origin(60, 9));
    return {codec.root(1), codec.wrap(1, origin(1)), codec.wrap(1, origin(16)), codec.wrap(1, origin(42)),
            codec.wrap(1, origin(64)), codec.wrap(0xffffffff, origin(43))};
  }
};

}  // namespace

TEST_F(HandleTamper, EveryBitFlipIsRefused) {
  for (const auto& good : samples()) {
    ASSERT_TRUE(codec.unwrap(good));
    for (std::size_t byte = 0; byte < good.len; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        auto bad = good;
        bad.bytes[byte] ^= static_cast<std::uint8_t>(1u << bit);
        EXPECT_FALSE(codec.unwrap(bad)) << "len " << int(good.len) << " byte " << byte << " bit " << bit;
      }
    }
  }
}

TEST_F(HandleTamper, TruncatedIsRefused) {
  for (const auto& good : samples()) {
    for (std::size_t len = 0; len < good.len; ++len) {
      auto bad = good;
      bad.len = static_cast<std::uint8_t>(len);
      EXPECT_FALSE(codec.unwrap(bad)) << "len " << int(good.len) << " cut to " << len;
    }
  }
}

TEST_F(HandleTamper, ExtendedIsRefused) {
  for (const auto& good : samples()) {
    for (std::size_t len = good.len + 1; len <= nfs3::kFhSize; ++len) {
      for (std::uint8_t fill : {0x00, 0xff}) {
        auto bad = good;
        std::fill(bad.bytes.begin() + good.len, bad.bytes.end(), fill);
        bad.len = static_cast<std::uint8_t>(len);
        EXPECT_FALSE(codec.unwrap(bad)) << "len " << int(good.len) << " grown to " << len;
      }
    }
  }
}

TEST_F(HandleTamper, WrongVersionIsRefused) {
  for (const auto& good : samples()) {
    for (int v : {0, 2, 255}) {
      auto bad = good;
      bad.bytes[0] = static_cast<std::uint8_t>(v);
      EXPECT_FALSE(codec.unwrap(bad));
    }
  }
}

TEST_F(HandleTamper, ExportIdSwapIsRefused) {
  // A handle for export 1 relabelled as export 2 (a client probing other exports).
  auto good = codec.wrap(1, origin(10));
  auto bad = good;
  bad.bytes[4] = 2;
  EXPECT_FALSE(codec.unwrap(bad));
}

TEST_F(HandleTamper, KindSwapIsRefused) {
  auto embedded = codec.wrap(1, origin(8));  // 30 bytes, the size of a legacy mapped handle
  auto bad = embedded;
  bad.bytes[5] = static_cast<std::uint8_t>(HandleCodec::Kind::Mapped);
  EXPECT_FALSE(codec.unwrap(bad));
  auto sixteen = codec.wrap(1, origin(16));  // 38 bytes, the size of a digest handle
  bad = sixteen;
  bad.bytes[5] = static_cast<std::uint8_t>(HandleCodec::Kind::Digest);
  EXPECT_FALSE(codec.unwrap(bad));
  bad.bytes[5] = static_cast<std::uint8_t>(HandleCodec::Kind::Delta);
  EXPECT_FALSE(codec.unwrap(bad));
  auto root = codec.root(1);
  root.bytes[5] = static_cast<std::uint8_t>(HandleCodec::Kind::Embedded);
  EXPECT_FALSE(codec.unwrap(root));
}

TEST_F(HandleTamper, RandomForgeriesAreRefused) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 5000; ++i) {
    nfs3::FileHandle h;
    h.len = static_cast<std::uint8_t>(rng() % (nfs3::kFhSize + 1));
    for (auto& b : h.bytes) b = static_cast<std::uint8_t>(rng());
    if (h.len > 0) h.bytes[0] = 1;                  // right version
    if (h.len > 5) h.bytes[5] = 1 + rng() % 3;      // a valid kind
    EXPECT_FALSE(codec.unwrap(h)) << i;
  }
  EXPECT_FALSE(codec.unwrap(nfs3::FileHandle{}));
}

TEST_F(HandleTamper, OutOfRangeLengthIsRefusedWithoutOverread) {
  // FileHandle's own invariant is len <= 64; a corrupted value must not make the
  // codec read past the array.
  auto h = codec.root(1);
  h.len = 200;
  EXPECT_FALSE(codec.unwrap(h));
}
