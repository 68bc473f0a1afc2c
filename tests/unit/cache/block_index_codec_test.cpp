// The block store's index encodings: round trips, and damaged values are absent.
#include <gtest/gtest.h>

#include "block_store_helpers.h"
#include "cache/block_index_codec.h"

namespace nfsgw::cache::codec {
namespace {

TEST(BlockIndexCodec, RecordsRoundTrip) {
  FileRecord f{testing::data_stamp(12345, 7), 42, 1'700'000'000'123, 3, 9000};
  EXPECT_EQ(decode_file(encode(f)), f);
  BlockRecord b{42, 4096, 0xdeadbeef};
  EXPECT_EQ(decode_block(encode(b)), b);
}

TEST(BlockIndexCodec, DamagedValuesAreAbsent) {
  const std::string f = encode(FileRecord{testing::data_stamp(1), 1, 2, 3, 4});
  const std::string b = encode(BlockRecord{1, 2, 3});
  ASSERT_TRUE(decode_file(f));  // positive controls
  ASSERT_TRUE(decode_block(b));
  EXPECT_FALSE(decode_file(f.substr(0, f.size() - 1)));
  EXPECT_FALSE(decode_file(f + "x"));
  EXPECT_FALSE(decode_file(b));
  EXPECT_FALSE(decode_block(f));
  EXPECT_FALSE(decode_block(""));
  std::string other_version = b;
  other_version[0] = 2;
  EXPECT_FALSE(decode_block(other_version));
}

TEST(BlockIndexCodec, KeysSortByFileThenIndexAndSplit) {
  const std::string a = file_key(testing::data_file(1, 1)), b = file_key(testing::data_file(1, 2));
  EXPECT_LT(block_key(a, 1), block_key(a, 256));
  EXPECT_LT(block_key(a, ~0ull), b);
  EXPECT_EQ(block_index_of(block_key(a, 0x0102030405060708ull)), 0x0102030405060708ull);
  EXPECT_LT(lru_key(5, b), lru_key(6, a));
  Millis t = 0;
  std::string k;
  ASSERT_TRUE(split_lru_key(lru_key(-1, a), t, k));
  EXPECT_EQ(t, -1);
  EXPECT_EQ(k, a);
  EXPECT_FALSE(split_lru_key("short", t, k));
}

}  // namespace
}  // namespace nfsgw::cache::codec
