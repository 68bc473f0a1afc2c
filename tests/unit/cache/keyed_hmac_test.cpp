// KeyedHmac: the precomputed inner and outer states give exactly HMAC-SHA256
// (RFC 4231, and OpenSSL's own HMAC()), whatever the key's length, the data's
// length, the order of keys and the threads that use them.
#include "cache/keyed_hmac.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

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

TEST(KeyedHmac, AKeyLongerThanABlockIsHashedFirst) {
  // RFC 4231, test case 6: key 0xaa x 131.
  const std::string key(131, '\xaa');
  const std::string data = "Test Using Larger Than Block-Size Key - Hash Key First";
  EXPECT_EQ(hex(hmac_sha256(bytes(key), data.data(), data.size())),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(KeyedHmac, AgreesWithOpenSslForEveryKeyAndDataLength) {
  std::string data;
  for (int i = 0; i < 200; ++i) data.push_back(static_cast<char>(i * 7 + 1));
  for (std::size_t key_len : {0u, 1u, 31u, 32u, 63u, 64u, 65u, 128u}) {
    const std::string key(key_len, '\x5a');
    KeyedHmac mac(bytes(key));
    for (std::size_t n = 0; n <= data.size(); n += (n < 70 ? 1 : 13)) {
      KeyedHmac::Digest want{};
      unsigned int len = 0;
      ASSERT_NE(HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                     reinterpret_cast<const unsigned char*>(data.data()), n, want.data(), &len),
                nullptr);
      ASSERT_EQ(len, want.size());
      ASSERT_EQ(hex(mac(data.data(), n)), hex(want)) << "key " << key_len << " bytes, data " << n;
    }
  }
}

TEST(KeyedHmac, RepeatedAndInterleavedKeysGiveTheSameAnswers) {
  KeyedHmac jefe(bytes(kJefe));
  KeyedHmac other(bytes(std::string(20, '\x0b')));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(hex(jefe(kWhat.data(), kWhat.size())), kJefeMac);
    EXPECT_EQ(hex(other(kHiThere.data(), kHiThere.size())), kHiThereMac);
  }
  // One key's state does not leak into the other's.
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
