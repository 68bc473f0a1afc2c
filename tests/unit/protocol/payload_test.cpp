// nfs3::Payload, the bytes of a READ reply: a copy is deep, a move leaves the
// source empty, and a large reply encodes to the same bytes as a small one would.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/nfs3_codec.h"
#include "protocol/payload.h"

namespace nfsgw::nfs3 {
namespace {

TEST(Payload, CopiesAreDeepAndMovesEmptyTheSource) {
  const std::string s = "hello, world";
  Payload a(s.begin(), s.end());
  ASSERT_EQ(a.size(), s.size());
  Payload b = a;
  b[0] = 'H';
  EXPECT_EQ(std::string(a.begin(), a.end()), s) << "the copy has bytes of its own";
  EXPECT_NE(a, b);
  Payload c = std::move(b);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): what a move leaves is part of the contract
  EXPECT_EQ(std::string(c.begin(), c.end()), "Hello, world");
  c = a;
  EXPECT_EQ(c, a);
  c.truncate(5);
  EXPECT_EQ(std::string(c.begin(), c.end()), "hello");
  c.truncate(50);
  EXPECT_EQ(c.size(), 5u) << "truncate never grows";
  EXPECT_EQ(Payload::uninitialized(0), Payload{});
  EXPECT_EQ(Payload::uninitialized(7).size(), 7u);
}

TEST(Payload, AReadReplyEncodesItsBytesPaddedAndDecodesBack) {
  for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 65536u + 3u}) {
    ReadRes r;
    r.count = static_cast<std::uint32_t>(n);
    r.eof = true;
    r.data = Payload::uninitialized(n);
    for (std::size_t i = 0; i < n; ++i) r.data[i] = static_cast<std::uint8_t>(i * 7 + 1);
    std::vector<std::uint8_t> out;
    xdr::Writer w(out);
    encode(w, r);
    // status, no attributes, count, eof, length, bytes, padding to four.
    ASSERT_EQ(out.size(), 5 * 4 + n + xdr::padding(n)) << n;
    for (std::size_t i = 0; i < xdr::padding(n); ++i) EXPECT_EQ(out[20 + n + i], 0) << n;
    xdr::Reader rd(out);
    ReadRes back;
    decode(rd, back);
    EXPECT_EQ(back.data, r.data) << n;
    EXPECT_EQ(back.count, n);
  }
}

}  // namespace
}  // namespace nfsgw::nfs3
