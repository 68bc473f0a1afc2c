// HandleTranslator against hostile or awkward input: READDIR/READDIRPLUS pages cut
// to the client's count although gateway handles are longer, FSINFO clamped to what
// nfsgw accepts, names refused before they reach the layer below, and ".." at an
// export root whose handle the origin encodes differently.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "gateway/translator/name_rules.h"
#include "protocol/nfs3_sizes.h"
#include "tests/unit/gateway/run_awaitable.h"
#include "tests/unit/gateway/translator_fixture.h"

namespace nfsgw::test {
namespace {

using nfs3::Status;

/// 36-byte origin handles (as nfs-ganesha's VFS gives): the gateway's embed them
/// and are 22 bytes longer.
nfs3::FileHandle origin_handle(std::uint32_t n) {
  std::vector<std::uint8_t> b(36, 0x40);
  for (int i = 0; i < 4; ++i) b[i] = static_cast<std::uint8_t>(n >> (8 * i));
  return nfs3::FileHandle(b);
}

nfs3::Fattr attrs_of(std::uint64_t fileid, nfs3::FileType type = nfs3::FileType::Reg, std::uint64_t fsid = 7) {
  nfs3::Fattr a;
  a.type = type;
  a.fileid = fileid;
  a.fsid = fsid;
  return a;
}

/// A directory of `count` files served the way an origin does: each page filled up
/// to the caller's maxcount (READDIRPLUS) or count (READDIR) in the origin's own
/// handles, resuming after the cookie it is given.
class DirectoryFake : public FakeNfs3Program {
 public:
  explicit DirectoryFake(std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i)
      names.push_back("file-" + std::to_string(i) + std::string(i % 7, 'x'));
  }
  std::vector<std::string> names;
  /// When set, GETATTR answers from it (by origin handle bytes), else getattr_res.
  std::map<std::vector<std::uint8_t>, nfs3::Fattr> attrs;

  Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) override {
    record("readdirplus", ctx);
    nfs3::ReaddirplusRes res;
    res.dir_attributes = attrs_of(1, nfs3::FileType::Dir);
    std::size_t i = args.cookie;
    for (; i < names.size(); ++i) {
      nfs3::DirEntryPlus e{1000 + i, names[i], i + 1, attrs_of(1000 + i), origin_handle(static_cast<std::uint32_t>(i))};
      res.entries.push_back(e);
      if (nfs3::encoded_size(res) > args.maxcount) {
        res.entries.pop_back();
        break;
      }
    }
    res.eof = i == names.size();
    co_return res;
  }

  Awaitable<nfs3::ReaddirRes> readdir(const CallContext& ctx, nfs3::ReaddirArgs args) override {
    record("readdir", ctx);
    nfs3::ReaddirRes res;
    res.dir_attributes = attrs_of(1, nfs3::FileType::Dir);
    std::size_t i = args.cookie;
    for (; i < names.size(); ++i) {
      res.entries.push_back(nfs3::DirEntry{1000 + i, names[i], i + 1});
      // An origin that overshoots by an entry (a careless one).
      if (nfs3::encoded_size(res) > args.count + 64) {
        res.entries.pop_back();
        break;
      }
    }
    res.eof = i == names.size();
    co_return res;
  }

  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) override {
    record("getattr", ctx);
    nfs3::GetattrRes res;
    const std::vector<std::uint8_t> key(args.object.view().begin(), args.object.view().end());
    if (auto it = attrs.find(key); it != attrs.end()) {
      res.attributes = it->second;
    } else {
      res.status = Status::Stale;
    }
    co_return res;
  }
};

class TranslatorHardeningTest : public TranslatorFixture {
 protected:
  TranslatorHardeningTest() : dir_fake(2000) {
    routes[0].downstream = &dir_fake;
    translator = std::make_unique<HandleTranslator>(codec, routes, kMaxTransfer);
  }

