// The origin going away: calls wait for it like on a hard mount, idempotent calls
// are re-sent after a reconnect, non-idempotent ones caught by a dying connection
// answer JUKEBOX, and an origin that is down at start-up fails nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tests/upstream/origin_fixture.h"
#include "tests/upstream/test_util.h"

namespace nfsgw::upstream::test {
namespace {

using namespace std::chrono_literals;

/// Whatever happens in a test, the next one finds the origin running.
struct OriginBackOnExit {
  ~OriginBackOnExit() {
    try {
      Origin::get().start();
    } catch (...) {
    }
  }
};

TEST(OutageTest, GetattrIssuedDuringOutageCompletesAfterRestart) {
  OriginBackOnExit guard;
  const std::string dir = fresh_dir("outage");
  std::ofstream(dir + "/f") << "12345";
  ForwarderHarness h(2);
  const auto fh = h.lookup_path("outage/f");

  Origin::get().stop();
  auto fut = h.spawn(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{fh});
  // With the origin gone nothing can answer it (success or failure would be wrong).
  EXPECT_EQ(fut.wait_for(1500ms), std::future_status::timeout);

  Origin::get().start();
  ASSERT_EQ(fut.wait_for(kWait), std::future_status::ready);
  auto res = fut.future.get();
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  expect_matches_stat(res.attributes, dir + "/f");
  EXPECT_EQ(res.attributes.size, 5u);
}

TEST(OutageTest, LostConnectionResendsIdempotentAndJukeboxesTheRest) {
  OriginBackOnExit guard;
  const std::string dir = fresh_dir("lost");
  std::ofstream(dir + "/f") << "abc";
  ForwarderHarness h(1);  // one connection: both calls are in flight on it
  const auto dfh = h.lookup_path("lost");
  const auto ffh = h.lookup_path("lost/f");

  Origin::get().freeze();  // connection stays up, nothing is answered
  nfs3::MkdirArgs md;
  md.where = {dfh, "never"};
  auto mkdir = h.spawn(&Forwarder::mkdir, as_root(), md);
  auto getattr = h.spawn(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{ffh});
  EXPECT_EQ(mkdir.wait_for(1000ms), std::future_status::timeout);
  EXPECT_EQ(getattr.wait_for(0ms), std::future_status::timeout);

  Origin::get().kill_hard();  // the connection dies with both calls sent, unanswered
  ASSERT_EQ(mkdir.wait_for(kWait), std::future_status::ready);
  const auto lost = mkdir.future.get();
  EXPECT_EQ(lost.status, nfs3::Status::Jukebox);
  EXPECT_TRUE(lost.gateway_status);  // made up by nfsgw: the origin never answered
  EXPECT_NE(::access((dir + "/never").c_str(), F_OK), 0);

  Origin::get().start();
  ASSERT_EQ(getattr.wait_for(kWait), std::future_status::ready);
  auto res = getattr.future.get();
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  EXPECT_FALSE(res.gateway_status);  // re-sent, then answered by the origin
  EXPECT_EQ(res.attributes.size, 3u);

  // And the re-established connection serves new non-idempotent calls.
  auto retry = h.call(&Forwarder::mkdir, as_root(), md);
  EXPECT_EQ(retry.status, nfs3::Status::Ok);
  EXPECT_EQ(::access((dir + "/never").c_str(), F_OK), 0);
}

TEST(OutageTest, LostConnectionResendsUnguardedSetattrAndJukeboxesGuardedOne) {
  // The one per-call rule of gateway/rpc/nfs3_procedure_info.h: SETATTR is
  // idempotent, unless it carries a guard (a second execution would fail it).
  OriginBackOnExit guard;
  const std::string dir = fresh_dir("setattr");
  std::ofstream(dir + "/guarded") << "g";
  std::ofstream(dir + "/plain") << "p";
  ::chmod((dir + "/guarded").c_str(), 0644);
  ::chmod((dir + "/plain").c_str(), 0644);
  ForwarderHarness h(1);  // one connection: both calls are in flight on it
  const auto gfh = h.lookup_path("setattr/guarded");
  const auto pfh = h.lookup_path("setattr/plain");
  const auto before = h.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{gfh});
  ASSERT_EQ(before.status, nfs3::Status::Ok);

