// Every NFSv3 / MOUNT codec type: encode, decode, compare field by field; the
// decoder must consume exactly what the encoder produced.
#include <gtest/gtest.h>

#include <set>

#include "tests/unit/protocol/codec_cases.h"

namespace nfsgw::test {
namespace {

class CodecRoundTrip : public ::testing::TestWithParam<std::size_t> {};

TEST_P(CodecRoundTrip, DecodesToOriginal) {
  const CodecCase& c = all_codec_cases()[GetParam()];
  ASSERT_FALSE(c.encoded.empty());
  EXPECT_EQ(c.encoded.size() % 4, 0u) << "XDR output is 4-byte aligned";
  EXPECT_TRUE(c.decodes_to_original(c.encoded));
  EXPECT_EQ(c.decode(c.encoded), c.encoded.size());
  EXPECT_EQ(c.reencode(c.encoded), c.encoded);
}

TEST_P(CodecRoundTrip, TrailingBytesAreLeftUnread) {
  const CodecCase& c = all_codec_cases()[GetParam()];
  Bytes b = c.encoded;
  b.insert(b.end(), {1, 2, 3, 4});
  EXPECT_EQ(c.decode(b), c.encoded.size());
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return all_codec_cases()[info.param].name;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CodecRoundTrip,
                         ::testing::Range<std::size_t>(0, all_codec_cases().size()), case_name);

TEST(CodecCases, NamesAreUnique) {
  std::set<std::string> names;
  for (const auto& c : all_codec_cases()) EXPECT_TRUE(names.insert(c.name).second) << c.name;
}

}  // namespace
}  // namespace nfsgw::test
