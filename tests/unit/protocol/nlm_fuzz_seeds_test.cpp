// The seeds of fuzz_nlm_args (tests/fuzz/corpus/nlm_args/) are the encodings of
// the NLM/NSM case catalogue (nlm_codec_cases.cpp), each after the byte that makes
// the fuzz target decode it as its type. This test fails when they drift apart
// (a codec or a case changed); to write them again:
//   nfsgw_protocol_tests --gtest_also_run_disabled_tests --gtest_filter='NlmFuzzSeeds.DISABLED_Write'
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/unit/protocol/nlm_codec_cases.h"

namespace nfsgw::test::nlm_fuzz_seeds_test {
namespace {

using namespace nfsgw::test::nlm_cases;
namespace fs = std::filesystem;

const fs::path kDir = fs::path(NFSGW_SOURCE_DIR) / "tests/fuzz/corpus/nlm_args";

/// fuzz_nlm_args.cpp's kTypes index for a case, by the case's name (longest
/// prefixes first). The two lists must agree: the Decode test below checks that
/// every seed decodes, entirely, as the type this index stands for.
int selector(const std::string& name) {
  static const std::vector<std::pair<std::string, int>> kSel = {
      {"Nlm4TestArgs", 0},   {"Nlm4LockArgs", 1},  {"Nlm4CancelArgs", 2}, {"Nlm4UnlockArgs", 3},
      {"Nlm4ShareArgs", 4},  {"Nlm4Notify", 5},    {"Nlm4Res_", 6},       {"Nlm4TestRes", 7},
      {"Nlm4ShareRes", 8},   {"NsmSmName", 9},     {"NsmMonId", 11},      {"NsmMon", 10},
      {"NsmMyId", 12},       {"NsmStatChange", 13}, {"NsmStatus", 14},    {"NsmStatRes", 15},
      {"NsmSmStat", 16}};
  for (const auto& [prefix, s] : kSel) {
    if (name.starts_with(prefix)) return s;
  }
  return -1;
}

std::string file_name(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

Bytes seed(const NlmCase& c) {
  Bytes b{static_cast<std::uint8_t>(selector(c.name))};
  b.insert(b.end(), c.encoded.begin(), c.encoded.end());
  return b;
}

/// Decodes all of `in` as fuzz_nlm_args's type number `s`.
void decode_as(int s, std::span<const std::uint8_t> in) {
  switch (s) {
    case 0: decoded<nlm4::TestArgs>(in); return;
    case 1: decoded<nlm4::LockArgs>(in); return;
    case 2: decoded<nlm4::CancelArgs>(in); return;
    case 3: decoded<nlm4::UnlockArgs>(in); return;
    case 4: decoded<nlm4::ShareArgs>(in); return;
    case 5: decoded<nlm4::Notify>(in); return;
    case 6: decoded<nlm4::Res>(in); return;
    case 7: decoded<nlm4::TestRes>(in); return;
    case 8: decoded<nlm4::ShareRes>(in); return;
    case 9: decoded<nsm::SmName>(in); return;
    case 10: decoded<nsm::Mon>(in); return;
    case 11: decoded<nsm::MonId>(in); return;
    case 12: decoded<nsm::MyId>(in); return;
    case 13: decoded<nsm::StatChange>(in); return;
    case 14: decoded<nsm::Status>(in); return;
    case 15: decoded<nsm::StatRes>(in); return;
    case 16: decoded<nsm::SmStat>(in); return;
  }
  throw std::logic_error("no such type");
}

TEST(NlmFuzzSeeds, EveryCaseIsASeedAndDecodesAsItsType) {
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(kDir)) files += e.is_regular_file();
  EXPECT_EQ(files, all_nlm_cases().size()) << "a seed without a case, or the other way round";
  for (const NlmCase& c : all_nlm_cases()) {
    SCOPED_TRACE(c.name);
    ASSERT_GE(selector(c.name), 0);
    std::ifstream f(kDir / file_name(c.name), std::ios::binary);
    ASSERT_TRUE(f) << "missing seed";
    const Bytes got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, seed(c));
    ASSERT_FALSE(got.empty());
    EXPECT_NO_THROW(decode_as(got[0], std::span<const std::uint8_t>(got).subspan(1)));
  }
}

TEST(NlmFuzzSeeds, DISABLED_Write) {
  fs::create_directories(kDir);
  for (const NlmCase& c : all_nlm_cases()) {
    const Bytes b = seed(c);
    std::ofstream(kDir / file_name(c.name), std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
}

}  // namespace
}  // namespace nfsgw::test::nlm_fuzz_seeds_test