  nfs3::SetattrArgs guarded;
  guarded.object = gfh;
  guarded.new_attributes.mode = 0600;
  guarded.guard = before.attributes.ctime;  // matches: would succeed once
  nfs3::SetattrArgs plain;
  plain.object = pfh;
  plain.new_attributes.mode = 0640;

  Origin::get().freeze();
  auto g = h.spawn(&Forwarder::setattr, as_root(), guarded);
  auto p = h.spawn(&Forwarder::setattr, as_root(), plain);
  EXPECT_EQ(g.wait_for(1000ms), std::future_status::timeout);
  EXPECT_EQ(p.wait_for(0ms), std::future_status::timeout);

  Origin::get().kill_hard();
  ASSERT_EQ(g.wait_for(kWait), std::future_status::ready);
  const auto lost = g.future.get();
  EXPECT_EQ(lost.status, nfs3::Status::Jukebox);
  EXPECT_TRUE(lost.gateway_status);

  Origin::get().start();
  ASSERT_EQ(p.wait_for(kWait), std::future_status::ready);
  EXPECT_EQ(p.future.get().status, nfs3::Status::Ok);
  EXPECT_EQ(lstat_or_fail(dir + "/plain").st_mode & 07777, 0640u);
  EXPECT_EQ(lstat_or_fail(dir + "/guarded").st_mode & 07777, 0644u);
}

TEST(OutageTest, StoppedForwarderAnswersJukeboxMarkedAsNfsgws) {
  ForwarderHarness h(2);
  const auto before = h.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{h.root()});
  ASSERT_EQ(before.status, nfs3::Status::Ok);
  EXPECT_FALSE(before.gateway_status);

  h.fwd().stop();  // the pool refuses every call from now on
  const auto after = h.call(&Forwarder::getattr, as_root(), nfs3::GetattrArgs{h.root()});
  EXPECT_EQ(after.status, nfs3::Status::Jukebox);
  EXPECT_TRUE(after.gateway_status);
  nfs3::LookupArgs lk;
  lk.what = {h.root(), "anything"};
  const auto lookup = h.call(&Forwarder::lookup, as_root(), lk);
  EXPECT_EQ(lookup.status, nfs3::Status::Jukebox);
  EXPECT_TRUE(lookup.gateway_status);
  nfs3::ReaddirplusArgs rd;
  rd.dir = h.root();
  rd.dircount = 4096;
  rd.maxcount = 8192;
  const auto listing = h.call(&Forwarder::readdirplus, as_root(), rd);
  EXPECT_EQ(listing.status, nfs3::Status::Jukebox);
  EXPECT_TRUE(listing.gateway_status);
}

TEST(OutageTest, OriginDownAtStartupOnlyDelaysCalls) {
  OriginBackOnExit guard;
  Origin::get().stop();
  ForwarderHarness h(2, /*wait_for_root=*/false);
  auto fut = boost::asio::co_spawn(
      h.io(),
      [&h]() -> Awaitable<nfs3::GetattrRes> {
        const nfs3::FileHandle root = co_await h.fwd().root_handle();
        co_return co_await h.fwd().getattr(as_root(), nfs3::GetattrArgs{root});
      },
      boost::asio::use_future);
  EXPECT_EQ(fut.wait_for(1500ms), std::future_status::timeout);
  EXPECT_EQ(h.fwd().connections_up(), 0u);

  Origin::get().start();
  ASSERT_EQ(fut.wait_for(kWait), std::future_status::ready);
  auto res = fut.get();
  ASSERT_EQ(res.status, nfs3::Status::Ok);
  expect_matches_stat(res.attributes, Origin::get().export_dir());
}

}  // namespace
}  // namespace nfsgw::upstream::test
