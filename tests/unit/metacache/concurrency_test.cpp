// Replies that cross: an older reply never overwrites a newer entry; and
// concurrent misses for one entry make one origin call.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

using OrderTest = MetaCacheTest;

TEST_F(OrderTest, AnOlderGetattrReplyDoesNotOverwriteANewerSetattr) {
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644);
  origin.hold(Proc::Getattr);
  auto old_reply = spawn(invoke(*layer, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f}));
  pump_until([&] { return origin.held(Proc::Getattr) == 1; });  // answered 0644, not yet delivered
  ASSERT_EQ(chmod(f, 0600).status, Status::Ok);
  origin.release(Proc::Getattr);
  EXPECT_EQ(wait(old_reply).status, Status::Ok);

  origin.reset_calls();
  EXPECT_EQ(getattr(f).attributes.mode, 0600u);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(OrderTest, AnOlderRevalidationDoesNotOverwriteANewerWrite) {
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644);
  ASSERT_EQ(getattr(f).attributes.size, 0u);
  clock.advance(10'000);
  origin.hold(Proc::Getattr);
  auto old_reply = spawn(invoke(*layer, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f}));
  pump_until([&] { return origin.held(Proc::Getattr) == 1; });
  ASSERT_EQ(write(f, 0, "data").status, Status::Ok);
  origin.release(Proc::Getattr);
  wait(old_reply);

  origin.reset_calls();
  EXPECT_EQ(getattr(f).attributes.size, 4u);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(OrderTest, AnOlderNegativeLookupDoesNotHideANewerCreate) {
  settings.access_check = cache::AccessCheck::Local;
  start();
  const auto d = origin.add_dir(origin.root(), "d", 0755, kUser, kUser);
  ASSERT_EQ(getattr(d, as(kUser)).status, Status::Ok);
  origin.hold(Proc::Lookup);
  auto old_reply = spawn(invoke(*layer, &Nfs3Program::lookup, as(kUser), nfs3::LookupArgs{{d, "x"}}));
  pump_until([&] { return origin.held(Proc::Lookup) == 1; });  // answered NOENT
  auto c = create(d, "x", as(kUser));
  ASSERT_EQ(c.status, Status::Ok);
  origin.release(Proc::Lookup);
  EXPECT_EQ(wait(old_reply).status, Status::NoEnt);

  origin.reset_calls();
  auto now = lookup(d, "x", as(kUser));
  ASSERT_EQ(now.status, Status::Ok);
  EXPECT_EQ(now.object, *c.obj);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(OrderTest, AnOlderListingDoesNotHideANewerCreate) {
  settings.access_check = cache::AccessCheck::Local;
  start();
  const auto d = origin.add_dir(origin.root(), "d", 0755, kUser, kUser);
  origin.add_file(d, "a");
  ASSERT_EQ(getattr(d, as(kUser)).status, Status::Ok);
  origin.hold(Proc::Readdirplus);
  auto old_fill = spawn(invoke(*layer, &Nfs3Program::readdirplus, as(kUser),
                               nfs3::ReaddirplusArgs{d, 0, {}, 65536, 1u << 20}));
  pump_until([&] { return origin.held(Proc::Readdirplus) == 1; });  // answered without "x"
  ASSERT_EQ(create(d, "x", as(kUser)).status, Status::Ok);
  origin.release(Proc::Readdirplus);
  EXPECT_EQ(wait(old_fill).status, Status::Ok);

  EXPECT_EQ(sorted(list(d, as(kUser))), (std::vector<std::string>{"a", "x"}));
}

// A reply about the same, unchanged version of an object that arrives while a
// call is out (a revalidation, another caller's ACCESS) is no reason to drop
// that call's answer.
class CrossingTest : public MetaCacheTest {
 protected:
  void SetUp() override {
    settings.access_check = cache::AccessCheck::Local;
    start();
    d = origin.add_dir(origin.root(), "d", 0755, kUser, kUser);
    origin.add_file(d, "f", 0644, kUser, kUser);
    l = origin.add_symlink(d, "l", "f", 0777, kUser, kUser);
    ASSERT_EQ(getattr(d, me).status, Status::Ok);
    ASSERT_EQ(getattr(l, me).status, Status::Ok);
  }
  /// Starts `call` held at the origin, renews d and l meanwhile, then lets it go.
  template <typename Res>
  Res crossed(Proc p, Awaitable<Res> call) {
    origin.hold(p);
    auto f = spawn(std::move(call));
    pump_until([&] { return origin.held(p) == 1; });
    clock.advance(20'000);
    EXPECT_EQ(getattr(d, me).status, Status::Ok);
    EXPECT_EQ(getattr(l, me).status, Status::Ok);
    origin.release(p);
    auto r = wait(f);
    origin.reset_calls();
    return r;
  }
  const CallContext me = as(kUser);
  nfs3::FileHandle d, l;
};

TEST_F(CrossingTest, ALookupAnswerIsKept) {
  auto r = crossed(Proc::Lookup, invoke(*layer, &Nfs3Program::lookup, me, nfs3::LookupArgs{{d, "f"}}));
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(lookup(d, "f", me).object, r.object);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(CrossingTest, ANegativeLookupAnswerIsKept) {
  auto r = crossed(Proc::Lookup, invoke(*layer, &Nfs3Program::lookup, me, nfs3::LookupArgs{{d, "nope"}}));
  ASSERT_EQ(r.status, Status::NoEnt);
  EXPECT_EQ(lookup(d, "nope", me).status, Status::NoEnt);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(CrossingTest, AListingIsKept) {
  auto r = crossed(Proc::Readdirplus, invoke(*layer, &Nfs3Program::readdirplus, me,
                                             nfs3::ReaddirplusArgs{d, 0, {}, 65536, 1u << 20}));
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(sorted(list(d, me)), (std::vector<std::string>{"f", "l"}));
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(CrossingTest, ALinkTargetIsKept) {
  auto r = crossed(Proc::Readlink, invoke(*layer, &Nfs3Program::readlink, me, nfs3::ReadlinkArgs{l}));
  ASSERT_EQ(r.data, "f");
  EXPECT_EQ(readlink(l, me).data, "f");
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(CrossingTest, AnAccessAnswerIsKept) {
  auto r = crossed(Proc::Access, invoke(*layer, &Nfs3Program::access, as(0), nfs3::AccessArgs{d, nfs3::access::Lookup}));
  ASSERT_EQ(r.access, nfs3::access::Lookup);
  EXPECT_EQ(access(d, nfs3::access::Lookup).access, nfs3::access::Lookup);
  EXPECT_EQ(origin.total_calls(), 0u);
}

// ---- single flight ------------------------------------------------------------------

using SingleFlightTest = MetaCacheTest;

TEST_F(SingleFlightTest, HundredConcurrentGetattrsOfAColdHandleMakeOneCall) {
  start();
  const auto f = origin.add_file(origin.root(), "f", 0644, 0, 0, "xyz");
  origin.hold(Proc::Getattr);
  std::vector<std::future<nfs3::GetattrRes>> calls;
  for (int i = 0; i < 100; ++i) calls.push_back(spawn(invoke(*layer, &Nfs3Program::getattr, as(i), nfs3::GetattrArgs{f})));
  pump_until([&] { return origin.held(Proc::Getattr) == 1; });
  settle();
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  origin.release(Proc::Getattr);
  for (auto& c : calls) {
    auto r = wait(c);
    ASSERT_EQ(r.status, Status::Ok);
    EXPECT_EQ(r.attributes.size, 3u);
  }
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
}

TEST_F(SingleFlightTest, ConcurrentGetattrsOfDifferentHandlesAreNotMerged) {
  start();
  std::vector<nfs3::FileHandle> files;
  for (int i = 0; i < 20; ++i) files.push_back(origin.add_file(origin.root(), "f" + std::to_string(i)));
  origin.hold(Proc::Getattr);
  std::vector<std::future<nfs3::GetattrRes>> calls;
  for (const auto& f : files) calls.push_back(spawn(invoke(*layer, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f})));
  pump_until([&] { return origin.held(Proc::Getattr) == files.size(); });
  origin.release(Proc::Getattr);
  for (auto& c : calls) EXPECT_EQ(wait(c).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Getattr), files.size());
}

TEST_F(SingleFlightTest, ConcurrentColdReaddirplusOfOneDirectoryFillsOnce) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  for (int i = 0; i < 50; ++i) origin.add_file(d, "f" + std::to_string(i));
  origin.hold(Proc::Readdirplus);
  std::vector<std::future<nfs3::ReaddirplusRes>> calls;
  for (int i = 0; i < 10; ++i)
    calls.push_back(spawn(invoke(*layer, &Nfs3Program::readdirplus, as(0),
                                 nfs3::ReaddirplusArgs{d, 0, {}, 65536, 1u << 20})));
  pump_until([&] { return origin.held(Proc::Readdirplus) == 1; });
  settle();
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
  origin.release(Proc::Readdirplus);
  for (auto& c : calls) {
    auto r = wait(c);
    ASSERT_EQ(r.status, Status::Ok);
    EXPECT_EQ(r.entries.size(), 52u);
    EXPECT_TRUE(r.eof);
  }
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
  // Counted for READDIRPLUS: the directory's one GETATTR and the one fill.
  EXPECT_EQ(origin.calls(Proc::Getattr), 1u);
  EXPECT_EQ(layer->counters().get(Proc::Readdirplus).origin_calls, 2u);
}

TEST_F(SingleFlightTest, ConcurrentLookupsOfOneColdNameMakeOneCall) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  origin.add_file(d, "f");
  ASSERT_EQ(getattr(d).status, Status::Ok);
  origin.hold(Proc::Lookup);
  std::vector<std::future<nfs3::LookupRes>> calls;
  for (int i = 0; i < 20; ++i)
    calls.push_back(spawn(invoke(*layer, &Nfs3Program::lookup, as(0), nfs3::LookupArgs{{d, "f"}})));
  pump_until([&] { return origin.held(Proc::Lookup) == 1; });
  settle();
  origin.release(Proc::Lookup);
  for (auto& c : calls) EXPECT_EQ(wait(c).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
