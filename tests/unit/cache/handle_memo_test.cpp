// The handle codec's per-thread memo (handle_memo.h): it answers exactly what the
// codec would, and only for the same codec, export and bytes.
#include <gtest/gtest.h>

#include <thread>

#include "cache/handle_codec.h"
#include "cache/handle_memo.h"
#include "controlled_store.h"
#include "handle_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::ControlledStore;
using nfsgw::cache::testing::origin;
using nfsgw::cache::testing::secret;

TEST(HandleMemo, ADigestHandleReadsTheMapOnlyTheFirstTime) {
  ControlledStore store(make_memory_store());
  HandleCodec codec(secret(1), store);
  const auto long_origin = origin(60, 3);  // too long to embed, no root given: a digest
  const auto root = origin(60, 200);     // shares no byte with it: no delta
  const auto fh = codec.wrap(1, long_origin, &root);

  // Wrap again: the memo answers, the map is not read.
  const int before_wrap = store.disk_gets + store.memory_gets;
  EXPECT_EQ(codec.wrap(1, long_origin, &root), fh);
  EXPECT_EQ(store.disk_gets + store.memory_gets, before_wrap);

  // In another thread (an empty memo), unwrap reads the map: the positive control.
  std::thread([&] {
    const int before = store.disk_gets + store.memory_gets;
    auto d = codec.unwrap(fh);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->origin, long_origin);
    EXPECT_GT(store.disk_gets + store.memory_gets, before) << "the first unwrap must read the map";
    const int after_first = store.disk_gets + store.memory_gets;
    d = codec.unwrap(fh);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->origin, long_origin);
    EXPECT_EQ(d->kind, HandleCodec::Kind::Digest);
    EXPECT_EQ(d->export_id, 1u);
    EXPECT_EQ(store.disk_gets + store.memory_gets, after_first) << "the second unwrap comes from the memo";
  }).join();
}

TEST(HandleMemo, AHandleVerifiedByOneCodecIsNotTrustedByAnother) {
  auto store_a = make_memory_store();
  auto store_b = make_memory_store();
  HandleCodec a(secret(1), *store_a);
  HandleCodec b(secret(2), *store_b);
  const auto fh = a.wrap(7, origin(28, 1));
  ASSERT_TRUE(a.unwrap(fh));  // now in this thread's memo, for codec a
  EXPECT_FALSE(b.unwrap(fh)) << "another secret must refuse it, memo or not";
  EXPECT_TRUE(a.unwrap(fh));
}

TEST(HandleMemo, TheSameOriginBytesUnderTwoExportsStayApart) {
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  const auto o = origin(28, 5);
  const auto in_1 = codec.wrap(1, o);
  const auto in_2 = codec.wrap(2, o);
  EXPECT_NE(in_1, in_2);
  EXPECT_EQ(codec.wrap(1, o), in_1);
  EXPECT_EQ(codec.wrap(2, o), in_2);
  EXPECT_EQ(codec.unwrap(in_1)->export_id, 1u);
  EXPECT_EQ(codec.unwrap(in_2)->export_id, 2u);
}

TEST(HandleMemo, AnAlteredHandleThatHashesAlikeIsRefused) {
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  const auto good = codec.wrap(1, origin(28, 2));
  ASSERT_TRUE(codec.unwrap(good));
  // Same MAC (the memo's hash), other payload: same memo set, different bytes.
  auto bad = good;
  bad.bytes[10] ^= 0x40;
  EXPECT_FALSE(codec.unwrap(bad));
  // Truncated by one byte of the payload, MAC kept: refused too.
  auto shorter = good;
  std::copy(good.bytes.begin() + 11, good.bytes.begin() + good.len, shorter.bytes.begin() + 10);
  shorter.len = static_cast<std::uint8_t>(good.len - 1);
  EXPECT_FALSE(codec.unwrap(shorter));
}

TEST(HandleMemo, MoreHandlesThanTheMemoHoldsAllRoundTrip) {
  auto store = make_memory_store();
  HandleCodec codec(secret(1), *store);
  std::vector<std::pair<nfs3::FileHandle, nfs3::FileHandle>> pairs;
  for (std::uint32_t i = 0; i < 12000; ++i) {
    std::vector<std::uint8_t> b(24);
    for (std::size_t k = 0; k < b.size(); ++k) b[k] = static_cast<std::uint8_t>((i >> (8 * (k % 4))) + k);
    const nfs3::FileHandle o(b);
    pairs.emplace_back(o, codec.wrap(1, o));
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [o, fh] : pairs) {
      ASSERT_EQ(codec.wrap(1, o), fh);
      auto d = codec.unwrap(fh);
      ASSERT_TRUE(d);
      ASSERT_EQ(d->origin, o);
    }
  }
}

TEST(HandleMemo, KeepsAWorkingSetOfTwoThousandHandles) {
  // A folder of 2,000 files walked again and again (the loopback benchmark's tree):
  // after the first pass every handle is in the memo, so a second pass costs no map
  // read (and no HMAC), but for the few sets that drew more than four of them
  // (about 60 handles here; a pass in the same order evicts each before it comes
  // back). With two ways a set (the memo before) it was about 500.
  ControlledStore store(make_memory_store());
  HandleCodec codec(secret(2), store);
  const auto root = origin(60, 200);
  std::vector<nfs3::FileHandle> handles;
  for (std::uint32_t i = 0; i < 2000; ++i) {
    auto o = origin(60, 3);  // too long to embed and unlike the root: a digest handle
    o.bytes[0] = static_cast<std::uint8_t>(i);
    o.bytes[1] = static_cast<std::uint8_t>(i >> 8);
    o.bytes[2] = 0xEE;  // never equal to the root's bytes: no delta either
    handles.push_back(codec.wrap(1, o, &root));
  }
  std::thread([&] {  // a thread of its own: an empty memo
    auto reads = [&] { return store.disk_gets.load() + store.memory_gets.load(); };
    const int before = reads();
    for (const auto& fh : handles) ASSERT_TRUE(codec.unwrap(fh));
    const int first_pass = reads() - before;
    EXPECT_GE(first_pass, 2000) << "the first pass must read the map for every handle (positive control)";
    const int after_first = reads();
    for (const auto& fh : handles) ASSERT_TRUE(codec.unwrap(fh));
    EXPECT_LE(reads() - after_first, 100) << "more than 5 % of a 2,000-handle working set fell out of the memo";
  }).join();
}

TEST(HandleMemo, KeepingAKeyAgainReplacesItsOwnSlot) {
  // Five keys in one set of four ways: the fifth takes the first way, the cursor
  // moves to the second. Keeping the fifth again must overwrite its own slot; it
  // used to take the next way in turn, evicting a live key and leaving two copies
  // (find answered with the outdated one).
  constexpr auto kWrap = HandleMemo::Direction::Wrap;
  const std::uint64_t codec = new_table_owner();
  const std::size_t hash = 0x0123456789abcdefull;
  for (std::uint8_t i = 0; i < 5; ++i)
    HandleMemo::keep(kWrap, codec, hash, HandleMemo::Slot{1, 0, origin(28, i), origin(28, 100 + i)});
  HandleMemo::keep(kWrap, codec, hash, HandleMemo::Slot{1, 0, origin(28, 4), origin(28, 200)});
  const auto* again = HandleMemo::find(kWrap, codec, hash, 1, origin(28, 4));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->value, origin(28, 200));
  for (std::uint8_t i = 1; i < 4; ++i)
    EXPECT_NE(HandleMemo::find(kWrap, codec, hash, 1, origin(28, i)), nullptr) << "key " << int{i};
}