  /// Pages through the whole directory with READDIRPLUS, checking every page.
  void walk_plus(std::uint32_t maxcount) {
    std::multiset<std::string> seen;
    std::uint64_t cookie = 0;
    bool eof = false;
    int pages = 0;
    while (!eof && pages < 5000) {
      ++pages;
      nfs3::ReaddirplusArgs a;
      a.dir = codec.root(kRwId);
      a.cookie = cookie;
      a.dircount = maxcount;
      a.maxcount = maxcount;
      const auto res = run_awaitable(translator->readdirplus(client_ctx(), a));
      ASSERT_EQ(res.status, Status::Ok) << "page " << pages;
      EXPECT_LE(nfs3::encoded_size(res), maxcount) << "page " << pages;
      ASSERT_FALSE(res.entries.empty() && !res.eof) << "an empty page that is not the last";
      for (const auto& e : res.entries) {
        seen.insert(e.name);
        ASSERT_TRUE(e.name_handle);
        EXPECT_TRUE(codec.unwrap(*e.name_handle)) << e.name;
        cookie = e.cookie;
      }
      eof = res.eof;
    }
    ASSERT_TRUE(eof);
    EXPECT_EQ(seen.size(), dir_fake.names.size());
    for (const auto& n : dir_fake.names) EXPECT_EQ(seen.count(n), 1u) << n;
  }

  DirectoryFake dir_fake;
};

TEST_F(TranslatorHardeningTest, ReaddirplusPagesStayWithinMaxcountAndSeeEveryNameOnce) {
  for (std::uint32_t maxcount : {512u, 1024u, 4096u, 32768u}) {
    SCOPED_TRACE(maxcount);
    walk_plus(maxcount);
  }
}

TEST_F(TranslatorHardeningTest, ReaddirplusThatCannotFitOneEntryIsTooSmall) {
  nfs3::ReaddirplusArgs a;
  a.dir = codec.root(kRwId);
  a.dircount = 4096;
  // Room for one entry in the origin's handles, not in the gateway's.
  nfs3::ReaddirplusRes one;
  one.dir_attributes = attrs_of(1, nfs3::FileType::Dir);
  one.entries.push_back({1000, dir_fake.names[0], 1, attrs_of(1000), origin_handle(0)});
  a.maxcount = static_cast<std::uint32_t>(nfs3::encoded_size(one));
  const auto res = run_awaitable(translator->readdirplus(client_ctx(), a));
  EXPECT_EQ(res.status, Status::TooSmall);
  EXPECT_TRUE(res.gateway_status) << "a status nfsgw made up must be marked as its own";
  EXPECT_TRUE(res.dir_attributes);
}

TEST_F(TranslatorHardeningTest, ReaddirPagesStayWithinCount) {
  for (std::uint32_t count : {512u, 1024u, 4096u}) {
    std::multiset<std::string> seen;
    std::uint64_t cookie = 0;
    bool eof = false;
    for (int pages = 0; !eof && pages < 5000; ++pages) {
      nfs3::ReaddirArgs a{codec.root(kRwId), cookie, {}, count};
      const auto res = run_awaitable(translator->readdir(client_ctx(), a));
      ASSERT_EQ(res.status, Status::Ok);
      EXPECT_LE(nfs3::encoded_size(res), count);
      ASSERT_FALSE(res.entries.empty() && !res.eof);
      for (const auto& e : res.entries) {
        seen.insert(e.name);
        cookie = e.cookie;
      }
      eof = res.eof;
    }
    ASSERT_TRUE(eof);
    EXPECT_EQ(seen.size(), dir_fake.names.size()) << count;
  }
}

// ---- FSINFO and READ sizes --------------------------------------------------------

TEST_F(TranslatorHardeningTest, FsinfoNeverOffersMoreThanNfsgwAccepts) {
  auto& r = rw_fake.fsinfo_res;
  r.rtmax = r.wtmax = 4u << 20;  // an origin that takes 4 MiB
  r.rtpref = r.wtpref = 2u << 20;
  r.dtpref = 1u << 20;
  r.rtmult = r.wtmult = 4096;
  routes[0].downstream = &rw_fake;
  translator = std::make_unique<HandleTranslator>(codec, routes, kMaxTransfer);
  const auto res = run_awaitable(translator->fsinfo(client_ctx(), nfs3::FsinfoArgs{codec.root(kRwId)}));
  ASSERT_EQ(res.status, Status::Ok);
  EXPECT_EQ(res.rtmax, kMaxTransfer);
  EXPECT_EQ(res.wtmax, kMaxTransfer);
  EXPECT_EQ(res.rtpref, kMaxTransfer);
  EXPECT_EQ(res.wtpref, kMaxTransfer);
  EXPECT_EQ(res.dtpref, kMaxTransfer);
  EXPECT_EQ(res.rtmult, 4096u);

  // Smaller values of the origin stay as they are.
  r.rtmax = r.wtmax = 65536;
  r.rtpref = r.wtpref = r.dtpref = 32768;
  const auto small = run_awaitable(translator->fsinfo(client_ctx(), nfs3::FsinfoArgs{codec.root(kRwId)}));
  EXPECT_EQ(small.rtmax, 65536u);
  EXPECT_EQ(small.wtpref, 32768u);
  EXPECT_EQ(small.dtpref, 32768u);
}

