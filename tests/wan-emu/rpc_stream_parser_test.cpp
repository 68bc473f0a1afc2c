// The stream parser only watches bytes; these tests feed it streams cut at every
// possible place and check it reports exactly the messages in them.
#include "tools/wan-emu/rpc_stream_parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace nfsgw::wanemu {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

/// A CALL message body: header, AUTH_NONE cred and verf, then `args` bytes.
Bytes call_body(std::uint32_t xid, std::uint32_t prog, std::uint32_t vers, std::uint32_t proc,
                std::size_t args = 0) {
  Bytes b;
  for (std::uint32_t w : {xid, 0u, 2u, prog, vers, proc, 0u, 0u, 0u, 0u}) put32(b, w);
  b.insert(b.end(), args, 0xAB);
  return b;
}

/// An accepted-success REPLY body with `results` payload bytes.
Bytes reply_body(std::uint32_t xid, std::size_t results = 0) {
  Bytes b;
  for (std::uint32_t w : {xid, 1u, 0u, 0u, 0u, 0u}) put32(b, w);
  b.insert(b.end(), results, 0xCD);
  return b;
}

/// Frames `body` as a record of fragments of at most `frag` bytes.
Bytes frame(const Bytes& body, std::size_t frag = SIZE_MAX) {
  Bytes out;
  std::size_t off = 0;
  do {
    std::size_t n = std::min(frag, body.size() - off);
    bool last = off + n == body.size();
    put32(out, static_cast<std::uint32_t>(n) | (last ? 0x80000000u : 0));
    out.insert(out.end(), body.begin() + off, body.begin() + off + n);
    off += n;
  } while (off < body.size());
  return out;
}

std::vector<RpcMessageInfo> feed_all(RpcStreamParser& p, const Bytes& s, std::size_t chunk) {
  std::vector<RpcMessageInfo> out;
  for (std::size_t off = 0; off < s.size(); off += chunk)
    p.feed(std::span<const std::uint8_t>(s.data() + off, std::min(chunk, s.size() - off)), out);
  return out;
}

void expect_call(const RpcMessageInfo& m, std::uint32_t xid, std::uint32_t prog, std::uint32_t vers,
                 std::uint32_t proc) {
  EXPECT_EQ(m.kind, RpcMessageInfo::Kind::Call);
  EXPECT_EQ(m.xid, xid);
  EXPECT_EQ(m.prog, prog);
  EXPECT_EQ(m.vers, vers);
  EXPECT_EQ(m.proc, proc);
}

TEST(RpcStreamParser, SingleCallInOneRead) {
  RpcStreamParser p;
  auto out = feed_all(p, frame(call_body(7, 100003, 3, 3, 40)), SIZE_MAX);
  ASSERT_EQ(out.size(), 1u);
  expect_call(out[0], 7, 100003, 3, 3);
  EXPECT_EQ(p.records(), 1u);
  EXPECT_FALSE(p.desynchronised());
  EXPECT_EQ(p.unparsed_bytes(), 0u);
}

TEST(RpcStreamParser, CallSplitAtEveryByteBoundary) {
  Bytes s = frame(call_body(0x01020304, 100005, 3, 1, 13));
  for (std::size_t cut = 1; cut < s.size(); ++cut) {
    RpcStreamParser p;
    std::vector<RpcMessageInfo> out;
    p.feed(std::span<const std::uint8_t>(s.data(), cut), out);
    p.feed(std::span<const std::uint8_t>(s.data() + cut, s.size() - cut), out);
    ASSERT_EQ(out.size(), 1u) << "cut at " << cut;
    expect_call(out[0], 0x01020304, 100005, 3, 1);
    EXPECT_EQ(p.records(), 1u) << "cut at " << cut;
  }
}

TEST(RpcStreamParser, OneByteAtATimeManyMessages) {
  Bytes s;
  for (std::uint32_t i = 0; i < 20; ++i) {
    Bytes r = i % 2 ? frame(reply_body(i, i * 3)) : frame(call_body(i, 100003, 3, i, i));
    s.insert(s.end(), r.begin(), r.end());
  }
  RpcStreamParser p;
  auto out = feed_all(p, s, 1);
  ASSERT_EQ(out.size(), 20u);
  for (std::uint32_t i = 0; i < 20; ++i) {
    EXPECT_EQ(out[i].xid, i);
    if (i % 2) EXPECT_EQ(out[i].kind, RpcMessageInfo::Kind::Reply);
    else expect_call(out[i], i, 100003, 3, i);
  }
  EXPECT_EQ(p.records(), 20u);
}

TEST(RpcStreamParser, HeaderSpreadOverTinyFragments) {
  // Fragments of 1..7 bytes: the header words straddle fragment marks.
  for (std::size_t frag = 1; frag < 8; ++frag) {
    Bytes s = frame(call_body(99, 100003, 3, 4, 9), frag);
    Bytes r = frame(reply_body(99, 5), frag);
    s.insert(s.end(), r.begin(), r.end());
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
      RpcStreamParser p;
      auto out = feed_all(p, s, chunk);
      ASSERT_EQ(out.size(), 2u) << "frag " << frag << " chunk " << chunk;
      expect_call(out[0], 99, 100003, 3, 4);
      EXPECT_EQ(out[1].kind, RpcMessageInfo::Kind::Reply);
      EXPECT_EQ(out[1].xid, 99u);
      EXPECT_EQ(p.records(), 2u);
      EXPECT_FALSE(p.desynchronised());
    }
  }
}

