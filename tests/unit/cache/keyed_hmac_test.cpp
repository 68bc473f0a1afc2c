// KeyedHmac: the per-thread keyed contexts give exactly HMAC-SHA256 (RFC 4231),
// whatever the order of keys and threads that use them.
#include "cache/keyed_hmac.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace nfsgw::cache {
namespace {

std::string hex(const KeyedHmac::Digest& d) {
  std::string s;
  char b[3];
  for (auto c : d) {
    std::snprintf(b, sizeof b, "%02x", c);
    s += b;
  }
  return s;
}

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// RFC 4231, test case 2.
const std::string kJefe = "Jefe";
const std::string kWhat = "what do ya want for nothing?";
const std::string kJefeMac = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
// RFC 4231, test case 1: key 0x0b x 20, "Hi There".
const std::string kHiThere = "Hi There";
const std::string kHiThereMac = "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7";

TEST(KeyedHmac, MatchesRfc4231) {
  KeyedHmac jefe(bytes(kJefe));
  EXPECT_EQ(hex(jefe(kWhat.data(), kWhat.size())), kJefeMac);
  std::string key(20, '\x0b');
  EXPECT_EQ(hex(hmac_sha256(bytes(key), kHiThere.data(), kHiThere.size())), kHiThereMac);
}

TEST(KeyedHmac, RepeatedAndInterleavedKeysGiveTheSameAnswers) {
  KeyedHmac jefe(bytes(kJefe));
  KeyedHmac other(bytes(std::string(20, '\x0b')));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(hex(jefe(kWhat.data(), kWhat.size())), kJefeMac);
    EXPECT_EQ(hex(other(kHiThere.data(), kHiThere.size())), kHiThereMac);
  }
  // A second key's context on this thread does not leak into the first's.
  EXPECT_NE(hex(other(kWhat.data(), kWhat.size())), kJefeMac);
}

TEST(KeyedHmac, ANewKeyAfterTheOldOneIsDestroyedIsUsed) {
  {
    KeyedHmac first(bytes(std::string(20, '\x0b')));
    EXPECT_EQ(hex(first(kHiThere.data(), kHiThere.size())), kHiThereMac);
  }
  KeyedHmac second(bytes(kJefe));
  EXPECT_EQ(hex(second(kWhat.data(), kWhat.size())), kJefeMac);
}

TEST(KeyedHmac, ThreadsShareOneKey) {
  KeyedHmac jefe(bytes(kJefe));
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        if (hex(jefe(kWhat.data(), kWhat.size())) != kJefeMac) ++wrong[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace nfsgw::cache
