// The coherency windows: ttl (attr_ttl, dir_ttl, negative_ttl), strict and
// immutable exports, and `nfsgw invalidate`.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

constexpr std::uint32_t kAll = nfs3::access::Read | nfs3::access::Lookup | nfs3::access::Modify |
                               nfs3::access::Extend | nfs3::access::Delete | nfs3::access::Execute;

// ---- ttl ------------------------------------------------------------------------------

using TtlTest = MetaCacheTest;

TEST_F(TtlTest, GetattrInsideTheWindowNeedsNoOriginCallAndOneGetattrRenewsIt) {
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644, 0, 0, "abc");
  auto r = getattr(f);
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(r.attributes.size, 3u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);  // a cold entry costs a call

  clock.advance(9'999);  // attr_ttl is 10 s
  EXPECT_EQ(getattr(f).attributes, r.attributes);
  EXPECT_EQ(origin.total_calls(), 1u);

  clock.advance(1);  // the window is over
  EXPECT_EQ(getattr(f).attributes, r.attributes);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
  EXPECT_EQ(origin.total_calls(), 2u);
  EXPECT_EQ(layer->counters().get(Proc::Getattr).revalidations, 1u);

  clock.advance(9'999);  // renewed from the revalidation
  EXPECT_EQ(getattr(f).attributes, r.attributes);
  EXPECT_EQ(origin.total_calls(), 2u);
  const auto c = layer->counters().get(Proc::Getattr);
  EXPECT_EQ(c.calls, 4u);
  EXPECT_EQ(c.hits, 2u);
  EXPECT_EQ(c.misses, 2u);
}

TEST_F(TtlTest, AChangedFileIsSeenAfterTheWindowAndIsNoRevalidation) {
  start();
  const auto f = origin.add_file(origin.root(), "f");
  EXPECT_EQ(getattr(f).attributes.size, 0u);
  origin.append(f);
  EXPECT_EQ(getattr(f).attributes.size, 0u);  // inside the window: the cached answer
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  clock.advance(10'000);
  EXPECT_EQ(getattr(f).attributes.size, 1u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
  EXPECT_EQ(layer->counters().get(Proc::Getattr).revalidations, 0u);
}

TEST_F(TtlTest, AZeroWindowAsksEveryTime) {
  settings.attr_ttl = 0s;
  start();
  const auto f = origin.add_file(origin.root(), "f");
  for (std::size_t i = 1; i <= 3; ++i) {
    ASSERT_EQ(getattr(f).status, Status::Ok);
    EXPECT_EQ(origin.calls(Proc::Getattr), i);
  }
}

TEST_F(TtlTest, AccessAnswersLastAccessTtl) {
  settings.access_ttl = 30s;
  settings.dir_ttl = 60s;
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  origin.add_file(d, "f");
  ASSERT_EQ(lookup(d, "f").status, Status::Ok);
  ASSERT_EQ(access(d, nfs3::access::Lookup, as(kUser)).access, nfs3::access::Lookup);
  origin.reset_calls();
  clock.advance(29'999);
  EXPECT_EQ(access(d, nfs3::access::Lookup, as(kUser)).access, nfs3::access::Lookup);
  EXPECT_EQ(lookup(d, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Access), 0u);
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
  clock.advance(1);
  EXPECT_EQ(lookup(d, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);  // the permission is no longer known
  EXPECT_EQ(access(d, nfs3::access::Lookup, as(kUser)).access, nfs3::access::Lookup);
  EXPECT_EQ(origin.calls(Proc::Access), 1u);  // learnt again (by the LOOKUP, in the background)
}

TEST_F(TtlTest, ALookupWhoseChildsWindowEndedIsAHitAfterOneGetattr) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "f");
  ASSERT_EQ(access(d, nfs3::access::Lookup).status, Status::Ok);
  const auto first = lookup(d, "f");
  ASSERT_EQ(first.status, Status::Ok);
  clock.advance(10'000);  // attr_ttl is over for "f", dir_ttl (20 s) not for "d"
  origin.reset_calls();
  const auto before = layer->counters().get(Proc::Lookup);
  const nfs3::LookupArgs args{nfs3::DirOpArgs{d, "f"}};
  ASSERT_FALSE(layer->lookup_now(as(0), args));  // the coroutine's work

  const auto again = lookup(d, "f");
  EXPECT_EQ(again.object, f);
  EXPECT_EQ(again.obj_attributes, first.obj_attributes);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  EXPECT_EQ(origin.total_calls(), 1u);
  const auto c = layer->counters().get(Proc::Lookup);
  EXPECT_EQ(c.calls, before.calls + 1);
  EXPECT_EQ(c.hits, before.hits + 1);
  EXPECT_EQ(c.misses, before.misses);
  EXPECT_EQ(c.revalidations, before.revalidations + 1);
  EXPECT_EQ(c.origin_calls, before.origin_calls + 1);
  EXPECT_TRUE(layer->lookup_now(as(0), args));  // renewed
}

TEST_F(TtlTest, AZeroWindowStillAnswersLookupAndAccessWithTheGetattrOfTheCall) {
  settings.attr_ttl = 0s;
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "f");
  ASSERT_EQ(access(d, nfs3::access::Lookup).status, Status::Ok);
  ASSERT_EQ(access(f, nfs3::access::Read).status, Status::Ok);
  ASSERT_EQ(lookup(d, "f").status, Status::Ok);
  origin.reset_calls();
  // The attributes the origin gave during the call serve it, whatever the window.
  EXPECT_EQ(lookup(d, "f").object, f);
  EXPECT_EQ(access(f, nfs3::access::Read).access, nfs3::access::Read);
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
  EXPECT_EQ(origin.total_calls(), 2u);
  EXPECT_EQ(layer->counters().get(Proc::Lookup).misses, 1u);  // only the first
  EXPECT_EQ(layer->counters().get(Proc::Access).hits, 1u);
}

class TtlDirTest : public MetaCacheTest {
 protected:
  void SetUp() override {
    start();
    dir = origin.add_dir(origin.root(), "d");
    origin.add_file(dir, "a");
    origin.add_file(dir, "b");
    EXPECT_EQ(list(dir), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
    // A name that is not cached costs a LOOKUP: the counter sees it.
    EXPECT_EQ(lookup(dir, "c").status, Status::NoEnt);
    EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
    // Filled from the listing: no LOOKUP, no READDIRPLUS.
    origin.reset_calls();
    a = lookup(dir, "a");
    ASSERT_EQ(a.status, Status::Ok);
    EXPECT_EQ(list(dir), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(origin.total_calls(), 0u);
  }
  nfs3::FileHandle dir;
  nfs3::LookupRes a;
};

TEST_F(TtlDirTest, ADirectoryRevalidatedUnchangedKeepsItsListingAndLookups) {
  clock.advance(20'000);  // dir_ttl (and attr_ttl of the files) over
  auto again = lookup(dir, "a");
  ASSERT_EQ(again.status, Status::Ok);
  EXPECT_EQ(again.object, a.object);
  EXPECT_EQ(list(dir), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
  EXPECT_GE(origin.calls(Proc::Getattr), 1u);  // the revalidation itself
  EXPECT_EQ(layer->counters().get(Proc::Lookup).revalidations, 2u);  // the directory and "a"
}

TEST_F(TtlDirTest, ADirectoryChangedBehindTheBackDropsItsListingAndLookups) {
  origin.add_file(dir, "new");
  origin.unlink(dir, "a");
  // Inside the window the cache still answers (and so the change is not seen yet).
  EXPECT_EQ(lookup(dir, "a").status, Status::Ok);
  EXPECT_EQ(origin.total_calls(), 0u);

  clock.advance(20'000);
  EXPECT_EQ(lookup(dir, "a").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  auto n = lookup(dir, "new");
  ASSERT_EQ(n.status, Status::Ok);
  EXPECT_EQ(n.object, origin.at("d/new"));
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);
  EXPECT_EQ(list(dir), (std::vector<std::string>{"b", "new"}));
  EXPECT_GE(origin.calls(Proc::Readdirplus), 1u);
}

struct TtlCase {
  std::int64_t attr_s, dir_s;
};

class TtlKindTest : public MetaCacheTest, public ::testing::WithParamInterface<TtlCase> {};

TEST_P(TtlKindTest, DirTtlAppliesToDirectoriesAndAttrTtlToEverythingElse) {
  settings.attr_ttl = std::chrono::seconds(GetParam().attr_s);
  settings.dir_ttl = std::chrono::seconds(GetParam().dir_s);
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(origin.root(), "f");
  const auto l = origin.add_symlink(origin.root(), "l", "f");
  for (const auto& fh : {d, f, l}) ASSERT_EQ(getattr(fh).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Getattr), 3u);

  const bool dirs_shorter = GetParam().dir_s < GetParam().attr_s;
  const std::int64_t shorter = std::min(GetParam().attr_s, GetParam().dir_s) * 1000;
  const std::int64_t longer = std::max(GetParam().attr_s, GetParam().dir_s) * 1000;
  const std::vector<nfs3::FileHandle> dirs{d}, others{f, l};
  const auto& short_kind = dirs_shorter ? dirs : others;
  const auto& long_kind = dirs_shorter ? others : dirs;
  auto getattrs = [&](const std::vector<nfs3::FileHandle>& fhs) {
    origin.reset_calls();
    for (const auto& fh : fhs) EXPECT_EQ(getattr(fh).status, Status::Ok);
    return origin.calls(Proc::Getattr);
  };
  clock.advance(shorter - 1);
  EXPECT_EQ(getattrs({d, f, l}), 0u);
  clock.advance(1);
  EXPECT_EQ(getattrs(long_kind), 0u);
  EXPECT_EQ(getattrs(short_kind), short_kind.size());
  clock.advance(longer - shorter - 1);
  EXPECT_EQ(getattrs(long_kind), 0u);
  clock.advance(1);
  EXPECT_EQ(getattrs(long_kind), long_kind.size());
}

INSTANTIATE_TEST_SUITE_P(Windows, TtlKindTest, ::testing::Values(TtlCase{5, 60}, TtlCase{60, 5}));

// ---- negative entries -----------------------------------------------------------------

using NegativeTest = MetaCacheTest;

TEST_F(NegativeTest, AMissingNameCostsOneLookupUntilNegativeTtlEnds) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  ASSERT_EQ(access(d, kAll).status, Status::Ok);  // as clients do before walking
  const std::size_t getattrs = origin.calls(Proc::Getattr);
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  auto again = lookup(d, "missing");
  EXPECT_EQ(again.status, Status::NoEnt);
  EXPECT_TRUE(again.dir_attributes.has_value());
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);

  clock.advance(4'999);  // negative_ttl is 5 s, dir_ttl 20 s
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  clock.advance(1);
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);
  EXPECT_EQ(origin.calls(Proc::Getattr), getattrs);  // the directory is still inside dir_ttl
}

TEST_F(NegativeTest, AfterNegativeTtlANameCreatedBehindTheBackIsFound) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  access(d, kAll);
  EXPECT_EQ(lookup(d, "late").status, Status::NoEnt);
  origin.add_file(d, "late");
  EXPECT_EQ(lookup(d, "late").status, Status::NoEnt);  // still inside negative_ttl
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  clock.advance(5'000);
  EXPECT_EQ(lookup(d, "late").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);
}

TEST_F(NegativeTest, ACreateThroughTheLayerReplacesTheNegativeEntryAtOnce) {
  settings.access_check = cache::AccessCheck::Local;
  start();
  const auto d = origin.add_dir(origin.root(), "d", 0755, kUser, kUser);
  EXPECT_EQ(lookup(d, "x", as(kUser)).status, Status::NoEnt);
  EXPECT_EQ(lookup(d, "x", as(kUser)).status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);  // the negative entry is served
  auto c = create(d, "x", as(kUser));
  ASSERT_EQ(c.status, Status::Ok);
  origin.reset_calls();
  auto found = lookup(d, "x", as(kUser));
  ASSERT_EQ(found.status, Status::Ok);
  EXPECT_EQ(found.object, *c.obj);
  ASSERT_TRUE(found.obj_attributes.has_value());
  EXPECT_EQ(found.obj_attributes->fileid, c.obj_attributes->fileid);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(NegativeTest, ACreateThroughTheLayerIsSeenAtOnceUnderOriginAccessCheck) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  access(d, kAll);
  EXPECT_EQ(lookup(d, "x").status, Status::NoEnt);
  EXPECT_EQ(lookup(d, "x").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  auto c = create(d, "x");
  ASSERT_EQ(c.status, Status::Ok);
  auto found = lookup(d, "x");
  ASSERT_EQ(found.status, Status::Ok);
  EXPECT_EQ(found.object, *c.obj);
}

TEST_F(NegativeTest, ANegativeEntryGoesOnlyToACallerWhosePermissionIsKnown) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  // The first miss goes to the origin, and root's right to search d (not known
  // yet) is learnt meanwhile with one ACCESS: only then is the entry served.
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(origin.calls(Proc::Access), 1u);
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(lookup(d, "missing").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
}

// ---- strict ---------------------------------------------------------------------------

class StrictTest : public MetaCacheTest {
 protected:
  void SetUp() override {
    settings.consistency = cache::Consistency::Strict;
    start();
    dir = origin.add_dir(origin.root(), "d");
    file = origin.add_file(dir, "a");
    ASSERT_EQ(access(dir, nfs3::access::Read | nfs3::access::Lookup).status, Status::Ok);
  }
  nfs3::FileHandle dir, file;
};

TEST_F(StrictTest, EveryGetattrGoesToTheOrigin) {
  for (int i = 1; i <= 3; ++i) {
    ASSERT_EQ(getattr(file).status, Status::Ok);
    EXPECT_EQ(origin.calls(Proc::Getattr), static_cast<std::size_t>(i));
  }
  origin.append(file);
  EXPECT_EQ(getattr(file).attributes.size, 1u);
}

TEST_F(StrictTest, ACachedLookupIsReusedWhileTheDirectoryIsUnchanged) {
  auto first = lookup(dir, "a");
  ASSERT_EQ(first.status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  origin.reset_calls();
  auto second = lookup(dir, "a");
  ASSERT_EQ(second.status, Status::Ok);
  EXPECT_EQ(second.object, first.object);
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);  // the directory's, every time

  origin.add_file(dir, "b");
  EXPECT_EQ(lookup(dir, "a").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(lookup(dir, "b").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);
}

TEST_F(StrictTest, ACachedListingIsReusedWhileTheDirectoryIsUnchanged) {
  EXPECT_EQ(list(dir), std::vector<std::string>{"a"});
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
  origin.reset_calls();
  auto page = readdirplus(dir);
  ASSERT_EQ(page.status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  for (const auto& e : page.entries) EXPECT_FALSE(e.name_attributes.has_value()) << e.name;

  origin.add_file(dir, "b");
  EXPECT_EQ(list(dir), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
}

TEST_F(StrictTest, AccessAlwaysAsksTheOrigin) {
  for (std::size_t i = 1; i <= 2; ++i) {
    EXPECT_EQ(access(dir, nfs3::access::Lookup).access, nfs3::access::Lookup);
    EXPECT_EQ(origin.calls(Proc::Access), 1 + i);  // one more than SetUp's
  }
}

TEST_F(StrictTest, ALinkTargetIsReusedWhileTheLinkIsUnchanged) {
  const auto l = origin.add_symlink(dir, "l", "a");
  ASSERT_EQ(access(l, nfs3::access::Read).status, Status::Ok);
  EXPECT_EQ(readlink(l).data, "a");
  origin.reset_calls();
  EXPECT_EQ(readlink(l).data, "a");
  EXPECT_EQ(origin.calls(Proc::Readlink), 0u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  origin.set_link_target(l, "elsewhere");
  EXPECT_EQ(readlink(l).data, "elsewhere");
  EXPECT_EQ(origin.calls(Proc::Readlink), 1u);
}

// ---- immutable ------------------------------------------------------------------------

class ImmutableTest : public MetaCacheTest {
 protected:
  void SetUp() override {
    settings.consistency = cache::Consistency::Immutable;
    start();
    dir = origin.add_dir(origin.root(), "d");
    file = origin.add_file(dir, "f", 0644, 0, 0, "v1");
    link = origin.add_symlink(dir, "l", "f");
    access(dir, kAll);
    access(link, kAll);
    ASSERT_EQ(lookup(origin.root(), "d").status, Status::Ok);
    ASSERT_EQ(list(dir), (std::vector<std::string>{"f", "l"}));
    ASSERT_EQ(readlink(link).data, "f");
    ASSERT_EQ(getattr(file).attributes.size, 2u);
    ASSERT_EQ(lookup(dir, "new").status, Status::NoEnt);
    ASSERT_GT(origin.total_calls(), 0u);
    origin.reset_calls();
  }
  void expect_old_view() {
    EXPECT_EQ(getattr(file).attributes.size, 2u);
    EXPECT_EQ(lookup(dir, "f").object, file);
    EXPECT_EQ(lookup(dir, "new").status, Status::NoEnt);
    EXPECT_EQ(list(dir), (std::vector<std::string>{"f", "l"}));
    EXPECT_EQ(readlink(link).data, "f");
  }
  nfs3::FileHandle dir, file, link;
};

TEST_F(ImmutableTest, NeverRevalidatedHoweverFarTheClockMoves) {
  origin.add_file(dir, "new");
  origin.append(file);
  origin.set_link_target(link, "elsewhere");
  clock.advance(10LL * 365 * 24 * 3600 * 1000);
  expect_old_view();
  EXPECT_EQ(origin.total_calls(), 0u);
  clock.advance(10LL * 365 * 24 * 3600 * 1000);
  expect_old_view();
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(ImmutableTest, InvalidateDropsAnObjectAndThenTheChangeIsSeen) {
  origin.add_file(dir, "new");
  origin.append(file);
  expect_old_view();
  origin.reset_calls();
  EXPECT_EQ(layer->invalidate(origin.root(), {"d", "nope"}, false), std::nullopt);
  auto dropped = layer->invalidate(origin.root(), {"d"}, false);
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(*dropped, 1u);
  EXPECT_EQ(getattr(file).attributes.size, 2u);  // not below d: kept
  EXPECT_EQ(origin.total_calls(), 0u);
  EXPECT_EQ(list(dir), (std::vector<std::string>{"f", "l", "new"}));
  EXPECT_GE(origin.calls(Proc::Readdirplus), 1u);
}

TEST_F(ImmutableTest, RecursiveInvalidateDropsWhatIsBelow) {
  origin.append(file);
  origin.set_link_target(link, "elsewhere");
  auto dropped = layer->invalidate(origin.root(), {"d"}, true);
  ASSERT_TRUE(dropped.has_value());
  EXPECT_EQ(*dropped, 3u);  // d, f, l
  EXPECT_EQ(getattr(file).attributes.size, 3u);
  EXPECT_EQ(readlink(link).data, "elsewhere");
  EXPECT_GE(origin.calls(Proc::Getattr), 1u);
  EXPECT_EQ(origin.calls(Proc::Readlink), 1u);
}

TEST_F(ImmutableTest, InvalidatingTheWholeExportDropsEverything) {
  origin.append(file);
  origin.add_file(dir, "new");
  ASSERT_TRUE(layer->invalidate(origin.root(), {}, true).has_value());
  EXPECT_EQ(getattr(file).attributes.size, 3u);
  EXPECT_EQ(lookup(dir, "new").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
