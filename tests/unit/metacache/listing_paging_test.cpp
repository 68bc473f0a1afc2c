// Whole listings cut into pages for each client's limits: every name exactly once,
// each reply within its count/dircount/maxcount (measured by encoding it), cookies
// that resume where they should, TOOSMALL when not one entry fits, and paging that
// stays consistent while the listing is replaced underneath.
#include <cstdio>
#include <functional>
#include <map>

#include "protocol/nfs3_codec.h"
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

constexpr int kEntries = 1000;

std::string entry_name(int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "entry_%04d_of_a_big_directory", i);
  return buf;
}

std::uint32_t xdr_string(std::size_t n) { return 4 + static_cast<std::uint32_t>((n + 3) & ~std::size_t{3}); }
/// fileid, name and cookie: what READDIRPLUS's dircount counts.
std::uint32_t dir_info(const std::string& name) { return 8 + xdr_string(name.size()) + 8; }

template <typename Res>
std::size_t encoded_size(const Res& r) {
  std::vector<std::uint8_t> buf;
  xdr::Writer w(buf);
  nfs3::encode(w, r);
  return buf.size();
}

class PagingTest : public MetaCacheTest {
 protected:
  void SetUp() override {
    start();
    big = origin.add_dir(origin.root(), "big");
    for (int i = 0; i < kEntries; ++i) origin.add_file(big, entry_name(i));
    ASSERT_EQ(list(big).size(), static_cast<std::size_t>(kEntries));
    EXPECT_GE(origin.calls(Proc::Readdirplus), 2u);  // the fill itself took several origin pages
    origin.reset_calls();
  }

  /// Pages through `dir` with READDIRPLUS (plus) or READDIR, checking every reply's
  /// limits; `between(page)` runs after each page. Returns how often each name came.
  std::map<std::string, int> page_through(const nfs3::FileHandle& dir, bool plus, std::uint32_t dircount,
                                          std::uint32_t maxcount, const std::function<void(int)>& between = {}) {
    std::map<std::string, int> seen;
    std::uint64_t cookie = 0;
    nfs3::CookieVerf verf{};
    for (int page = 1;; ++page) {
      if (page > 10'000) {
        ADD_FAILURE() << "no eof";
        return seen;
      }
      bool eof = false;
      std::uint64_t last = 0;
      if (plus) {
        auto r = readdirplus(dir, as(0), cookie, verf, dircount, maxcount);
        if (r.status != Status::Ok) {
          ADD_FAILURE() << "READDIRPLUS: " << nfs3::status_name(r.status);
          return seen;
        }
        EXPECT_LE(encoded_size(r), maxcount);
        std::uint32_t info = 0;
        for (const auto& e : r.entries) {
          info += dir_info(e.name);
          ++seen[e.name];
        }
        EXPECT_LE(info, dircount);
        eof = r.eof;
        if (!r.entries.empty()) last = r.entries.back().cookie;
        verf = r.cookieverf;
      } else {
        auto r = readdir(dir, as(0), cookie, verf, maxcount);
        if (r.status != Status::Ok) {
          ADD_FAILURE() << "READDIR: " << nfs3::status_name(r.status);
          return seen;
        }
        EXPECT_LE(encoded_size(r), maxcount);
        for (const auto& e : r.entries) ++seen[e.name];
        eof = r.eof;
        if (!r.entries.empty()) last = r.entries.back().cookie;
        verf = r.cookieverf;
      }
      ++pages;
      if (eof) return seen;
      if (last == 0) {
        ADD_FAILURE() << "an empty page before eof";
        return seen;
      }
      cookie = last;
      if (between) between(page);
    }
  }
  /// Every name of the directory as it was set up, except `except`, came exactly once.
  void expect_each_once(const std::map<std::string, int>& seen, const std::vector<std::string>& except = {}) {
    for (int i = 0; i < kEntries; ++i) {
      const std::string n = entry_name(i);
      if (std::find(except.begin(), except.end(), n) != except.end()) continue;
      auto it = seen.find(n);
      EXPECT_TRUE(it != seen.end() && it->second == 1) << n << " came " << (it == seen.end() ? 0 : it->second);
    }
    for (const char* dot : {".", ".."}) {
      auto it = seen.find(dot);
      EXPECT_TRUE(it != seen.end() && it->second == 1) << dot;
    }
  }

  nfs3::FileHandle big;
  int pages = 0;
};

TEST_F(PagingTest, ReaddirplusServesEveryNameOnceWithinDircountAndMaxcount) {
  auto seen = page_through(big, true, 512, 4096);
  expect_each_once(seen);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kEntries + 2));
  EXPECT_GT(pages, 50);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
}

