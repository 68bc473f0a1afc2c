// RecordAssembler: single and multi-fragment records, headers split across reads,
// zero-length fragments, many records per read, and the size bound.
#include "protocol/record_marking.h"

#include <gtest/gtest.h>

#include <random>

namespace nfsgw::rpc {
namespace {

using Bytes = std::vector<std::uint8_t>;

void append_fragment(Bytes& out, const Bytes& data, bool last) {
  std::uint32_t h = static_cast<std::uint32_t>(data.size()) | (last ? kLastFragmentBit : 0);
  out.push_back(static_cast<std::uint8_t>(h >> 24));
  out.push_back(static_cast<std::uint8_t>(h >> 16));
  out.push_back(static_cast<std::uint8_t>(h >> 8));
  out.push_back(static_cast<std::uint8_t>(h));
  out.insert(out.end(), data.begin(), data.end());
}

Bytes payload(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i);
  return b;
}

/// Feeds `stream` in chunks of `chunk` bytes; collects all records.
std::vector<Bytes> assemble(const Bytes& stream, std::size_t chunk, std::size_t max = 1 << 20) {
  RecordAssembler a(max);
  std::vector<Bytes> out;
  for (std::size_t off = 0; off < stream.size(); off += chunk) {
    std::span<const std::uint8_t> in(stream.data() + off, std::min(chunk, stream.size() - off));
    while (true) {
      auto st = a.feed(in);
      if (st == RecordAssembler::Status::Record) {
        out.push_back(a.take_record());
        continue;
      }
      EXPECT_EQ(st, RecordAssembler::Status::NeedMore);
      EXPECT_TRUE(in.empty());
      break;
    }
  }
  return out;
}

TEST(RecordMarking, WriteRecordHeader) {
  std::uint8_t h[4];
  write_record_header(h, 0x00012345);
  EXPECT_EQ(h[0], 0x80);
  EXPECT_EQ(h[1], 0x01);
  EXPECT_EQ(h[2], 0x23);
  EXPECT_EQ(h[3], 0x45);
}

TEST(RecordMarking, SingleFragmentWholeBuffer) {
  Bytes s;
  append_fragment(s, payload(100, 1), true);
  auto recs = assemble(s, s.size());
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0], payload(100, 1));
}

TEST(RecordMarking, MultiFragmentRecordIsConcatenated) {
  Bytes s;
  append_fragment(s, payload(10, 1), false);
  append_fragment(s, payload(7, 50), false);
  append_fragment(s, payload(3, 90), true);
  Bytes want = payload(10, 1);
  Bytes p2 = payload(7, 50), p3 = payload(3, 90);
  want.insert(want.end(), p2.begin(), p2.end());
  want.insert(want.end(), p3.begin(), p3.end());
  for (std::size_t chunk : {1u, 2u, 3u, 5u, 7u, 64u}) {
    auto recs = assemble(s, chunk);
    ASSERT_EQ(recs.size(), 1u) << chunk;
    EXPECT_EQ(recs[0], want) << chunk;
  }
}

TEST(RecordMarking, HeaderSplitAcrossEveryByteBoundary) {
  Bytes s;
  append_fragment(s, payload(9, 3), true);
  for (std::size_t cut = 1; cut < s.size(); ++cut) {
    RecordAssembler a(1024);
    std::span<const std::uint8_t> first(s.data(), cut);
    EXPECT_EQ(a.feed(first), RecordAssembler::Status::NeedMore) << cut;
    std::span<const std::uint8_t> second(s.data() + cut, s.size() - cut);
    ASSERT_EQ(a.feed(second), RecordAssembler::Status::Record) << cut;
    EXPECT_EQ(a.take_record(), payload(9, 3));
  }
}

TEST(RecordMarking, ZeroLengthFragments) {
  Bytes s;
  append_fragment(s, {}, false);
  append_fragment(s, payload(4, 8), false);
  append_fragment(s, {}, true);
  append_fragment(s, {}, true);  // an empty record
  auto recs = assemble(s, 3);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0], payload(4, 8));
  EXPECT_TRUE(recs[1].empty());
}

