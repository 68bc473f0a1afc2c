// READ, WRITE and COMMIT against a real origin, checked against the file on disk.
#include <fstream>
#include <iterator>

#include "tests/upstream/origin_fixture.h"
#include "tests/upstream/test_util.h"

namespace nfsgw::upstream::test {
namespace {

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 31 + seed) ^ (i >> 8));
  return v;
}

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class IoTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_path_ = fresh_dir("io"); }
  ForwarderHarness h_;
  std::string dir_path_;
};

TEST_F(IoTest, ReadReturnsTheFileInChunksWithEof) {
  const auto data = pattern(200'000, 7);
  std::ofstream(dir_path_ + "/r", std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  const auto fh = h_.lookup_path("io/r");
  std::vector<std::uint8_t> got;
  bool eof = false;
  int calls = 0;
  while (!eof && calls < 100) {
    nfs3::ReadArgs args{fh, got.size(), 65536};
    auto res = h_.call(&Forwarder::read, as_root(), args);
    ASSERT_EQ(res.status, nfs3::Status::Ok);
    ++calls;
    EXPECT_EQ(res.count, res.data.size());
    got.insert(got.end(), res.data.begin(), res.data.end());
    eof = res.eof;
    ASSERT_TRUE(res.file_attributes.has_value());
    EXPECT_EQ(res.file_attributes->size, data.size());
  }
  EXPECT_TRUE(eof);
  EXPECT_EQ(got, data);
  EXPECT_EQ(calls, 4);
}

TEST_F(IoTest, WriteStableAndUnstableThenCommit) {
  std::ofstream(dir_path_ + "/w").put('\0');
  const auto fh = h_.lookup_path("io/w");
  const auto a = pattern(100'000, 1);
  const auto b = pattern(50'000, 2);

  nfs3::WriteArgs w1{fh, 0, static_cast<std::uint32_t>(a.size()), nfs3::StableHow::FileSync, a};
  auto r1 = h_.call(&Forwarder::write, as_root(), w1);
  ASSERT_EQ(r1.status, nfs3::Status::Ok);
  EXPECT_EQ(r1.count, a.size());
  EXPECT_EQ(r1.committed, nfs3::StableHow::FileSync);
  ASSERT_TRUE(r1.file_wcc.after.has_value());
  EXPECT_EQ(r1.file_wcc.after->size, a.size());

  nfs3::WriteArgs w2{fh, a.size(), static_cast<std::uint32_t>(b.size()),
                     nfs3::StableHow::Unstable, b};
  auto r2 = h_.call(&Forwarder::write, as_root(), w2);
  ASSERT_EQ(r2.status, nfs3::Status::Ok);
  EXPECT_EQ(r2.count, b.size());

  auto c = h_.call(&Forwarder::commit, as_root(), nfs3::CommitArgs{fh, 0, 0});
  ASSERT_EQ(c.status, nfs3::Status::Ok);
  // One server instance, one write verifier.
  EXPECT_EQ(c.verf, r2.verf);
  EXPECT_EQ(c.verf, r1.verf);
  ASSERT_TRUE(c.file_wcc.after.has_value());

  auto want = a;
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(slurp(dir_path_ + "/w"), want);
  expect_matches_stat(*c.file_wcc.after, dir_path_ + "/w");
}

TEST_F(IoTest, ReadPastEndIsEmptyWithEof) {
  std::ofstream(dir_path_ + "/small") << "hello";
  const auto fh = h_.lookup_path("io/small");
  auto res = h_.call(&Forwarder::read, as_root(), nfs3::ReadArgs{fh, 100, 10});
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  EXPECT_TRUE(res.eof);
  EXPECT_TRUE(res.data.empty());
  auto whole = h_.call(&Forwarder::read, as_root(), nfs3::ReadArgs{fh, 0, 100});
  ASSERT_EQ(whole.status, nfs3::Status::Ok);
  EXPECT_EQ(std::string(whole.data.begin(), whole.data.end()), "hello");
  EXPECT_TRUE(whole.eof);
}

}  // namespace
}  // namespace nfsgw::upstream::test
