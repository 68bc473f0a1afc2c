// A bounded, seeded, libFuzzer-free fuzz test: random mutations of valid
// encodings and purely random buffers are decoded as every type. Decoding must
// either succeed or throw xdr::DecodeError (never crash, overrun or throw anything
// else), and whatever decodes must re-encode to a stable form.
#include <gtest/gtest.h>

#include <random>

#include "protocol/xdr.h"
#include "tests/unit/protocol/codec_cases.h"

namespace nfsgw::test {
namespace {

constexpr int kMutationsPerCase = 400;
constexpr int kRandomBuffers = 300;

/// Word values that sit on the edges of lengths, bools and enums.
constexpr std::uint32_t kInteresting[] = {0, 1, 2, 3, 4, 7, 8, 0x40, 0x41, 0xFF, 0x100, 0x3FF,
                                          0x400, 0x401, 10001, 10008, 10009, 0x7FFFFFFF,
                                          0x80000000, 0xFFFFFFFE, 0xFFFFFFFF};

Bytes mutate(const Bytes& in, std::mt19937& rng) {
  Bytes b = in;
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 6) {
      case 0:  // flip a bit
        if (!b.empty()) b[rng() % b.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // overwrite an aligned word with an edge value
        if (b.size() >= 4) {
          std::size_t at = (rng() % (b.size() / 4)) * 4;
          std::uint32_t v = kInteresting[rng() % std::size(kInteresting)];
          b[at] = static_cast<std::uint8_t>(v >> 24);
          b[at + 1] = static_cast<std::uint8_t>(v >> 16);
          b[at + 2] = static_cast<std::uint8_t>(v >> 8);
          b[at + 3] = static_cast<std::uint8_t>(v);
        }
        break;
      case 2:  // truncate
        if (!b.empty()) b.resize(rng() % b.size());
        break;
      case 3:  // delete an aligned word
        if (b.size() >= 4) {
          std::size_t at = (rng() % (b.size() / 4)) * 4;
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + 4));
        }
        break;
      case 4: {  // insert a random word
        std::size_t at = b.empty() ? 0 : (rng() % (b.size() / 4 + 1)) * 4;
        std::uint32_t v = rng();
        std::uint8_t w[4] = {static_cast<std::uint8_t>(v >> 24), static_cast<std::uint8_t>(v >> 16),
                             static_cast<std::uint8_t>(v >> 8), static_cast<std::uint8_t>(v)};
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(std::min(at, b.size())), w, w + 4);
        break;
      }
      default:  // random byte
        if (!b.empty()) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
        break;
    }
  }
  return b;
}

/// Decodes `b` as case `c`. Returns true when it decoded; fails the test on any
/// exception other than DecodeError, or if a decoded value does not re-encode stably.
bool try_decode(const CodecCase& c, const Bytes& b) {
  std::size_t used = 0;
  try {
    used = c.decode(b);
  } catch (const xdr::DecodeError&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << c.name << ": unexpected exception " << e.what();
    return false;
  }
  EXPECT_LE(used, b.size()) << c.name;
  // Decoding is lenient only about padding contents, so encode(decode(x)) is
  // canonical: decoding and re-encoding it again must not change it.
  Bytes once = c.reencode(b);
  EXPECT_EQ(once.size(), used) << c.name;
  EXPECT_EQ(c.reencode(once), once) << c.name;
  return true;
}

TEST(CodecMutation, MutatedValidEncodingsNeverCrash) {
  std::mt19937 rng(20240611);
  std::size_t decoded = 0, refused = 0;
  for (const CodecCase& c : all_codec_cases()) {
    for (int i = 0; i < kMutationsPerCase; ++i) {
      Bytes b = mutate(c.encoded, rng);
      (try_decode(c, b) ? decoded : refused)++;
    }
  }
  // Both outcomes must occur, or the mutator is not exercising the decoders.
  EXPECT_GT(decoded, 0u);
  EXPECT_GT(refused, 0u);
}

TEST(CodecMutation, RandomBuffersNeverCrashAnyDecoder) {
  std::mt19937 rng(7);
  for (int i = 0; i < kRandomBuffers; ++i) {
    Bytes b(rng() % 300);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    // Bias some buffers towards small words so bools and lengths are often valid.
    if (i % 2 == 0)
      for (std::size_t k = 0; k < b.size(); ++k)
        if (k % 4 != 3) b[k] = 0;
    for (const CodecCase& c : all_codec_cases()) try_decode(c, b);
  }
}

}  // namespace
}  // namespace nfsgw::test
