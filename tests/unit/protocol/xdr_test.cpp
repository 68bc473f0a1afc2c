// XDR primitives: byte-for-byte agreement with libtirpc in both directions, and
// the Reader's refusal of truncated, oversized or invalid input.
#include "protocol/xdr.h"

#include <gtest/gtest.h>

#include <limits>

#include "tests/unit/protocol/tirpc_reference.h"

namespace nfsgw::xdr {
namespace {

namespace ref = nfsgw::test::tirpc_ref;
using Bytes = std::vector<std::uint8_t>;

template <class Fn>
Bytes write(Fn fn) {
  Bytes out;
  Writer w(out);
  fn(w);
  return out;
}

Bytes span_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

TEST(XdrWriter, U32MatchesTirpc) {
  for (std::uint32_t v : {0u, 1u, 0x7Fu, 0x80u, 0x12345678u, 0x80000000u, 0xFFFFFFFFu}) {
    EXPECT_EQ(write([&](Writer& w) { w.u32(v); }), ref::encode_u32(v)) << v;
  }
}

TEST(XdrWriter, I32NegativeIsTwosComplement) {
  EXPECT_EQ(write([](Writer& w) { w.i32(-2); }), (Bytes{0xFF, 0xFF, 0xFF, 0xFE}));
}

TEST(XdrWriter, U64MatchesTirpc) {
  for (std::uint64_t v : std::initializer_list<std::uint64_t>{0ull, 1ull, 0x0102030405060708ull, 0xFFFFFFFF00000000ull,
                          0x00000000FFFFFFFFull, std::numeric_limits<std::uint64_t>::max()}) {
    EXPECT_EQ(write([&](Writer& w) { w.u64(v); }), ref::encode_u64(v)) << v;
  }
}

TEST(XdrWriter, BoolMatchesTirpc) {
  EXPECT_EQ(write([](Writer& w) { w.boolean(true); }), ref::encode_bool(true));
  EXPECT_EQ(write([](Writer& w) { w.boolean(false); }), ref::encode_bool(false));
}

TEST(XdrWriter, OpaqueAndStringMatchTirpcForEveryPadding) {
  for (std::size_t n = 0; n <= 9; ++n) {
    Bytes data(n);
    for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<std::uint8_t>(0xA0 + i);
    EXPECT_EQ(write([&](Writer& w) { w.opaque_var(data); }), ref::encode_bytes(data)) << n;
    EXPECT_EQ(write([&](Writer& w) { w.opaque_fixed(data); }), ref::encode_opaque(data)) << n;
    std::string s(n, 'q');
    EXPECT_EQ(write([&](Writer& w) { w.string(s); }), ref::encode_string(s)) << n;
  }
}

TEST(XdrWriter, AppendsToExistingContent) {
  Bytes out{0xEE};
  Writer w(out);
  w.u32(1);
  EXPECT_EQ(out, (Bytes{0xEE, 0, 0, 0, 1}));
  EXPECT_EQ(w.size(), 5u);
}

TEST(XdrReader, ReadsTirpcEncodings) {
  Bytes b = ref::encode_u64(0xDEADBEEFCAFEF00Dull);
  Reader r(b);
  EXPECT_EQ(r.u64(), 0xDEADBEEFCAFEF00Dull);
  EXPECT_EQ(r.remaining(), 0u);

  for (std::size_t n = 0; n <= 9; ++n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('a' + i));
    Bytes enc = ref::encode_string(s);
    Reader rs(enc);
    EXPECT_EQ(rs.string(255), s);
    EXPECT_EQ(rs.remaining(), 0u) << "padding must be consumed";
  }
}

TEST(XdrReader, TirpcReadsOurEncodings) {
  Bytes data = span_bytes("xdr-bytes");
  auto dec = ref::decode_bytes(write([&](Writer& w) { w.opaque_var(data); }), 100);
  ASSERT_TRUE(dec.has_value());
  EXPECT_EQ(*dec, data);
  auto s = ref::decode_string(write([](Writer& w) { w.string("name"); }), 100);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, "name");
  EXPECT_EQ(ref::decode_u32(write([](Writer& w) { w.u32(0xCAFEBABE); })), 0xCAFEBABEu);
  EXPECT_EQ(ref::decode_u64(write([](Writer& w) { w.i64(-5); })), static_cast<std::uint64_t>(-5));
}

TEST(XdrReader, TruncatedScalarsThrow) {
  Bytes b{0, 0, 1};
  Reader r(b);
  EXPECT_THROW(r.u32(), DecodeError);
  Bytes b7(7);
  Reader r7(b7);
  EXPECT_THROW(r7.u64(), DecodeError);
}

TEST(XdrReader, InvalidBoolThrows) {
  Bytes b{0, 0, 0, 2};
  Reader r(b);
  EXPECT_THROW(r.boolean(), DecodeError);
  Bytes t{0, 0, 0, 1, 0, 0, 0, 0};
  Reader rt(t);
  EXPECT_TRUE(rt.boolean());
  EXPECT_FALSE(rt.boolean());
}

TEST(XdrReader, LengthAboveBoundThrows) {
  Bytes b = ref::encode_string("abcdef");
  Reader r(b);
  EXPECT_THROW(r.string(5), DecodeError);
  Reader ok(b);
  EXPECT_EQ(ok.string(6), "abcdef");
}

TEST(XdrReader, HugeLengthWithShortBufferThrows) {
  Bytes b{0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4};
  Reader r(b);
  EXPECT_THROW(r.opaque_var(std::numeric_limits<std::size_t>::max()), DecodeError);
  Reader f(b);
  EXPECT_THROW(f.opaque_fixed(std::numeric_limits<std::size_t>::max()), DecodeError);
}

TEST(XdrReader, MissingPaddingThrows) {
  // Length 3 with its three bytes but without the one padding byte.
  Bytes b{0, 0, 0, 3, 'a', 'b', 'c'};
  Reader r(b);
  EXPECT_THROW(r.opaque_var(10), DecodeError);
}

TEST(XdrReader, OpaqueIsAViewAndRestIsTheTail) {
  Bytes b{0, 0, 0, 2, 9, 8, 0, 0, 0xAA, 0xBB};
  Reader r(b);
  auto v = r.opaque_var(4);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v.data(), b.data() + 4);
  EXPECT_EQ(r.position(), 8u);
  ASSERT_EQ(r.rest().size(), 2u);
  EXPECT_EQ(r.rest()[0], 0xAA);
}

TEST(XdrPadding, Values) {
  EXPECT_EQ(padding(0), 0u);
  EXPECT_EQ(padding(1), 3u);
  EXPECT_EQ(padding(2), 2u);
  EXPECT_EQ(padding(3), 1u);
  EXPECT_EQ(padding(4), 0u);
  EXPECT_EQ(padding(5), 3u);
}

}  // namespace
}  // namespace nfsgw::xdr
