// The fake origin itself: the other tests trust its WCC data, permissions and
// paging, so they are checked here against the origin directly (no cache layer).
#include <set>

#include "protocol/nfs3_codec.h"
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class FakeOriginTest : public MetaCacheTest {
 protected:
  template <typename Res, typename Args>
  Res call(Awaitable<Res> (Nfs3Program::*m)(const CallContext&, Args), Args args, const CallContext& ctx = as(0)) {
    return run(invoke(origin, m, ctx, std::move(args)));
  }
};

TEST_F(FakeOriginTest, ChangesTickTimesAndWccShowsTheDirectoryBeforeAndAfter) {
  const auto dir = origin.add_dir(origin.root(), "d");
  const nfs3::Fattr before = origin.attributes(dir);
  nfs3::CreateArgs a;
  a.where = {dir, "f"};
  auto r = call(&Nfs3Program::create, a);
  ASSERT_EQ(r.status, Status::Ok);
  ASSERT_TRUE(r.dir_wcc.before && r.dir_wcc.after && r.obj && r.obj_attributes);
  EXPECT_EQ(r.dir_wcc.before->mtime, before.mtime);
  EXPECT_EQ(r.dir_wcc.before->ctime, before.ctime);
  EXPECT_EQ(r.dir_wcc.before->size, before.size);
  EXPECT_NE(r.dir_wcc.after->mtime, before.mtime);
  EXPECT_EQ(*r.dir_wcc.after, origin.attributes(dir));
  EXPECT_EQ(r.obj_attributes->fsid, FakeOrigin::kFsid);

  // A second CREATE sees the first one's "after" as its "before".
  a.where.name = "g";
  auto r2 = call(&Nfs3Program::create, a);
  ASSERT_TRUE(r2.dir_wcc.before);
  EXPECT_EQ(r2.dir_wcc.before->ctime, r.dir_wcc.after->ctime);

  // A change made directly moves the times too.
  const auto mid = origin.attributes(dir);
  origin.add_file(dir, "behind");
  EXPECT_NE(origin.attributes(dir).mtime, mid.mtime);
  EXPECT_EQ(origin.calls(Proc::Create), 2u);
  EXPECT_EQ(origin.total_calls(), 2u);
}

TEST_F(FakeOriginTest, LookupAndAccessFollowModeBits) {
  const auto secret = origin.add_dir(origin.root(), "secret", 0700);
  origin.add_file(secret, "f");
  EXPECT_EQ(call(&Nfs3Program::lookup, nfs3::LookupArgs{{secret, "f"}}, as(0)).status, Status::Ok);
  EXPECT_EQ(call(&Nfs3Program::lookup, nfs3::LookupArgs{{secret, "f"}}, as(kUser)).status, Status::Acces);
  EXPECT_EQ(call(&Nfs3Program::lookup, nfs3::LookupArgs{{secret, "nope"}}, as(0)).status, Status::NoEnt);
  const std::uint32_t all = nfs3::access::Read | nfs3::access::Lookup | nfs3::access::Modify;
  EXPECT_EQ(call(&Nfs3Program::access, nfs3::AccessArgs{secret, all}, as(kUser)).access, 0u);
  EXPECT_EQ(call(&Nfs3Program::access, nfs3::AccessArgs{secret, all}, as(0)).access, all);
  const auto open = origin.add_dir(origin.root(), "open", 0755);
  EXPECT_EQ(call(&Nfs3Program::access, nfs3::AccessArgs{open, all}, as(kUser)).access,
            nfs3::access::Read | nfs3::access::Lookup);
  const auto rd = call(&Nfs3Program::readdirplus, nfs3::ReaddirplusArgs{secret, 0, {}, 4096, 65536}, as(kUser));
  EXPECT_EQ(rd.status, Status::Acces);
}

TEST_F(FakeOriginTest, ReaddirplusPagesRespectLimitsAndCoverEveryName) {
  const auto dir = origin.add_dir(origin.root(), "big");
  for (int i = 0; i < 300; ++i) origin.add_file(dir, "name_" + std::to_string(i));
  std::multiset<std::string> seen;
  std::uint64_t cookie = 0;
  int pages = 0;
  for (;;) {
    auto r = call(&Nfs3Program::readdirplus, nfs3::ReaddirplusArgs{dir, cookie, {}, 600, 3000});
    ASSERT_EQ(r.status, Status::Ok);
    std::vector<std::uint8_t> buf;
    xdr::Writer w(buf);
    nfs3::encode(w, r);
    EXPECT_LE(buf.size(), 3000u);
    ++pages;
    for (const auto& e : r.entries) seen.insert(e.name);
    if (r.eof) break;
    ASSERT_FALSE(r.entries.empty());
    cookie = r.entries.back().cookie;
  }
  EXPECT_GT(pages, 10);
  EXPECT_EQ(seen.size(), 302u);
  for (const auto& n : origin.names(dir)) EXPECT_EQ(seen.count(n), 1u) << n;
  EXPECT_EQ(call(&Nfs3Program::readdirplus, nfs3::ReaddirplusArgs{dir, 0, {}, 600, 150}).status,
            Status::TooSmall);
}

TEST_F(FakeOriginTest, FailAndHold) {
  const auto f = origin.add_file(origin.root(), "f");
  origin.fail(Proc::Getattr, 1);
  auto r = call(&Nfs3Program::getattr, nfs3::GetattrArgs{f});
  EXPECT_EQ(r.status, Status::Jukebox);
  EXPECT_TRUE(r.gateway_status);
  EXPECT_EQ(call(&Nfs3Program::getattr, nfs3::GetattrArgs{f}).status, Status::Ok);

  origin.hold(Proc::Getattr);
  auto held = spawn(invoke(origin, &Nfs3Program::getattr, as(0), nfs3::GetattrArgs{f}));
  pump_until([&] { return origin.held(Proc::Getattr) == 1; });
  settle();
  EXPECT_NE(held.wait_for(0s), std::future_status::ready);
  origin.release(Proc::Getattr);
  EXPECT_EQ(wait(held).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Getattr), 3u);
}

TEST_F(FakeOriginTest, RenameAcrossDirectoriesMovesDotDot) {
  const auto a = origin.add_dir(origin.root(), "a");
  const auto b = origin.add_dir(origin.root(), "b");
  const auto sub = origin.add_dir(a, "sub");
  auto r = call(&Nfs3Program::rename, nfs3::RenameArgs{{a, "sub"}, {b, "moved"}});
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_NE(r.fromdir_wcc.after->mtime, r.fromdir_wcc.before->mtime);
  EXPECT_NE(r.todir_wcc.after->mtime, r.todir_wcc.before->mtime);
  auto up = call(&Nfs3Program::lookup, nfs3::LookupArgs{{sub, ".."}});
  EXPECT_EQ(up.object, b);
  EXPECT_TRUE(origin.names(a).empty());
}

}  // namespace
}  // namespace nfsgw::metacache::test
