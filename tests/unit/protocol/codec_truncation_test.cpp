// Every strict prefix of every valid encoding must be refused with DecodeError:
// nothing may be read past the end of the input and nothing else may be thrown.
#include <gtest/gtest.h>

#include "protocol/xdr.h"
#include "tests/unit/protocol/codec_cases.h"

namespace nfsgw::test {
namespace {

class CodecTruncation : public ::testing::TestWithParam<std::size_t> {};

TEST_P(CodecTruncation, EveryPrefixThrowsDecodeError) {
  const CodecCase& c = all_codec_cases()[GetParam()];
  for (std::size_t n = 0; n < c.encoded.size(); ++n) {
    // A copy of exactly n bytes, so the sanitizer build sees any overrun.
    Bytes prefix(c.encoded.begin(), c.encoded.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(c.decode(prefix), xdr::DecodeError) << c.name << " prefix " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CodecTruncation,
                         ::testing::Range<std::size_t>(0, all_codec_cases().size()),
                         [](const auto& info) { return all_codec_cases()[info.param].name; });

}  // namespace
}  // namespace nfsgw::test
