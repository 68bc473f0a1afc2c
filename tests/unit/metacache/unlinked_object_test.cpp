// The object a REMOVE or RENAME unlinks is the origin's, not the cache's: a name
// given to another object on the origin inside the window must not leave that
// object's attributes (its link count, its ctime) older than the change made
// through nfsgw. Found by nfsgw-difftest (docs/difftest.md); an immutable export,
// whose tree changes only through nfsgw, keeps trusting its cached lookup.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class UnlinkedObject : public MetaCacheTest {
 protected:
  /// d/f cached as one file; then, on the origin, f becomes a second name of d/a.
  void name_reused_behind_the_cache() {
    settings.access_check = cache::AccessCheck::Local;
    settings.attr_ttl = settings.dir_ttl = 1h;
    start();
    d = origin.add_dir(origin.root(), "d");
    origin.add_file(d, "f", 0644);
    a = origin.add_file(d, "a", 0644);
    ASSERT_EQ(lookup(d, "f").status, Status::Ok);
    ASSERT_EQ(getattr(a).attributes.nlink, 1u);
    origin.unlink(d, "f");
    run(invoke(origin, &Nfs3Program::link, as(0), nfs3::LinkArgs{a, {d, "f"}}));
    origin.reset_calls();
  }
  nfs3::FileHandle d, a;
};

TEST_F(UnlinkedObject, RemovingANameTheOriginGaveAnotherObjectLeavesNoStaleAttributes) {
  name_reused_behind_the_cache();
  ASSERT_EQ(remove(d, "f").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);  // the object behind the name, asked first
  const auto now = getattr(a);
  EXPECT_EQ(now.attributes.nlink, 1u);
  EXPECT_EQ(now.attributes.ctime, origin.attributes(a).ctime);
}

TEST_F(UnlinkedObject, RenamingOverANameTheOriginGaveAnotherObjectLeavesNoStaleAttributes) {
  name_reused_behind_the_cache();
  origin.add_file(d, "tmp", 0644);
  ASSERT_EQ(rename(d, "tmp", d, "f").status, Status::Ok);
  const auto now = getattr(a);
  EXPECT_EQ(now.attributes.nlink, 1u);
  EXPECT_EQ(now.attributes.ctime, origin.attributes(a).ctime);
}

TEST_F(UnlinkedObject, AnImmutableExportTrustsItsCachedLookup) {
  settings.consistency = cache::Consistency::Immutable;
  name_reused_behind_the_cache();
  ASSERT_EQ(remove(d, "f").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
