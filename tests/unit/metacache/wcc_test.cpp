// Changes through the layer: when a directory's WCC pre-op attributes match the
// cached ones, its listing and lookups are edited in place (no refetch, and the
// change is seen at once); when they do not (the directory changed behind the
// gateway's back first), they are dropped and fetched again.
//
// The tree belongs to the caller and access_check is "local", so that permission
// is known from the mode bits and every call counted here is about the entries.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class WccTest : public MetaCacheTest {
 protected:
  void SetUp() override {
    settings.access_check = cache::AccessCheck::Local;
    start();
    d1 = origin.add_dir(origin.root(), "d1", 0755, kUser, kUser);
    d2 = origin.add_dir(origin.root(), "d2", 0755, kUser, kUser);
    a = origin.add_file(d1, "a", 0644, kUser, kUser);
    b = origin.add_file(d1, "b", 0644, kUser, kUser);
    c = origin.add_file(d2, "c", 0644, kUser, kUser);
    sub = origin.add_dir(d1, "sub", 0755, kUser, kUser);
    ASSERT_EQ(names(d1), (std::vector<std::string>{"a", "b", "sub"}));
    ASSERT_EQ(names(d2), std::vector<std::string>{"c"});
    ASSERT_EQ(names(sub), std::vector<std::string>{});
    // Warm: served without the origin from here on.
    origin.reset_calls();
    ASSERT_EQ(lookup(d1, "a", me).object, a);
    ASSERT_EQ(names(d1), (std::vector<std::string>{"a", "b", "sub"}));
    ASSERT_EQ(origin.total_calls(), 0u);
  }

  std::vector<std::string> names(const nfs3::FileHandle& dir) { return sorted(list(dir, me)); }
  /// The cached view agrees with the origin, and cost no READDIRPLUS or LOOKUP.
  void expect_served_in_place(const nfs3::FileHandle& dir) {
    origin.reset_calls();
    EXPECT_EQ(names(dir), origin.names(dir));
    for (const auto& n : origin.names(dir)) {
      auto r = lookup(dir, n, me);
      EXPECT_EQ(r.status, Status::Ok) << n;
      EXPECT_EQ(r.object, origin.at(path_of(dir) + "/" + n)) << n;
    }
    EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
    EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
  }
  std::string path_of(const nfs3::FileHandle& dir) {
    if (dir == d1) return "d1";
    if (dir == d2) return "d2";
    return "d1/sub";
  }
  void expect_absent(const nfs3::FileHandle& dir, const std::string& name) {
    const std::size_t before = origin.calls(Proc::Lookup);
    EXPECT_EQ(lookup(dir, name, me).status, Status::NoEnt) << name;
    EXPECT_EQ(origin.calls(Proc::Lookup), before) << name;
  }

  const CallContext me = as(kUser);
  nfs3::FileHandle d1, d2, a, b, c, sub;
};

// ---- pre-op matches: edited in place ---------------------------------------------------

TEST_F(WccTest, CreateAddsTheEntryInPlace) {
  auto r = create(d1, "new", me);
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(origin.total_calls(), 1u);
  origin.reset_calls();
  auto found = lookup(d1, "new", me);
  ASSERT_EQ(found.status, Status::Ok);
  EXPECT_EQ(found.object, *r.obj);
  EXPECT_EQ(names(d1), (std::vector<std::string>{"a", "b", "new", "sub"}));
  EXPECT_EQ(origin.total_calls(), 0u);
  expect_served_in_place(d1);
}

TEST_F(WccTest, MkdirAddsTheEntryInPlace) {
  auto r = mkdir(d1, "newdir", me);
  ASSERT_EQ(r.status, Status::Ok);
  expect_served_in_place(d1);
  EXPECT_EQ(lookup(d1, "newdir", me).object, *r.obj);
  EXPECT_EQ(names(*r.obj), std::vector<std::string>{});
}

TEST_F(WccTest, RemoveDropsTheEntryInPlace) {
  ASSERT_EQ(remove(d1, "a", me).status, Status::Ok);
  expect_served_in_place(d1);
  expect_absent(d1, "a");
  EXPECT_EQ(names(d1), (std::vector<std::string>{"b", "sub"}));
}

TEST_F(WccTest, RmdirDropsTheEntryInPlace) {
  ASSERT_EQ(rmdir(d1, "sub", me).status, Status::Ok);
  expect_served_in_place(d1);
  expect_absent(d1, "sub");
  EXPECT_EQ(getattr(sub).status, Status::Stale);  // its own entries went with it
}

TEST_F(WccTest, RenameInOneDirectoryMovesTheEntryInPlace) {
  ASSERT_EQ(rename(d1, "a", d1, "z", me).status, Status::Ok);
  expect_served_in_place(d1);
  expect_absent(d1, "a");
  EXPECT_EQ(lookup(d1, "z", me).object, a);
  EXPECT_EQ(names(d1), (std::vector<std::string>{"b", "sub", "z"}));
}

TEST_F(WccTest, RenameOverAnExistingNameReplacesItInPlace) {
  ASSERT_EQ(rename(d1, "a", d1, "b", me).status, Status::Ok);
  expect_served_in_place(d1);
  EXPECT_EQ(lookup(d1, "b", me).object, a);
  EXPECT_EQ(names(d1), (std::vector<std::string>{"b", "sub"}));
  EXPECT_EQ(getattr(b).status, Status::Stale);
}

