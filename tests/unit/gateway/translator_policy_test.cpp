// HandleTranslator applying each export's policy: which clients, read-only, and the
// credentials the downstream program sees after squashing.
#include <gtest/gtest.h>

#include "tests/unit/gateway/run_awaitable.h"
#include "tests/unit/gateway/translator_fixture.h"

namespace nfsgw::test {
namespace {

using nfs3::Status;

class TranslatorPolicyTest : public TranslatorFixture {
 protected:
  const nfs3::FileHandle origin_file = handle_of({0x51, 0x52, 0x53});

  /// The credentials a GETATTR with `cred` reaches the export's downstream with.
  Credentials seen_upstream(std::uint32_t export_id, const Credentials& cred) {
    CallContext ctx = client_ctx();
    ctx.cred = cred;
    nfs3::GetattrArgs a;
    a.object = codec.wrap(export_id, origin_file);
    FakeNfs3Program& fake = export_id == kRwId ? rw_fake : ro_fake;
    const std::size_t before = fake.call_count();
    EXPECT_EQ(run_awaitable(translator->getattr(ctx, a)).status, Status::Ok);
    EXPECT_EQ(fake.call_count(), before + 1);
    return fake.last_ctx().cred;
  }
};

TEST_F(TranslatorPolicyTest, ClientOutsideTheExportsNetworksIsAcces) {
  CallContext ctx = client_ctx();
  for (const char* addr : {"10.0.0.1", "128.0.0.1", "::1", "unknown", ""}) {
    ctx.client_address = addr;
    nfs3::GetattrArgs a;
    a.object = codec.wrap(kRwId, origin_file);
    EXPECT_EQ(run_awaitable(translator->getattr(ctx, a)).status, Status::Acces) << addr;
    a.object = codec.root(kRoId);
    EXPECT_EQ(run_awaitable(translator->getattr(ctx, a)).status, Status::Acces) << addr;
  }
  EXPECT_EQ(rw_fake.call_count(), 0u);
  EXPECT_EQ(ro_fake.call_count(), 0u);
  EXPECT_EQ(ro_root_calls, 0);  // refused before the origin is even asked
}

TEST_F(TranslatorPolicyTest, ClientInsideOnAnotherLoopbackAddressIsAdmitted) {
  CallContext ctx = client_ctx();
  ctx.client_address = "127.9.8.7";
  nfs3::GetattrArgs a;
  a.object = codec.wrap(kRwId, origin_file);
  EXPECT_EQ(run_awaitable(translator->getattr(ctx, a)).status, Status::Ok);
  EXPECT_EQ(rw_fake.call_count(), 1u);
}

TEST_F(TranslatorPolicyTest, MutatingCallsOnAReadOnlyExportAreRoFs) {
  const nfs3::FileHandle h = codec.wrap(kRoId, origin_file);
  const CallContext m = client_ctx(rpc_mutates());
  nfs3::SetattrArgs sa;
  sa.object = h;
  EXPECT_EQ(run_awaitable(translator->setattr(m, sa)).status, Status::RoFs);
  nfs3::WriteArgs wa;
  wa.file = h;
  EXPECT_EQ(run_awaitable(translator->write(m, wa)).status, Status::RoFs);
  nfs3::CreateArgs ca;
  ca.where = {h, "f"};
  EXPECT_EQ(run_awaitable(translator->create(m, ca)).status, Status::RoFs);
  nfs3::MkdirArgs ma;
  ma.where = {codec.root(kRoId), "d"};
  EXPECT_EQ(run_awaitable(translator->mkdir(m, ma)).status, Status::RoFs);
  nfs3::RemoveArgs ra{{h, "f"}};
  EXPECT_EQ(run_awaitable(translator->remove(m, ra)).status, Status::RoFs);
  nfs3::RenameArgs rn{{h, "a"}, {h, "b"}};
  EXPECT_EQ(run_awaitable(translator->rename(m, rn)).status, Status::RoFs);
  nfs3::LinkArgs la{h, {h, "l"}};
  EXPECT_EQ(run_awaitable(translator->link(m, la)).status, Status::RoFs);
  nfs3::CommitArgs co{h, 0, 0};
  EXPECT_EQ(run_awaitable(translator->commit(m, co)).status, Status::RoFs);
  EXPECT_EQ(ro_fake.call_count(), 0u);
}

TEST_F(TranslatorPolicyTest, ReadsOnAReadOnlyExportPass) {
  nfs3::ReadArgs ra;
  ra.file = codec.wrap(kRoId, origin_file);
  ro_fake.read_res.status = Status::Ok;
  ro_fake.read_res.data = {1, 2};
  const auto res = run_awaitable(translator->read(client_ctx(), ra));
  EXPECT_EQ(res.status, Status::Ok);
  EXPECT_EQ(res.data, (nfs3::Payload{1, 2}));
  EXPECT_EQ(ro_fake.read_args.file, origin_file);
}

TEST_F(TranslatorPolicyTest, MutatingCallsOnAReadWriteExportPass) {
  nfs3::WriteArgs wa;
  wa.file = codec.wrap(kRwId, origin_file);
  rw_fake.write_res.status = Status::Ok;
  EXPECT_EQ(run_awaitable(translator->write(client_ctx(rpc_mutates()), wa)).status, Status::Ok);
  EXPECT_EQ(rw_fake.write_args.file, origin_file);
}

TEST_F(TranslatorPolicyTest, AccessOnAReadOnlyExportMasksChanges) {
  constexpr std::uint32_t all = nfs3::access::Read | nfs3::access::Lookup |
                                nfs3::access::Modify | nfs3::access::Extend |
                                nfs3::access::Delete | nfs3::access::Execute;
  ro_fake.access_res.status = Status::Ok;
  ro_fake.access_res.access = all;
  rw_fake.access_res = ro_fake.access_res;

  nfs3::AccessArgs a;
  a.object = codec.wrap(kRoId, origin_file);
  a.access = all;
  const auto ro = run_awaitable(translator->access(client_ctx(), a));
  EXPECT_EQ(ro.status, Status::Ok);
  EXPECT_EQ(ro.access, nfs3::access::Read | nfs3::access::Lookup | nfs3::access::Execute);
  EXPECT_EQ(ro_fake.access_args.access, all);  // the question itself is passed on

  a.object = codec.wrap(kRwId, origin_file);
  EXPECT_EQ(run_awaitable(translator->access(client_ctx(), a)).access, all);
}

Credentials cred(std::uint32_t uid, std::uint32_t gid, std::vector<std::uint32_t> gids,
                 bool none = false) {
  Credentials c;
  c.uid = uid;
  c.gid = gid;
  c.gids.assign(gids.begin(), gids.end());
  c.auth_none = none;
  return c;
}

TEST_F(TranslatorPolicyTest, SquashRootMapsRootIdsToAnonymous) {
  // rw_export: squash root, anon 65000/65001.
  Credentials c = seen_upstream(kRwId, cred(0, 0, {0, 5, 0}));
  EXPECT_EQ(c.uid, 65000u);
  EXPECT_EQ(c.gid, 65001u);
  EXPECT_EQ(c.gids, (AuthGroups{65001, 5, 65001}));

  c = seen_upstream(kRwId, cred(1000, 100, {100, 200}));
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_EQ(c.gid, 100u);
  EXPECT_EQ(c.gids, (AuthGroups{100, 200}));
}

TEST_F(TranslatorPolicyTest, SquashNoneKeepsRoot) {
  // ro_export: squash none.
  Credentials c = seen_upstream(kRoId, cred(0, 0, {0, 7}));
  EXPECT_EQ(c.uid, 0u);
  EXPECT_EQ(c.gid, 0u);
  EXPECT_EQ(c.gids, (AuthGroups{0, 7}));
}

TEST_F(TranslatorPolicyTest, SquashAllMapsEveryoneToAnonymous) {
  rw_export.squash = config::Squash::All;
  Credentials c = seen_upstream(kRwId, cred(1000, 100, {100, 200}));
  EXPECT_EQ(c.uid, 65000u);
  EXPECT_EQ(c.gid, 65001u);
  EXPECT_TRUE(c.gids.empty());
}

TEST_F(TranslatorPolicyTest, AuthNoneIsAnonymousEvenWithSquashNone) {
  Credentials c = seen_upstream(kRoId, cred(0, 0, {0}, /*none=*/true));
  EXPECT_EQ(c.uid, 65000u);
  EXPECT_EQ(c.gid, 65001u);
  EXPECT_TRUE(c.gids.empty());
}

TEST_F(TranslatorPolicyTest, MachineNameAndXidReachDownstream) {
  Credentials in = cred(1000, 100, {});
  in.machine_name = "client-host";
  EXPECT_EQ(seen_upstream(kRwId, in).machine_name, "client-host");
}

}  // namespace
}  // namespace nfsgw::test
