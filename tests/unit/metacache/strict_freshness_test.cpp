// Strict answers are no older than the call: a strict GETATTR or LOOKUP never
// joins an origin call that was sent before it arrived (that call may have been
// answered before a change the new caller already saw acknowledged), and a
// strict LOOKUP hit carries no cached attributes of the child.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class StrictFreshness : public MetaCacheTest {
 protected:
  /// Two GETATTRs of `f`, the second sent after the origin changed `f` while the
  /// first one's reply was on its way; returns the mode each answered.
  std::pair<std::uint32_t, std::uint32_t> crossing_getattrs(const nfs3::FileHandle& f) {
    origin.hold(Proc::Getattr);
    auto first = spawn(invoke(*layer, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f}));
    pump_until([&] { return origin.held(Proc::Getattr) == 1; });  // answered 0644, not yet delivered
    origin.chmod(f, 0600);
    auto second = spawn(invoke(*layer, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f}));
    settle();
    origin.release(Proc::Getattr);
    const auto a = wait(first).attributes.mode;
    const auto b = wait(second).attributes.mode;
    return {a, b};
  }
};

TEST_F(StrictFreshness, AStrictGetattrJoinsNoEarlierOriginCall) {
  settings.consistency = cache::Consistency::Strict;
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644);
  const auto [first, second] = crossing_getattrs(f);
  EXPECT_EQ(first, 0644u);
  EXPECT_EQ(second, 0600u) << "the second GETATTR was answered with the first one's reply";
  EXPECT_EQ(origin.calls(Proc::Getattr), 2u);
}

TEST_F(StrictFreshness, ControlUnderTtlTheSecondGetattrJoinsTheFirst) {
  start();  // ttl: sharing the fetch is the point there
  const auto f = origin.add_file(origin.root(), "f", 0644);
  const auto [first, second] = crossing_getattrs(f);
  EXPECT_EQ(first, 0644u);
  EXPECT_EQ(second, 0644u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
}

TEST_F(StrictFreshness, ACachedStrictLookupCarriesNoCachedChildAttributes) {
  settings.consistency = cache::Consistency::Strict;
  settings.access_check = cache::AccessCheck::Local;
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "f", 0644);
  ASSERT_EQ(lookup(d, "f").status, Status::Ok);
  origin.append(f);
  origin.chmod(f, 0600);
  origin.reset_calls();
  const auto r = lookup(d, "f");
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u) << "not a hit: the test checks nothing";
  if (r.obj_attributes) {
    EXPECT_EQ(r.obj_attributes->mode, 0600u);
    EXPECT_EQ(r.obj_attributes->size, origin.attributes(f).size);
  }
}

}  // namespace
}  // namespace nfsgw::metacache::test
