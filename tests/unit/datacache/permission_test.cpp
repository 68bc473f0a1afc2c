// Only a caller the origin lets read the file is served from the cache or joins a
// fetch; everyone else is forwarded and the origin decides.
#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

using PermissionTest = DataCacheTest;
constexpr std::uint32_t kStranger = 2000;

TEST_F(PermissionTest, ACallerWithoutReadIsForwardedAndNeverServedFromTheCache) {
  origin.refuse_read(kStranger);
  start();
  const auto f = origin.add_file(pattern(kBlock), 0600);
  ASSERT_EQ(bytes_of(read(f, 0, 100)), pattern(kBlock).substr(0, 100));  // cached by an allowed caller
  ASSERT_EQ(cached_blocks(), 1u);

  origin.reset_calls();
  auto r = read(f, 0, 100, as(kStranger));
  EXPECT_EQ(r.status, Status::Acces);  // the origin's answer
  EXPECT_TRUE(r.data.empty());
  EXPECT_EQ(origin.calls(Proc::Read), 1u);
  EXPECT_EQ(counts().forwarded, 1u);
  EXPECT_EQ(counts().read_hits, 0u);

  // Positive control: an allowed caller is served from the cache.
  origin.reset_calls();
  EXPECT_EQ(read(f, 0, 100, as(kUser)).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
  EXPECT_EQ(counts().read_hits, 1u);
}

TEST_F(PermissionTest, ACallerWithoutReadNeverJoinsAnotherCallersFetch) {
  origin.refuse_read(kStranger);
  start();
  const auto f = origin.add_file(pattern(kBlock), 0600);
  origin.hold(Proc::Read);
  auto allowed = spawn(read_call(f, 0, 100, as(kUser)));
  pump_until([&] { return origin.held(Proc::Read) == 1; });  // the fetch is out
  auto stranger = spawn(read_call(f, 0, 100, as(kStranger)));
  pump_until([&] { return origin.held(Proc::Read) == 2; });  // its own READ, not the flight
  origin.release(Proc::Read);
  EXPECT_EQ(wait(allowed).status, Status::Ok);
  auto r = wait(stranger);
  EXPECT_EQ(r.status, Status::Acces);
  EXPECT_TRUE(r.data.empty());
  EXPECT_EQ(origin.calls(Proc::Read), 2u);
}

TEST_F(PermissionTest, AnAccessThatFailsSendsTheReadToTheOrigin) {
  start();
  const auto f = origin.add_file(pattern(kBlock));
  origin.fail(Proc::Access, 1, Status::Jukebox, true);
  auto r = read(f, 0, 100);
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_EQ(counts().forwarded, 1u);
  EXPECT_EQ(cached_blocks(), 0u);
}

}  // namespace
}  // namespace nfsgw::datacache::test
