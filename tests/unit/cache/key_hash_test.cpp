// The in-memory hash of record keys (cache/key_hash.h): every byte counts, at every
// length, and keys like the metadata store's spread evenly over the memo's sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cache/key_hash.h"

using nfsgw::cache::key_hash;

TEST(KeyHash, EqualKeysHashEqual) {
  const std::string a(41, 'x');
  const std::string b(41, 'x');
  EXPECT_EQ(key_hash(a), key_hash(b));
  EXPECT_EQ(key_hash(""), key_hash(std::string()));
}

TEST(KeyHash, EveryByteOfEveryLengthChangesTheHash) {
  // Lengths 1 to 80 cover the whole words, the overlapping last word (9 to 15
  // bytes past a multiple of eight) and the short tail under eight bytes.
  for (std::size_t len = 1; len <= 80; ++len) {
    std::string key(len, '\0');
    for (std::size_t i = 0; i < len; ++i) key[i] = static_cast<char>(i * 31 + 7);
    const std::size_t h = key_hash(key);
    for (std::size_t i = 0; i < len; ++i) {
      std::string other = key;
      other[i] = static_cast<char>(other[i] ^ 0x01);
      EXPECT_NE(key_hash(other), h) << "length " << len << ", byte " << i;
    }
    // A key and the same bytes with one more zero byte differ too (the length counts).
    EXPECT_NE(key_hash(key + std::string(1, '\0')), h) << "length " << len;
  }
}

TEST(KeyHash, StoreLikeKeysSpreadOverTheMemoSets) {
  // 2,000 keys as a LOOKUP record's: kind, export, a 28-byte handle, a name.
  constexpr std::size_t kSets = 2048;
  std::vector<int> load(kSets, 0);
  std::set<std::size_t> distinct;
  for (int i = 0; i < 2000; ++i) {
    std::string key = std::string(1, '\x02') + std::string("\0\0\0\1", 4) + std::string(28, '\x5a') + "file" +
                      std::to_string(i) + ".php";
    const std::size_t h = key_hash(key);
    distinct.insert(h);
    ++load[(h ^ (h >> 29)) % kSets];  // as PeekMemo::set_of
  }
  EXPECT_EQ(distinct.size(), 2000u);
  // Uniform hashing puts at most 6 or 7 keys in the fullest set here (Poisson,
  // mean 0.98); a weak hash that kept the names' digits in few bits would pile
  // dozens into one.
  EXPECT_LE(*std::max_element(load.begin(), load.end()), 9);
}
