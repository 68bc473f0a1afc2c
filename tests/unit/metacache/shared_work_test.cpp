// Fetches other callers may join (single flights, background ACCESS) must not
// carry one caller's "gone" flag: the upstream pool abandons calls whose caller has
// left, and the others waiting on the same fetch would get JUKEBOX for it.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

TEST_F(MetaCacheTest, SharedFetchesGoOnWhoeverLeaves) {
  start();
  const auto d = origin.add_dir(origin.root(), "d", 0755, kUser, kUser);
  const auto f = origin.add_file(d, "a.php", 0644, kUser, kUser, "<?php");
  auto ctx = as(kUser);
  auto gone = std::make_shared<CallerGone>();
  ctx.caller_gone = gone.get();

  EXPECT_EQ(getattr(f, ctx).status, Status::Ok);
  EXPECT_EQ(lookup(d, "a.php", ctx).status, Status::Ok);
  EXPECT_EQ(lookup(d, "missing.php", ctx).status, Status::NoEnt);
  EXPECT_EQ(readdirplus(d, ctx).status, Status::Ok);
  settle();
  ASSERT_GT(origin.calls(Proc::Getattr) + origin.calls(Proc::Lookup) + origin.calls(Proc::Access) +
                origin.calls(Proc::Readdirplus),
            0u);
  EXPECT_EQ(origin.abandonable_calls(), 0u);

  // Positive control: a SETATTR is this caller's own and keeps the flag.
  EXPECT_EQ(chmod(f, 0600, ctx).status, Status::Ok);
  EXPECT_EQ(origin.abandonable_calls(), 1u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