TEST_F(TranslatorHardeningTest, TheDefaultRecordGivesTheLargestPayloadAndASmallRecordLess) {
  // What gateway_app passes: 4 MiB records carry 1 MiB WRITEs, 64 KiB ones less.
  EXPECT_EQ(nfs3::max_transfer_for_record(4u << 20), 1u << 20);
  EXPECT_LT(nfs3::max_transfer_for_record(64u << 10), 64u << 10);
}

TEST_F(TranslatorHardeningTest, ReadAsksForNoMoreThanRtmax) {
  routes[0].downstream = &rw_fake;
  translator = std::make_unique<HandleTranslator>(codec, routes, kMaxTransfer);
  run_awaitable(translator->read(client_ctx(), nfs3::ReadArgs{codec.wrap(kRwId, origin_handle(1)), 0, 64u << 20}));
  EXPECT_EQ(rw_fake.read_args.count, kMaxTransfer);
  run_awaitable(translator->read(client_ctx(), nfs3::ReadArgs{codec.wrap(kRwId, origin_handle(1)), 0, 4096}));
  EXPECT_EQ(rw_fake.read_args.count, 4096u);
}

// ---- ".." at the export root --------------------------------------------------------

class RootIdentityTest : public TranslatorHardeningTest {
 protected:
  RootIdentityTest() {
    // The root as MNT gave it, and another encoding of the same directory (as an
    // origin hands out for a LOOKUP ".." from a child).
    const nfs3::FileHandle& root = rw_origin_root;
    dir_fake.attrs[{root.view().begin(), root.view().end()}] = attrs_of(1, nfs3::FileType::Dir);
    dir_fake.attrs[{other_root.view().begin(), other_root.view().end()}] = attrs_of(1, nfs3::FileType::Dir);
    dir_fake.attrs[{child.view().begin(), child.view().end()}] = attrs_of(50, nfs3::FileType::Dir);
    // The same fileid on another file system is not the root.
    dir_fake.attrs[{elsewhere.view().begin(), elsewhere.view().end()}] = attrs_of(1, nfs3::FileType::Dir, 8);
  }
  nfs3::LookupRes lookup(const nfs3::FileHandle& dir, const std::string& name) {
    return run_awaitable(translator->lookup(client_ctx(), nfs3::LookupArgs{{dir, name}}));
  }
  /// A GETATTR of the root: the translator learns the origin's root handle and
  /// the root's fsid and fileid.
  void getattr_root() { run_awaitable(translator->getattr(client_ctx(), nfs3::GetattrArgs{codec.root(kRwId)})); }
  const nfs3::FileHandle other_root = handle_of({0x10, 0x11, 0x12, 0x13, 0xEE, 0xEE});
  const nfs3::FileHandle child = handle_of({0x55, 0x56});
  const nfs3::FileHandle elsewhere = handle_of({0x66, 0x67});
};

TEST_F(RootIdentityTest, DotDotFromAnotherEncodingOfTheRootStaysAtTheRoot) {
  dir_fake.lookup_res.status = Status::Ok;
  dir_fake.lookup_res.object = other_root;
  dir_fake.lookup_res.obj_attributes = attrs_of(1, nfs3::FileType::Dir);
  const auto res = lookup(codec.wrap(kRwId, other_root), "..");
  EXPECT_EQ(dir_fake.lookup_args.what.name, ".") << "LOOKUP .. left the export";
  ASSERT_EQ(res.status, Status::Ok);
  EXPECT_EQ(res.object, codec.root(kRwId)) << "the root comes back as the gateway's root handle";
}