TEST(RpcStreamParser, SeveralRecordsInOneRead) {
  Bytes s;
  for (std::uint32_t i = 0; i < 5; ++i) {
    Bytes r = frame(call_body(100 + i, 100003, 3, 1, 8), 16);
    s.insert(s.end(), r.begin(), r.end());
  }
  RpcStreamParser p;
  auto out = feed_all(p, s, SIZE_MAX);
  ASSERT_EQ(out.size(), 5u);
  for (std::uint32_t i = 0; i < 5; ++i) expect_call(out[i], 100 + i, 100003, 3, 1);
}

TEST(RpcStreamParser, LargePayloadIsSkippedNotBuffered) {
  RpcStreamParser p;
  Bytes s = frame(reply_body(5, 1 << 20), 64 * 1024);
  Bytes c = frame(call_body(6, 100003, 3, 6));
  s.insert(s.end(), c.begin(), c.end());
  auto out = feed_all(p, s, 4093);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, RpcMessageInfo::Kind::Reply);
  expect_call(out[1], 6, 100003, 3, 6);
}

TEST(RpcStreamParser, ShortRecordIsCountedAndStreamStaysInSync) {
  Bytes s;
  put32(s, 0x80000004u);  // a 4-byte record: just an xid, no message type
  put32(s, 42);
  Bytes c = frame(call_body(43, 100003, 3, 0));
  s.insert(s.end(), c.begin(), c.end());
  RpcStreamParser p;
  auto out = feed_all(p, s, 5);
  ASSERT_EQ(out.size(), 1u);
  expect_call(out[0], 43, 100003, 3, 0);
  EXPECT_EQ(p.short_records(), 1u);
  EXPECT_EQ(p.records(), 2u);
  EXPECT_FALSE(p.desynchronised());
}

TEST(RpcStreamParser, TextIsGarbageAndCountedAsUnparsed) {
  const char text[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  Bytes s(text, text + sizeof text - 1);
  RpcStreamParser p;
  auto out = feed_all(p, s, 3);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.desynchronised());
  EXPECT_EQ(p.unparsed_bytes(), s.size());
}

TEST(RpcStreamParser, HugeFragmentLengthIsGarbage) {
  Bytes s = frame(call_body(1, 100003, 3, 0));
  put32(s, 0xFFFFFFFFu);  // 2 GiB fragment
  s.insert(s.end(), 100, 0);
  RpcStreamParser p(1 << 20);
  auto out = feed_all(p, s, 7);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(p.desynchronised());
  EXPECT_EQ(p.unparsed_bytes(), 104u);
}

TEST(RpcStreamParser, BadMessageTypeOrRpcVersionIsGarbage) {
  Bytes bad_type;
  for (std::uint32_t w : {1u, 7u, 2u, 100003u, 3u, 0u}) put32(bad_type, w);
  Bytes bad_vers;
  for (std::uint32_t w : {1u, 0u, 3u, 100003u, 3u, 0u}) put32(bad_vers, w);
  for (const Bytes& body : {bad_type, bad_vers}) {
    Bytes s = frame(body);
    Bytes c = frame(call_body(2, 100003, 3, 0));
    s.insert(s.end(), c.begin(), c.end());
    RpcStreamParser p;
    auto out = feed_all(p, s, 2);
    EXPECT_TRUE(out.empty());
    EXPECT_TRUE(p.desynchronised());
    EXPECT_EQ(p.unparsed_bytes(), s.size());
  }
}

TEST(RpcStreamParser, EmptyFirstFragmentIsGarbage) {
  Bytes s;
  put32(s, 0);  // zero-length, not last, starting a record
  put32(s, 0);
  RpcStreamParser p;
  auto out = feed_all(p, s, 1);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.desynchronised());
  EXPECT_EQ(p.unparsed_bytes(), 8u);
}

TEST(RpcStreamParser, EmptyLaterFragmentIsFine) {
  Bytes body = call_body(8, 100003, 3, 2);
  Bytes s;
  put32(s, static_cast<std::uint32_t>(body.size()));
  s.insert(s.end(), body.begin(), body.end());
  put32(s, 0x80000000u);  // empty last fragment closes the record
  Bytes r = frame(reply_body(8));
  s.insert(s.end(), r.begin(), r.end());
  RpcStreamParser p;
  auto out = feed_all(p, s, 1);
  ASSERT_EQ(out.size(), 2u);
  expect_call(out[0], 8, 100003, 3, 2);
  EXPECT_EQ(out[1].kind, RpcMessageInfo::Kind::Reply);
  EXPECT_EQ(p.records(), 2u);
}

TEST(RpcStreamParser, RandomBytesNeverCrashAndAreAccounted) {
  // A fixed-seed pseudo-random stream: whatever happens, every byte is either part of
  // a well-framed record or counted as unparsed, and nothing is read out of bounds
  // (the sanitizer build checks the latter).
  std::uint32_t x = 12345;
  Bytes s(1 << 16);
  for (auto& b : s) {
    x = x * 1103515245u + 12345u;
    b = static_cast<std::uint8_t>(x >> 16);
  }
  for (std::size_t chunk : {std::size_t{1}, std::size_t{17}, std::size_t{65536}}) {
    RpcStreamParser p;
    feed_all(p, s, chunk);
    EXPECT_LE(p.unparsed_bytes(), s.size());
    EXPECT_TRUE(p.desynchronised());
  }
}

}  // namespace
}  // namespace nfsgw::wanemu
