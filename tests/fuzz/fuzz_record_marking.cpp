// Record marking (protocol/record_marking.*): a byte stream from a client, cut
// into reads of fuzzer-chosen sizes. The assembler must never read out of bounds,
// never yield a record over its bound, and yield exactly the records that a
// plain reading of RFC 5531's fragment headers gives, however the stream is cut.
//
// Input: byte 0 picks the bound (64 B .. 16 KiB), byte 1 seeds the read sizes;
// the rest is the stream.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/record_marking.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using nfsgw::rpc::RecordAssembler;

struct Outcome {
  std::vector<std::vector<std::uint8_t>> records;
  bool too_large = false;
};

/// The reference: reads headers and fragments straight from the whole stream.
Outcome model(std::span<const std::uint8_t> in, std::size_t max) {
  Outcome o;
  std::vector<std::uint8_t> rec;
  std::size_t pos = 0;
  while (in.size() - pos >= 4) {
    const std::uint32_t h = (std::uint32_t{in[pos]} << 24) | (std::uint32_t{in[pos + 1]} << 16) |
                            (std::uint32_t{in[pos + 2]} << 8) | std::uint32_t{in[pos + 3]};
    const std::size_t len = h & 0x7fffffffu;
    if (rec.size() + len > max) {
      o.too_large = true;
      return o;
    }
    pos += 4;
    if (in.size() - pos < len) break;  // the fragment is not all there
    rec.insert(rec.end(), in.begin() + static_cast<std::ptrdiff_t>(pos),
               in.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
    if (h & 0x80000000u) {
      o.records.push_back(std::move(rec));
      rec.clear();
    }
  }
  return o;
}

/// Feeds `in` in pieces whose sizes come from `seed` (1..64 bytes, some whole).
Outcome assemble(std::span<const std::uint8_t> in, std::size_t max, std::uint8_t seed) {
  Outcome o;
  RecordAssembler a(max);
  std::uint32_t state = seed * 2654435761u + 1;
  while (!in.empty()) {
    state = state * 1103515245u + 12345u;
    std::size_t piece = (state >> 16) % 8 == 0 ? in.size() : 1 + (state >> 16) % 64;
    piece = std::min(piece, in.size());
    std::span<const std::uint8_t> chunk = in.first(piece);
    in = in.subspan(piece);
    for (;;) {
      const std::size_t before = chunk.size();
      auto st = a.feed(chunk);
      FUZZ_CHECK(chunk.size() <= before);
      if (st == RecordAssembler::Status::TooLarge) {
        o.too_large = true;
        // The stream cannot be resynchronised: it stays refused.
        std::span<const std::uint8_t> more = chunk;
        FUZZ_CHECK(a.feed(more) == RecordAssembler::Status::TooLarge);
        return o;
      }
      if (st == RecordAssembler::Status::NeedMore) {
        FUZZ_CHECK(chunk.empty());
        break;
      }
      auto rec = a.take_record();
      FUZZ_CHECK(rec.size() <= max);
      o.records.push_back(std::move(rec));
    }
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t max = std::size_t{64} << (data[0] % 9);  // 64 B .. 16 KiB
  const std::uint8_t seed = data[1];
  std::span<const std::uint8_t> stream(data + 2, size - 2);

  const Outcome want = model(stream, max);
  const Outcome got = assemble(stream, max, seed);
  FUZZ_CHECK(got.too_large == want.too_large);
  FUZZ_CHECK(got.records == want.records);
  return 0;
}