TEST_F(RootIdentityTest, DotDotBelowTheRootOrOnAnotherFileSystemGoesUp) {
  dir_fake.lookup_res.status = Status::Ok;
  dir_fake.lookup_res.object = other_root;
  dir_fake.lookup_res.obj_attributes = attrs_of(1, nfs3::FileType::Dir);
  const auto res = lookup(codec.wrap(kRwId, child), "..");
  EXPECT_EQ(dir_fake.lookup_args.what.name, "..");
  EXPECT_EQ(res.object, codec.root(kRwId)) << "the parent is the root, in whatever encoding";
  lookup(codec.wrap(kRwId, elsewhere), "..");
  EXPECT_EQ(dir_fake.lookup_args.what.name, "..");
}

TEST_F(RootIdentityTest, DotDotOfADirectoryThatCannotBeCheckedStaysPut) {
  // GETATTR of the directory fails: nfsgw cannot tell, so the call stays inside.
  lookup(codec.wrap(kRwId, handle_of({0x99})), "..");
  EXPECT_EQ(dir_fake.lookup_args.what.name, ".");
}

TEST_F(RootIdentityTest, ReaddirplusOfAnotherEncodingOfTheRootKeepsDotDotInside) {
  class DotDotFake : public DirectoryFake {
   public:
    DotDotFake() : DirectoryFake(0) {}
    Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs) override {
      record("readdirplus", ctx);
      nfs3::ReaddirplusRes res;
      res.dir_attributes = attrs_of(1, nfs3::FileType::Dir);
      res.entries.push_back({2, "..", 2, attrs_of(2, nfs3::FileType::Dir), handle_of({0x01})});
      res.eof = true;
      co_return res;
    }
  } fake;
  fake.attrs = dir_fake.attrs;
  routes[0].downstream = &fake;
  translator = std::make_unique<HandleTranslator>(codec, routes, kMaxTransfer);
  nfs3::ReaddirplusArgs a;
  a.dir = codec.wrap(kRwId, other_root);
  a.dircount = a.maxcount = 4096;
  const auto res = run_awaitable(translator->readdirplus(client_ctx(), a));
  ASSERT_EQ(res.entries.size(), 1u);
  ASSERT_TRUE(res.entries[0].name_handle);
  EXPECT_EQ(*res.entries[0].name_handle, codec.root(kRwId)) << ".. of the root led outside the export";
}

TEST_F(RootIdentityTest, TheNowPathChecksTheRootToo) {
  getattr_root();
  dir_fake.lookup_now_res = nfs3::LookupRes{};
  // No getattr_now answer for the directory: the coroutine must decide.
  EXPECT_FALSE(translator->lookup_now(client_ctx(), nfs3::LookupArgs{{codec.wrap(kRwId, other_root), ".."}}));
  // At the root's own bytes it is answered at once, as ".".
  auto res = translator->lookup_now(client_ctx(), nfs3::LookupArgs{{codec.root(kRwId), ".."}});
  ASSERT_TRUE(res);
  EXPECT_EQ(dir_fake.lookup_args.what.name, ".");
}

// ---- names ---------------------------------------------------------------------

struct BadName {
  std::string name;
  Status lookup, create, remove, rename;
};