TEST(RecordMarking, ManyRecordsInOneBufferStopAtEachRecord) {
  Bytes s;
  for (std::uint8_t i = 0; i < 20; ++i) append_fragment(s, payload(i * 3 + 1, i), true);
  RecordAssembler a(4096);
  std::span<const std::uint8_t> in(s);
  for (std::uint8_t i = 0; i < 20; ++i) {
    ASSERT_EQ(a.feed(in), RecordAssembler::Status::Record) << int(i);
    EXPECT_EQ(a.take_record(), payload(i * 3 + 1, i));
  }
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(a.feed(in), RecordAssembler::Status::NeedMore);
}

TEST(RecordMarking, RecordNotTakenIsReportedAgain) {
  Bytes s;
  append_fragment(s, payload(5, 1), true);
  append_fragment(s, payload(6, 2), true);
  RecordAssembler a(100);
  std::span<const std::uint8_t> in(s);
  ASSERT_EQ(a.feed(in), RecordAssembler::Status::Record);
  std::size_t left = in.size();
  EXPECT_EQ(a.feed(in), RecordAssembler::Status::Record);
  EXPECT_EQ(in.size(), left) << "no input consumed while a record is pending";
  EXPECT_EQ(a.take_record(), payload(5, 1));
  ASSERT_EQ(a.feed(in), RecordAssembler::Status::Record);
  EXPECT_EQ(a.take_record(), payload(6, 2));
}

TEST(RecordMarking, RandomChunkingMatchesRecords) {
  std::mt19937 rng(1234);
  std::vector<Bytes> want;
  Bytes s;
  for (int i = 0; i < 50; ++i) {
    Bytes rec;
    int frags = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < frags; ++f) {
      Bytes p = payload(rng() % 40, static_cast<std::uint8_t>(rng()));
      append_fragment(s, p, f == frags - 1);
      rec.insert(rec.end(), p.begin(), p.end());
    }
    want.push_back(rec);
  }
  for (std::size_t chunk : {1u, 4u, 13u, 100u, 100000u}) {
    EXPECT_EQ(assemble(s, chunk), want) << chunk;
  }
}

TEST(RecordMarking, FragmentOverBoundIsTooLargeBeforeItsBody) {
  RecordAssembler a(1000);
  Bytes s;
  s.push_back(0x80);
  s.push_back(0x00);
  s.push_back(0x03);
  s.push_back(0xE9);  // 1001 bytes, body never sent
  std::span<const std::uint8_t> in(s);
  EXPECT_EQ(a.feed(in), RecordAssembler::Status::TooLarge);
  // Sticky: the stream cannot be resynchronised.
  Bytes more(10, 0);
  std::span<const std::uint8_t> in2(more);
  EXPECT_EQ(a.feed(in2), RecordAssembler::Status::TooLarge);
}

TEST(RecordMarking, MaximumLengthHeaderIsTooLarge) {
  RecordAssembler a(1 << 20);
  Bytes s{0xFF, 0xFF, 0xFF, 0xFF};
  std::span<const std::uint8_t> in(s);
  EXPECT_EQ(a.feed(in), RecordAssembler::Status::TooLarge);
}

TEST(RecordMarking, AccumulatedFragmentsOverBoundAreTooLarge) {
  RecordAssembler a(100);
  Bytes s;
  append_fragment(s, payload(60, 0), false);
  append_fragment(s, payload(41, 0), true);
  std::span<const std::uint8_t> in(s);
  EXPECT_EQ(a.feed(in), RecordAssembler::Status::TooLarge);
  // Exactly the bound is fine.
  RecordAssembler b(100);
  Bytes ok;
  append_fragment(ok, payload(60, 0), false);
  append_fragment(ok, payload(40, 0), true);
  std::span<const std::uint8_t> in2(ok);
  ASSERT_EQ(b.feed(in2), RecordAssembler::Status::Record);
  EXPECT_EQ(b.take_record().size(), 100u);
}

TEST(RecordMarking, BoundAppliesPerRecord) {
  Bytes s;
  for (int i = 0; i < 5; ++i) append_fragment(s, payload(80, 1), true);
  auto recs = assemble(s, 7, 100);
  EXPECT_EQ(recs.size(), 5u);
}

}  // namespace
}  // namespace nfsgw::rpc
