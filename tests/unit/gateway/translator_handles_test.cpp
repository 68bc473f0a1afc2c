// HandleTranslator: gateway handles in, origin handles to the downstream program,
// gateway handles back out. Forged or foreign handles never reach downstream.
#include <gtest/gtest.h>

#include "tests/unit/gateway/run_awaitable.h"
#include "tests/unit/gateway/translator_fixture.h"

namespace nfsgw::test {
namespace {

using nfs3::Status;

class TranslatorHandlesTest : public TranslatorFixture {
 protected:
  nfs3::GetattrRes getattr(const nfs3::FileHandle& h, CallContext ctx = client_ctx()) {
    nfs3::GetattrArgs a;
    a.object = h;
    return run_awaitable(translator->getattr(ctx, a));
  }
  nfs3::LookupRes lookup(const nfs3::FileHandle& dir, const std::string& name) {
    nfs3::LookupArgs a;
    a.what.dir = dir;
    a.what.name = name;
    return run_awaitable(translator->lookup(client_ctx(), a));
  }
  /// Verifies a handle the translator issued and returns what it stands for.
  cache::HandleCodec::Decoded unwrap(const nfs3::FileHandle& h) {
    auto d = codec.unwrap(h);
    if (!d) throw std::runtime_error("the translator returned a handle that does not verify");
    return *d;
  }