std::vector<BadName> bad_names() {
  const std::string too_long(256, 'n');
  return {
      {too_long, Status::NameTooLong, Status::NameTooLong, Status::NameTooLong, Status::NameTooLong},
      {std::string(1000, 'z'), Status::NameTooLong, Status::NameTooLong, Status::NameTooLong, Status::NameTooLong},
      {"a/b", Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {"/", Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {"..//etc", Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {std::string("a\0b", 3), Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {std::string(1, '\0'), Status::Inval, Status::Inval, Status::Inval, Status::Inval},
      {"", Status::Acces, Status::Perm, Status::Acces, Status::Perm},
      {".", Status::Ok, Status::Exist, Status::Acces, Status::Perm},
      {"..", Status::Ok, Status::Exist, Status::Acces, Status::Perm},
  };
}

class NameTest : public TranslatorFixture {
 protected:
  const nfs3::FileHandle dir = codec.wrap(kRwId, handle_of({0x31, 0x32}));
  const nfs3::FileHandle file = codec.wrap(kRwId, handle_of({0x41}));
  CallContext mctx = client_ctx(rpc_mutates());
  bool root_known = false;

  /// The answers at once need the export's root known: one GETATTR of the root.
  void getattr_root_once() {
    if (root_known) return;
    run_awaitable(translator->getattr(client_ctx(), nfs3::GetattrArgs{codec.root(kRwId)}));
    root_known = true;
  }

  template <typename Res>
  void expect_refused(const Res& res, Status want, const std::string& what) {
    EXPECT_EQ(res.status, want) << what;
    if (want != Status::Ok) {
      EXPECT_TRUE(res.gateway_status) << what << ": nfsgw's own status must be marked";
    }
  }
};

TEST_F(NameTest, TheLongestNameIsPassedOn) {
  const std::string longest(255, 'n');
  EXPECT_EQ(check_name(NameUse::Lookup, longest), Status::Ok);
  run_awaitable(translator->lookup(client_ctx(), nfs3::LookupArgs{{dir, longest}}));
  EXPECT_EQ(rw_fake.lookup_args.what.name, longest);
}

TEST_F(NameTest, EveryProcedureThatTakesANameRefusesBadOnesWithoutCallingDownstream) {
  for (const auto& b : bad_names()) {
    const std::string what = "name of " + std::to_string(b.name.size()) + " bytes \"" +
                             b.name.substr(0, 12) + "\"";
    if (b.lookup != Status::Ok) {
      expect_refused(run_awaitable(translator->lookup(client_ctx(), nfs3::LookupArgs{{dir, b.name}})), b.lookup,
                     "LOOKUP " + what);
      getattr_root_once();
      const auto now = translator->lookup_now(client_ctx(), nfs3::LookupArgs{{dir, b.name}});
      ASSERT_TRUE(now) << what;
      expect_refused(*now, b.lookup, "LOOKUP (at once) " + what);
    }
    nfs3::CreateArgs ca;
    ca.where = {dir, b.name};
    expect_refused(run_awaitable(translator->create(mctx, ca)), b.create, "CREATE " + what);
    nfs3::MkdirArgs ma;
    ma.where = {dir, b.name};
    expect_refused(run_awaitable(translator->mkdir(mctx, ma)), b.create, "MKDIR " + what);
    nfs3::SymlinkArgs sa;
    sa.where = {dir, b.name};
    sa.symlink_data = "target";
    expect_refused(run_awaitable(translator->symlink(mctx, sa)), b.create, "SYMLINK " + what);
    nfs3::MknodArgs na;
    na.where = {dir, b.name};
    na.type = nfs3::FileType::Fifo;
    expect_refused(run_awaitable(translator->mknod(mctx, na)), b.create, "MKNOD " + what);
    expect_refused(run_awaitable(translator->remove(mctx, nfs3::RemoveArgs{{dir, b.name}})), b.remove,
                   "REMOVE " + what);
    expect_refused(run_awaitable(translator->rmdir(mctx, nfs3::RmdirArgs{{dir, b.name}})), b.remove,
                   "RMDIR " + what);
    expect_refused(run_awaitable(translator->rename(mctx, nfs3::RenameArgs{{dir, b.name}, {dir, "ok"}})), b.rename,
                   "RENAME from " + what);
    expect_refused(run_awaitable(translator->rename(mctx, nfs3::RenameArgs{{dir, "ok"}, {dir, b.name}})), b.rename,
                   "RENAME to " + what);
    nfs3::LinkArgs la;
    la.file = file;
    la.link = {dir, b.name};
    expect_refused(run_awaitable(translator->link(mctx, la)), b.create, "LINK " + what);
  }
  // Only the root GETATTR that lets the translator answer at once went down.
  for (const auto& c : rw_fake.calls()) EXPECT_EQ(c.proc, "getattr") << "a bad name reached " << c.proc;
}

TEST_F(NameTest, GoodNamesStillReachDownstream) {
  rw_fake.create_res.status = Status::Ok;
  nfs3::CreateArgs ca;
  ca.where = {dir, "fine name"};
  EXPECT_EQ(run_awaitable(translator->create(mctx, ca)).status, Status::Ok);
  EXPECT_EQ(rw_fake.create_args.where.name, "fine name");
  EXPECT_EQ(run_awaitable(translator->rename(mctx, nfs3::RenameArgs{{dir, "a"}, {dir, "b"}})).status, Status::Ok);
  EXPECT_EQ(rw_fake.call_count(), 2u);
}

}  // namespace
}  // namespace nfsgw::test
