// The in-memory hash of record keys (cache/key_hash.h): every byte counts, at every
// length, and keys like the metadata store's spread evenly over the memo's sets.
// Each test runs with fixed seeds (the process's own seed is random), so what it
// checks is the same on every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cache/key_hash.h"
#include "cache/peek_memo.h"

using nfsgw::cache::key_hash;
using nfsgw::cache::PeekMemo;

namespace {
constexpr std::uint64_t kSeeds[] = {0, 1, 0x0123456789abcdefull, 0xfedcba9876543210ull};
}

TEST(KeyHash, EqualKeysHashEqual) {
  const std::string a(41, 'x');
  const std::string b(41, 'x');
  for (const std::uint64_t seed : kSeeds) {
    EXPECT_EQ(key_hash(a, seed), key_hash(b, seed));
    EXPECT_EQ(key_hash("", seed), key_hash(std::string(), seed));
  }
  // The process's seed is one seed like the others: the default argument uses it.
  EXPECT_EQ(key_hash(a), key_hash(a, nfsgw::cache::kKeyHashSeed));
}

TEST(KeyHash, EveryByteOfEveryLengthChangesTheHash) {
  // Lengths 1 to 80 cover the whole words, the overlapping last word (9 to 15
  // bytes past a multiple of eight) and the short tail under eight bytes.
  for (const std::uint64_t seed : kSeeds) {
    for (std::size_t len = 1; len <= 80; ++len) {
      std::string key(len, '\0');
      for (std::size_t i = 0; i < len; ++i) key[i] = static_cast<char>(i * 31 + 7);
      const std::size_t h = key_hash(key, seed);
      for (std::size_t i = 0; i < len; ++i) {
        std::string other = key;
        other[i] = static_cast<char>(other[i] ^ 0x01);
        EXPECT_NE(key_hash(other, seed), h) << "seed " << seed << ", length " << len << ", byte " << i;
      }
      // A key and the same bytes with one more zero byte differ too (the length counts).
      EXPECT_NE(key_hash(key + std::string(1, '\0'), seed), h) << "seed " << seed << ", length " << len;
    }
  }
}

TEST(KeyHash, StoreLikeKeysSpreadOverTheMemoSets) {
  // 2,000 keys as a LOOKUP record's: kind, export, a 28-byte handle, a name.
  constexpr std::size_t kSets = PeekMemo::Table::kSets;
  for (const std::uint64_t seed : kSeeds) {
    std::vector<int> load(kSets, 0);
    std::set<std::size_t> distinct;
    for (int i = 0; i < 2000; ++i) {
      std::string key = std::string(1, '\x02') + std::string("\0\0\0\1", 4) + std::string(28, '\x5a') + "file" +
                        std::to_string(i) + ".php";
      const std::size_t h = key_hash(key, seed);
      distinct.insert(h);
      ++load[PeekMemo::Table::set_index(h)];
    }
    EXPECT_EQ(distinct.size(), 2000u) << "seed " << seed;
    // Uniform hashing puts at most 6 or 7 keys in the fullest set here (Poisson,
    // mean 0.98); a weak hash that kept the names' digits in few bits would pile
    // dozens into one.
    EXPECT_LE(*std::max_element(load.begin(), load.end()), 9) << "seed " << seed;
  }
}