TEST_F(PagingTest, ReaddirplusWithALargeDircountIsBoundByMaxcount) {
  auto seen = page_through(big, true, 1u << 20, 2048);
  expect_each_once(seen);
  EXPECT_GT(pages, 50);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
}

TEST_F(PagingTest, ReaddirServesEveryNameOnceWithinCount) {
  auto seen = page_through(big, false, 0, 1024);
  expect_each_once(seen);
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kEntries + 2));
  EXPECT_GT(pages, 50);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(PagingTest, ACookieResumesRightAfterItsEntry) {
  auto all = readdir(big);
  ASSERT_EQ(all.status, Status::Ok);
  ASSERT_EQ(all.entries.size(), static_cast<std::size_t>(kEntries + 2));
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{499}, std::size_t{1000}}) {
    auto r = readdir(big, as(0), all.entries[i].cookie, all.cookieverf, 1024);
    ASSERT_EQ(r.status, Status::Ok);
    ASSERT_FALSE(r.entries.empty());
    EXPECT_EQ(r.entries.front().name, all.entries[i + 1].name);
  }
  auto end = readdir(big, as(0), all.entries.back().cookie, all.cookieverf, 1024);
  EXPECT_EQ(end.status, Status::Ok);
  EXPECT_TRUE(end.entries.empty());
  EXPECT_TRUE(end.eof);
}

TEST_F(PagingTest, TooSmallWhenNotOneEntryFits) {
  auto all = readdir(big);
  ASSERT_EQ(all.status, Status::Ok);
  const auto& first = all.entries.front();
  const std::uint32_t one = kReaddirReplyOverhead + 4 + dir_info(first.name);

  auto fits = readdir(big, as(0), 0, {}, one);
  ASSERT_EQ(fits.status, Status::Ok);
  ASSERT_EQ(fits.entries.size(), 1u);
  EXPECT_EQ(encoded_size(fits), one);  // the layer counts bytes exactly
  auto too_small = readdir(big, as(0), 0, {}, one - 1);
  EXPECT_EQ(too_small.status, Status::TooSmall);
  EXPECT_TRUE(too_small.gateway_status) << "made up from the cached listing, not the origin's (gateway/made_up.h)";
  EXPECT_EQ(readdir(big, as(0), 0, {}, 64).status, Status::TooSmall);

  EXPECT_EQ(readdirplus(big, as(0), 0, {}, 65536, 150).status, Status::TooSmall);
  EXPECT_EQ(readdirplus(big, as(0), 0, {}, 8, 65536).status, Status::TooSmall);
  auto plus_one = readdirplus(big, as(0), 0, {}, dir_info(first.name), 65536);
  ASSERT_EQ(plus_one.status, Status::Ok);
  EXPECT_EQ(plus_one.entries.size(), 1u);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(PagingTest, PagingStaysConsistentWhenTheListingIsEditedInPlace) {
  const std::string removed = entry_name(500);
  auto seen = page_through(big, true, 512, 4096, [&](int page) {
    if (page != 10) return;
    ASSERT_EQ(create(big, "zz_created_mid_way").status, Status::Ok);
    ASSERT_EQ(remove(big, removed).status, Status::Ok);
  });
  expect_each_once(seen, {removed});
  EXPECT_LE(seen["zz_created_mid_way"], 1);
  EXPECT_LE(seen[removed], 1);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
}

TEST_F(PagingTest, PagingStaysConsistentWhenTheListingIsRefetched) {
  const std::string removed = entry_name(500);
  auto seen = page_through(big, false, 0, 1024, [&](int page) {
    if (page != 10) return;
    origin.add_file(big, "zz_created_mid_way");
    origin.unlink(big, removed);
    clock.advance(20'000);  // dir_ttl: the next page revalidates and finds the change
  });
  expect_each_once(seen, {removed});
  EXPECT_LE(seen["zz_created_mid_way"], 1);
  EXPECT_LE(seen[removed], 1);
  EXPECT_GE(origin.calls(Proc::Readdirplus), 1u);  // a new listing was filled
}

TEST_F(PagingTest, PagesTheOriginStartedAreContinuedByTheOrigin) {
  const auto mid = origin.add_dir(origin.root(), "mid");
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) origin.add_file(mid, entry_name(i));
  // The first page cannot be served from the cache (the directory's attributes
  // could not be had): the origin answers it, with the origin's cookies.
  origin.fail(Proc::Getattr, 1);
  std::map<std::string, int> seen = page_through(mid, true, 512, 4096);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(seen[entry_name(i)], 1) << entry_name(i);
  EXPECT_EQ(seen["."], 1);
  EXPECT_EQ(seen[".."], 1);
}

}  // namespace
}  // namespace nfsgw::metacache::test