  const nfs3::FileHandle origin_file = handle_of({0x51, 0x52, 0x53, 0x54, 0x55, 0x56});
};

TEST_F(TranslatorHandlesTest, WrappedHandlePassesThroughAsTheOriginHandle) {
  rw_fake.getattr_res.status = Status::Ok;
  rw_fake.getattr_res.attributes.fileid = 99;
  const auto res = getattr(codec.wrap(kRwId, origin_file));
  EXPECT_EQ(res.status, Status::Ok);
  EXPECT_EQ(res.attributes.fileid, 99u);
  ASSERT_EQ(rw_fake.call_count(), 1u);
  EXPECT_EQ(rw_fake.getattr_args.object, origin_file);
  EXPECT_EQ(rw_fake.last_ctx().export_id, kRwId);
  EXPECT_EQ(rw_fake.last_ctx().xid, 77u);
  EXPECT_EQ(ro_fake.call_count(), 0u);
}

TEST_F(TranslatorHandlesTest, EachExportReachesItsOwnDownstream) {
  getattr(codec.wrap(kRoId, origin_file));
  EXPECT_EQ(rw_fake.call_count(), 0u);
  ASSERT_EQ(ro_fake.call_count(), 1u);
  EXPECT_EQ(ro_fake.getattr_args.object, origin_file);
  EXPECT_EQ(ro_fake.last_ctx().export_id, kRoId);
}

TEST_F(TranslatorHandlesTest, LongOriginHandlesPassThroughTheDigestForm) {
  std::vector<std::uint8_t> big(64);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(255 - i);
  const nfs3::FileHandle origin(big);
  getattr(codec.wrap(kRwId, origin));
  EXPECT_EQ(rw_fake.getattr_args.object, origin);
}

TEST_F(TranslatorHandlesTest, EveryBitFlipIsBadHandleAndNeverReachesDownstream) {
  const nfs3::FileHandle good = codec.wrap(kRwId, origin_file);
  for (std::size_t byte = 0; byte < good.len; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      nfs3::FileHandle bad = good;
      bad.bytes[byte] ^= static_cast<std::uint8_t>(1u << bit);
      EXPECT_EQ(getattr(bad).status, Status::BadHandle) << "byte " << byte << " bit " << bit;
    }
  }
  EXPECT_EQ(rw_fake.call_count(), 0u);
  EXPECT_EQ(ro_fake.call_count(), 0u);
}

TEST_F(TranslatorHandlesTest, TruncatedEmptyAndForeignHandlesAreBadHandle) {
  const nfs3::FileHandle good = codec.wrap(kRwId, origin_file);
  for (std::uint8_t len = 0; len < good.len; ++len) {
    nfs3::FileHandle cut = good;
    cut.len = len;
    EXPECT_EQ(getattr(cut).status, Status::BadHandle) << int{len};
  }
  // The origin's own handle, as a client that bypassed the gateway would send it.
  EXPECT_EQ(getattr(origin_file).status, Status::BadHandle);
  // A handle issued under another secret.
  auto other_store = cache::make_memory_store();
  std::vector<std::uint8_t> other_secret(32, 0x01);
  cache::HandleCodec other(other_secret, *other_store);
  EXPECT_EQ(getattr(other.wrap(kRwId, origin_file)).status, Status::BadHandle);
  EXPECT_EQ(getattr(other.root(kRwId)).status, Status::BadHandle);
  EXPECT_EQ(rw_fake.call_count(), 0u);
}

TEST_F(TranslatorHandlesTest, UnknownExportIdIsStale) {
  EXPECT_EQ(getattr(codec.wrap(0x9999, origin_file)).status, Status::Stale);
  EXPECT_EQ(getattr(codec.root(0x9999)).status, Status::Stale);
  EXPECT_EQ(rw_fake.call_count(), 0u);
  EXPECT_EQ(ro_fake.call_count(), 0u);
}

TEST_F(TranslatorHandlesTest, RootHandleIsResolvedThroughOriginRootOnce) {
  getattr(codec.root(kRwId));
  EXPECT_EQ(rw_fake.getattr_args.object, rw_origin_root);
  getattr(codec.root(kRwId));
  EXPECT_EQ(rw_fake.getattr_args.object, rw_origin_root);
  EXPECT_EQ(rw_root_calls, 1);  // remembered after the first answer
  EXPECT_EQ(ro_root_calls, 0);
  EXPECT_EQ(rw_fake.call_count(), 2u);
}

TEST_F(TranslatorHandlesTest, LookupResultComesBackWrapped) {
  rw_fake.lookup_res.status = Status::Ok;
  rw_fake.lookup_res.object = origin_file;
  const auto res = lookup(codec.root(kRwId), "child");
  ASSERT_EQ(res.status, Status::Ok);
  EXPECT_NE(res.object, origin_file);
  const auto d = unwrap(res.object);
  EXPECT_EQ(d.export_id, kRwId);
  EXPECT_EQ(d.origin, origin_file);
  EXPECT_EQ(rw_fake.lookup_args.what.dir, rw_origin_root);
  EXPECT_EQ(rw_fake.lookup_args.what.name, "child");
}

TEST_F(TranslatorHandlesTest, LookupFailureIsPassedOnUnchanged) {
  rw_fake.lookup_res.status = Status::NoEnt;
  rw_fake.lookup_res.dir_attributes = nfs3::Fattr{};
  rw_fake.lookup_res.dir_attributes->fileid = 5;
  const auto res = lookup(codec.wrap(kRwId, origin_file), "missing");
  EXPECT_EQ(res.status, Status::NoEnt);
  ASSERT_TRUE(res.dir_attributes);
  EXPECT_EQ(res.dir_attributes->fileid, 5u);
}

TEST_F(TranslatorHandlesTest, DotDotAtTheRootHandleIsSentAsDot) {
  rw_fake.lookup_res.status = Status::Ok;
  rw_fake.lookup_res.object = rw_origin_root;
  const auto res = lookup(codec.root(kRwId), "..");
  EXPECT_EQ(rw_fake.lookup_args.what.name, ".");
  EXPECT_EQ(rw_fake.lookup_args.what.dir, rw_origin_root);
  ASSERT_EQ(res.status, Status::Ok);
  EXPECT_EQ(res.object, codec.root(kRwId));
}

TEST_F(TranslatorHandlesTest, DotDotBelowTheRootIsSentAsItIs) {
  // The root (fileid 1, learnt from a GETATTR of it) is not the directory (fileid 2).
  rw_fake.getattr_res.attributes.fileid = 1;
  getattr(codec.root(kRwId));
  rw_fake.getattr_res.attributes.fileid = 2;
  rw_fake.lookup_res.status = Status::Ok;
  rw_fake.lookup_res.object = origin_file;
  lookup(codec.wrap(kRwId, handle_of({0x77, 0x78})), "..");
  EXPECT_EQ(rw_fake.lookup_args.what.name, "..");
}

TEST_F(TranslatorHandlesTest, OriginRootComesBackAsTheGatewayRoot) {
  getattr(codec.root(kRwId));  // the translator learns the origin root
  rw_fake.lookup_res.status = Status::Ok;
  rw_fake.lookup_res.object = rw_origin_root;
  const auto res = lookup(codec.wrap(kRwId, handle_of({0x77, 0x78})), "..");
  ASSERT_EQ(res.status, Status::Ok);
  EXPECT_EQ(res.object, codec.root(kRwId));
}

// Regression: the translator once learnt the origin's root handle only when a client
// used a Root-kind handle. After a gateway restart, clients still hold Embedded or
// Mapped handles; a LOOKUP ".." reaching the export root then came back as an
// embedded handle of the origin root instead of codec.root(id), and ".." from that
// handle was sent upstream as "..", climbing OUT of the export (fixed in e901f4b).
TEST_F(TranslatorHandlesTest, OriginRootIsRecognisedBeforeAnyRootHandleWasUsed) {
  // A fresh translator (as after a restart): the client holds a handle below the root.
  rw_fake.lookup_res.status = Status::Ok;
  rw_fake.lookup_res.object = rw_origin_root;
  const auto up = lookup(codec.wrap(kRwId, handle_of({0x77, 0x78})), "..");
  ASSERT_EQ(up.status, Status::Ok);
  EXPECT_EQ(up.object, codec.root(kRwId)) << "the export root must come back as the root handle";

  // Whatever handle came back, ".." from it must not leave the export.
  rw_fake.lookup_res.object = handle_of({0x01});  // the origin's parent of the export
  lookup(up.object, "..");
  EXPECT_EQ(rw_fake.lookup_args.what.name, ".") << "LOOKUP .. at the export root escaped it";
}

TEST_F(TranslatorHandlesTest, CreatedObjectsComeBackWrapped) {
  const nfs3::FileHandle made = handle_of({0x61, 0x62, 0x63});
  rw_fake.create_res.status = Status::Ok;
  rw_fake.create_res.obj = made;
  rw_fake.mkdir_res.status = Status::Ok;
  rw_fake.mkdir_res.obj = made;

  nfs3::CreateArgs ca;
  ca.where.dir = codec.wrap(kRwId, origin_file);
  ca.where.name = "new";
  const auto cres = run_awaitable(translator->create(client_ctx(rpc_mutates()), ca));
  ASSERT_EQ(cres.status, Status::Ok);
  ASSERT_TRUE(cres.obj);
  EXPECT_EQ(unwrap(*cres.obj).origin, made);
  EXPECT_EQ(rw_fake.create_args.where.dir, origin_file);
  EXPECT_EQ(rw_fake.create_args.where.name, "new");

  nfs3::MkdirArgs ma;
  ma.where.dir = codec.root(kRwId);
  ma.where.name = "dir";
  const auto mres = run_awaitable(translator->mkdir(client_ctx(rpc_mutates()), ma));
  ASSERT_TRUE(mres.obj);
  EXPECT_EQ(unwrap(*mres.obj).origin, made);
  EXPECT_EQ(unwrap(*mres.obj).export_id, kRwId);
  EXPECT_EQ(rw_fake.mkdir_args.where.dir, rw_origin_root);
}

TEST_F(TranslatorHandlesTest, CreateWithoutAHandleInTheResultStaysWithout) {
  rw_fake.create_res.status = Status::Ok;
  rw_fake.create_res.obj.reset();
  nfs3::CreateArgs ca;
  ca.where.dir = codec.wrap(kRwId, origin_file);
  ca.where.name = "new";
  const auto cres = run_awaitable(translator->create(client_ctx(rpc_mutates()), ca));
  EXPECT_FALSE(cres.obj);
}

TEST_F(TranslatorHandlesTest, ReaddirplusEntriesComeBackWrapped) {
  const nfs3::FileHandle a = handle_of({0x71}), b = handle_of({0x72, 0x73});
  auto& res = rw_fake.readdirplus_res;
  res.status = Status::Ok;
  res.dir_attributes = nfs3::Fattr{};
  res.dir_attributes->fileid = 1;
  res.dir_attributes->type = nfs3::FileType::Dir;
  res.entries = {
      {1, ".", 1, nfs3::Fattr{}, rw_origin_root},
      {2, "..", 2, nfs3::Fattr{}, handle_of({0x01})},  // outside the export
      {3, "a", 3, nfs3::Fattr{}, a},
      {4, "b", 4, std::nullopt, b},
      {5, "c", 5, std::nullopt, std::nullopt},
  };
  res.entries[1].name_attributes->fileid = 12345;

  nfs3::ReaddirplusArgs args;
  args.dir = codec.root(kRwId);
  args.dircount = args.maxcount = 65536;
  const auto out = run_awaitable(translator->readdirplus(client_ctx(), args));
  EXPECT_EQ(rw_fake.readdirplus_args.dir, rw_origin_root);
  ASSERT_EQ(out.entries.size(), 5u);
  ASSERT_TRUE(out.entries[0].name_handle);
  EXPECT_EQ(*out.entries[0].name_handle, codec.root(kRwId));
  // ".." of the export root is the root itself, with the directory's attributes.
  ASSERT_TRUE(out.entries[1].name_handle);
  EXPECT_EQ(*out.entries[1].name_handle, codec.root(kRwId));
  ASSERT_TRUE(out.entries[1].name_attributes);
  EXPECT_EQ(out.entries[1].name_attributes->fileid, 1u);
  ASSERT_TRUE(out.entries[2].name_handle);
  EXPECT_EQ(unwrap(*out.entries[2].name_handle).origin, a);
  ASSERT_TRUE(out.entries[3].name_handle);
  EXPECT_EQ(unwrap(*out.entries[3].name_handle).origin, b);
  EXPECT_FALSE(out.entries[4].name_handle);
}

TEST_F(TranslatorHandlesTest, ReaddirplusBelowTheRootWrapsDotDot) {
  const nfs3::FileHandle parent = handle_of({0x44, 0x45});
  auto& res = rw_fake.readdirplus_res;
  res.status = Status::Ok;
  res.entries = {{2, "..", 2, std::nullopt, parent}};
  res.dir_attributes = nfs3::Fattr{};
  res.dir_attributes->fileid = 9;  // not the root's (the fake's GETATTR says fileid 0)
  nfs3::ReaddirplusArgs args;
  args.dir = codec.wrap(kRwId, origin_file);
  args.dircount = args.maxcount = 65536;
  const auto out = run_awaitable(translator->readdirplus(client_ctx(), args));
  ASSERT_EQ(out.entries.size(), 1u);
  ASSERT_TRUE(out.entries[0].name_handle);
  EXPECT_EQ(unwrap(*out.entries[0].name_handle).origin, parent);
}

TEST_F(TranslatorHandlesTest, RenameAcrossExportsIsXDev) {
  nfs3::RenameArgs a;
  a.from.dir = codec.wrap(kRwId, origin_file);
  a.from.name = "x";
  a.to.dir = codec.root(kRoId);
  a.to.name = "y";
  const auto res = run_awaitable(translator->rename(client_ctx(rpc_mutates()), a));
  EXPECT_EQ(res.status, Status::XDev);
  EXPECT_EQ(rw_fake.call_count(), 0u);
  EXPECT_EQ(ro_fake.call_count(), 0u);
}

TEST_F(TranslatorHandlesTest, RenameWithinOneExportSendsBothOriginHandles) {
  const nfs3::FileHandle other = handle_of({0x90, 0x91});
  nfs3::RenameArgs a;
  a.from.dir = codec.wrap(kRwId, origin_file);
  a.from.name = "x";
  a.to.dir = codec.root(kRwId);
  a.to.name = "y";
  rw_fake.rename_res.status = Status::Ok;
  EXPECT_EQ(run_awaitable(translator->rename(client_ctx(rpc_mutates()), a)).status, Status::Ok);
  EXPECT_EQ(rw_fake.rename_args.from.dir, origin_file);
  EXPECT_EQ(rw_fake.rename_args.to.dir, rw_origin_root);

  a.to.dir = codec.wrap(kRwId, other);
  run_awaitable(translator->rename(client_ctx(rpc_mutates()), a));
  EXPECT_EQ(rw_fake.rename_args.to.dir, other);
}

TEST_F(TranslatorHandlesTest, RenameToAForgedDirectoryIsBadHandle) {
  nfs3::RenameArgs a;
  a.from.dir = codec.wrap(kRwId, origin_file);
  a.from.name = "x";
  a.to.dir = codec.wrap(kRwId, origin_file);
  a.to.dir.bytes[a.to.dir.len - 1] ^= 0x80;
  a.to.name = "y";
  EXPECT_EQ(run_awaitable(translator->rename(client_ctx(rpc_mutates()), a)).status,
            Status::BadHandle);
  EXPECT_EQ(rw_fake.call_count(), 0u);
}

TEST_F(TranslatorHandlesTest, LinkAcrossExportsIsXDev) {
  nfs3::LinkArgs a;
  a.file = codec.wrap(kRwId, origin_file);
  a.link.dir = codec.wrap(kRoId, origin_file);
  a.link.name = "l";
  EXPECT_EQ(run_awaitable(translator->link(client_ctx(rpc_mutates()), a)).status, Status::XDev);
  EXPECT_EQ(rw_fake.call_count(), 0u);
  EXPECT_EQ(ro_fake.call_count(), 0u);
}

TEST_F(TranslatorHandlesTest, SingleHandleProceduresAllTranslate) {
  const nfs3::FileHandle h = codec.wrap(kRwId, origin_file);
  const CallContext ctx = client_ctx();
  run_awaitable(translator->read(ctx, nfs3::ReadArgs{h, 0, 10}));
  EXPECT_EQ(rw_fake.read_args.file, origin_file);
  run_awaitable(translator->readlink(ctx, nfs3::ReadlinkArgs{h}));
  EXPECT_EQ(rw_fake.readlink_args.symlink, origin_file);
  run_awaitable(translator->readdir(ctx, nfs3::ReaddirArgs{h, 0, {}, 100}));
  EXPECT_EQ(rw_fake.readdir_args.dir, origin_file);
  run_awaitable(translator->fsstat(ctx, nfs3::FsstatArgs{h}));
  EXPECT_EQ(rw_fake.fsstat_args.fsroot, origin_file);
  run_awaitable(translator->fsinfo(ctx, nfs3::FsinfoArgs{h}));
  EXPECT_EQ(rw_fake.fsinfo_args.fsroot, origin_file);
  run_awaitable(translator->pathconf(ctx, nfs3::PathconfArgs{h}));
  EXPECT_EQ(rw_fake.pathconf_args.object, origin_file);
  const CallContext mctx = client_ctx(rpc_mutates());
  run_awaitable(translator->commit(mctx, nfs3::CommitArgs{h, 0, 0}));
  EXPECT_EQ(rw_fake.commit_args.file, origin_file);
  nfs3::RemoveArgs rm{{h, "gone"}};
  run_awaitable(translator->remove(mctx, rm));
  EXPECT_EQ(rw_fake.remove_args.object.dir, origin_file);
  run_awaitable(translator->rmdir(mctx, rm));
  EXPECT_EQ(rw_fake.rmdir_args.object.dir, origin_file);
  EXPECT_EQ(rw_fake.call_count(), 9u);
}

// ---- answers given at once (lookup_now & co.) -------------------------------------

TEST_F(TranslatorHandlesTest, AnAnswerAtOnceIsTranslatedLikeTheCoroutines) {
  getattr(codec.root(kRwId));  // the translator learns the origin root
  rw_fake.lookup_now_res = nfs3::LookupRes{};
  rw_fake.lookup_now_res->object = origin_file;
  auto res = translator->lookup_now(client_ctx(), nfs3::LookupArgs{{codec.root(kRwId), ".."}});
  ASSERT_TRUE(res);
  EXPECT_EQ(rw_fake.calls().back().proc, "lookup_now");
  EXPECT_EQ(rw_fake.lookup_args.what.dir, rw_origin_root);
  EXPECT_EQ(rw_fake.lookup_args.what.name, ".");  // no climbing out of the export
  EXPECT_EQ(rw_fake.last_ctx().export_id, kRwId);
  const auto d = unwrap(res->object);
  EXPECT_EQ(d.export_id, kRwId);
  EXPECT_EQ(d.origin, origin_file);
}

TEST_F(TranslatorHandlesTest, AForgedHandleIsAnsweredAtOnceAndNeverReachesDownstream) {
  getattr(codec.root(kRwId));
  const auto calls = rw_fake.call_count();
  rw_fake.lookup_now_res = nfs3::LookupRes{};
  nfs3::FileHandle forged = codec.wrap(kRwId, origin_file);
  forged.bytes[forged.len - 1] ^= 1;
  auto res = translator->lookup_now(client_ctx(), nfs3::LookupArgs{{forged, "x"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, Status::BadHandle);
  EXPECT_EQ(rw_fake.call_count(), calls);
}

TEST_F(TranslatorHandlesTest, NothingIsAnsweredAtOnceBeforeTheExportRootIsKnown) {
  rw_fake.lookup_now_res = nfs3::LookupRes{};
  EXPECT_FALSE(translator->lookup_now(client_ctx(), nfs3::LookupArgs{{codec.root(kRwId), "x"}}));
  EXPECT_EQ(rw_fake.call_count(), 0u);
  EXPECT_EQ(rw_root_calls, 0);  // and nothing waited for it
}

}  // namespace
}  // namespace nfsgw::test