TEST_F(WccTest, RenameAcrossDirectoriesMovesTheEntryInPlace) {
  ASSERT_EQ(rename(d1, "a", d2, "a2", me).status, Status::Ok);
  expect_served_in_place(d1);
  expect_served_in_place(d2);
  expect_absent(d1, "a");
  EXPECT_EQ(lookup(d2, "a2", me).object, a);
  EXPECT_EQ(names(d2), (std::vector<std::string>{"a2", "c"}));
}

TEST_F(WccTest, RenameOfADirectoryAcrossDirectoriesMovesItsDotDot) {
  ASSERT_EQ(rename(d1, "sub", d2, "sub", me).status, Status::Ok);
  expect_served_in_place(d1);
  expect_served_in_place(d2);
  EXPECT_EQ(lookup(sub, "..", me).object, d2);
}

TEST_F(WccTest, LinkAddsTheEntryInPlace) {
  auto r = link(a, d2, "hard", me);
  ASSERT_EQ(r.status, Status::Ok);
  expect_served_in_place(d2);
  EXPECT_EQ(lookup(d2, "hard", me).object, a);
  auto attr = getattr(a, me);
  EXPECT_EQ(attr.attributes.nlink, 2u);
}

TEST_F(WccTest, InPlaceEditsAlsoServeReaddir) {
  ASSERT_EQ(create(d1, "new", me).status, Status::Ok);
  ASSERT_EQ(remove(d1, "b", me).status, Status::Ok);
  origin.reset_calls();
  auto r = readdir(d1, me);
  ASSERT_EQ(r.status, Status::Ok);
  std::vector<std::string> got;
  for (const auto& e : r.entries)
    if (e.name != "." && e.name != "..") got.push_back(e.name);
  EXPECT_EQ(sorted(got), (std::vector<std::string>{"a", "new", "sub"}));
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(WccTest, WriteAndSetattrTeachTheNewAttributes) {
  ASSERT_EQ(write(a, 0, "hello", me).status, Status::Ok);
  origin.reset_calls();
  EXPECT_EQ(getattr(a, me).attributes.size, 5u);
  EXPECT_EQ(origin.total_calls(), 0u);
  ASSERT_EQ(chmod(a, 0600, me).status, Status::Ok);
  origin.reset_calls();
  EXPECT_EQ(getattr(a, me).attributes.mode, 0600u);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(WccTest, ChangesInPlaceUnderOriginAccessCheckNeedNoRefetch) {
  // Another layer, as root under access_check = "origin": permission answers are
  // asked again after a change (the directory's stamp moved), the listing is not.
  settings.access_check = cache::AccessCheck::Origin;
  close_layer();
  start();
  ASSERT_EQ(list(d1), (std::vector<std::string>{"a", "b", "sub"}));
  ASSERT_EQ(create(d1, "new").status, Status::Ok);
  ASSERT_EQ(remove(d1, "a").status, Status::Ok);
  origin.reset_calls();
  EXPECT_EQ(sorted(list(d1)), (std::vector<std::string>{"b", "new", "sub"}));
  EXPECT_EQ(lookup(d1, "new").status, Status::Ok);
  EXPECT_EQ(lookup(d1, "a").status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 0u);
}

// ---- pre-op does not match: dropped -------------------------------------------------

TEST_F(WccTest, CreateAfterAChangeBehindTheBackDropsTheListing) {
  origin.add_file(d1, "behind");
  ASSERT_EQ(create(d1, "new", me).status, Status::Ok);
  origin.reset_calls();
  EXPECT_EQ(lookup(d1, "behind", me).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(lookup(d1, "a", me).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 2u);  // even names that did not change
  EXPECT_EQ(names(d1), (std::vector<std::string>{"a", "b", "behind", "new", "sub"}));
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
}

TEST_F(WccTest, RemoveAfterAChangeBehindTheBackDropsTheListing) {
  origin.unlink(d1, "b");
  ASSERT_EQ(remove(d1, "a", me).status, Status::Ok);
  origin.reset_calls();
  EXPECT_EQ(lookup(d1, "b", me).status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(names(d1), std::vector<std::string>{"sub"});
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
}

TEST_F(WccTest, RenameDropsOnlyTheDirectoryChangedBehindTheBack) {
  origin.add_file(d2, "behind");
  ASSERT_EQ(rename(d1, "a", d2, "a2", me).status, Status::Ok);
  expect_served_in_place(d1);  // d1's pre-op matched
  origin.reset_calls();
  EXPECT_EQ(lookup(d2, "c", me).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(names(d2), (std::vector<std::string>{"a2", "behind", "c"}));
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
}

TEST_F(WccTest, LinkAfterAChangeBehindTheBackDropsTheListing) {
  origin.unlink(d2, "c");
  ASSERT_EQ(link(a, d2, "hard", me).status, Status::Ok);
  origin.reset_calls();
  EXPECT_EQ(lookup(d2, "c", me).status, Status::NoEnt);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(names(d2), std::vector<std::string>{"hard"});
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
}

TEST_F(WccTest, AFailedCallStillTeachesTheDirectorysChange) {
  origin.add_file(d1, "behind");
  EXPECT_EQ(create(d1, "a", me).status, Status::Exist);  // WCC data comes with the failure
  origin.reset_calls();
  EXPECT_EQ(names(d1), (std::vector<std::string>{"a", "b", "behind", "sub"}));
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
