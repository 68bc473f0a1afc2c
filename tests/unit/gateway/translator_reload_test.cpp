// HandleTranslator::update (a configuration reload): new settings apply to the next
// call, removed exports answer STALE, added ones are served, and an export that
// stays keeps what it learnt (its origin root handle).
#include <gtest/gtest.h>

#include "tests/unit/gateway/run_awaitable.h"
#include "tests/unit/gateway/translator_fixture.h"

namespace nfsgw::test {
namespace {

using nfs3::Status;

class TranslatorReloadTest : public TranslatorFixture {
 protected:
  const nfs3::FileHandle origin_file = handle_of({0x51, 0x52, 0x53});

  Status getattr(std::uint32_t id, const std::string& address = "127.0.0.1") {
    CallContext ctx = client_ctx();
    ctx.client_address = address;
    nfs3::GetattrArgs a;
    a.object = codec.wrap(id, origin_file);
    return run_awaitable(translator->getattr(ctx, a)).status;
  }
  Status setattr(std::uint32_t id) {
    nfs3::SetattrArgs a;
    a.object = codec.wrap(id, origin_file);
    return run_awaitable(translator->setattr(client_ctx(rpc_mutates()), a)).status;
  }
  /// The uid the export's downstream sees for a root caller.
  std::uint32_t uid_seen_for_root(std::uint32_t id, FakeNfs3Program& fake) {
    CallContext ctx = client_ctx();
    ctx.cred.uid = 0;
    nfs3::GetattrArgs a;
    a.object = codec.wrap(id, origin_file);
    EXPECT_EQ(run_awaitable(translator->getattr(ctx, a)).status, Status::Ok);
    return fake.last_ctx().cred.uid;
  }
};

TEST_F(TranslatorReloadTest, ChangedClientsApplyToTheNextCall) {
  ASSERT_EQ(getattr(kRwId, "10.1.2.3"), Status::Acces);
  config::ExportConfig wider = rw_export;
  wider.clients.push_back(config::Cidr::parse("10.0.0.0/8"));
  translator->update({ExportRoute{&wider, &rw_fake, routes[0].origin_root}, routes[1]});
  EXPECT_EQ(getattr(kRwId, "10.1.2.3"), Status::Ok);
  config::ExportConfig narrower = rw_export;
  narrower.clients = {config::Cidr::parse("192.168.0.0/16")};
  translator->update({ExportRoute{&narrower, &rw_fake, routes[0].origin_root}, routes[1]});
  EXPECT_EQ(getattr(kRwId, "127.0.0.1"), Status::Acces);
  EXPECT_EQ(getattr(kRoId, "127.0.0.1"), Status::Ok);  // the other export is untouched
}

TEST_F(TranslatorReloadTest, ChangedSquashAndAccessApplyToTheNextCall) {
  EXPECT_EQ(uid_seen_for_root(kRoId, ro_fake), 0u);  // squash none
  ASSERT_EQ(setattr(kRoId), Status::RoFs);
  config::ExportConfig changed = ro_export;
  changed.squash = config::Squash::Root;
  changed.access = config::Access::ReadWrite;
  translator->update({routes[0], ExportRoute{&changed, &ro_fake, routes[1].origin_root}});
  EXPECT_EQ(uid_seen_for_root(kRoId, ro_fake), 65000u);
  EXPECT_EQ(setattr(kRoId), Status::Ok);
}

TEST_F(TranslatorReloadTest, RemovedExportAnswersStaleAndComesBackWhenAddedAgain) {
  ASSERT_EQ(getattr(kRoId), Status::Ok);
  translator->update({routes[0]});
  EXPECT_EQ(getattr(kRoId), Status::Stale);
  nfs3::GetattrArgs root;
  root.object = codec.root(kRoId);
  EXPECT_EQ(run_awaitable(translator->getattr(client_ctx(), root)).status, Status::Stale);
  EXPECT_EQ(getattr(kRwId), Status::Ok);
  translator->update(routes);
  EXPECT_EQ(getattr(kRoId), Status::Ok);
}

TEST_F(TranslatorReloadTest, AddedExportIsServedOverItsOwnDownstream) {
  config::ExportConfig added = make_export("/new", 0x3333, config::Access::ReadWrite, config::Squash::Root);
  FakeNfs3Program new_fake;
  const nfs3::FileHandle new_root = handle_of({0x30, 0x31});
  ASSERT_EQ(getattr(0x3333), Status::Stale);
  std::vector<ExportRoute> next = routes;
  next.push_back(ExportRoute{&added, &new_fake, [&]() -> Awaitable<nfs3::FileHandle> { co_return new_root; }});
  translator->update(next);
  EXPECT_EQ(getattr(0x3333), Status::Ok);
  EXPECT_EQ(new_fake.call_count(), 1u);
  nfs3::GetattrArgs a;
  a.object = codec.root(0x3333);
  EXPECT_EQ(run_awaitable(translator->getattr(client_ctx(), a)).status, Status::Ok);
  EXPECT_EQ(new_fake.getattr_args.object, new_root);
}

TEST_F(TranslatorReloadTest, AnExportThatStaysKeepsItsRootHandle) {
  nfs3::GetattrArgs a;
  a.object = codec.root(kRwId);
  ASSERT_EQ(run_awaitable(translator->getattr(client_ctx(), a)).status, Status::Ok);
  ASSERT_EQ(rw_root_calls, 1);
  config::ExportConfig changed = rw_export;
  changed.anon_uid = 1;
  translator->update({ExportRoute{&changed, &rw_fake, routes[0].origin_root}, routes[1]});
  ASSERT_EQ(run_awaitable(translator->getattr(client_ctx(), a)).status, Status::Ok);
  EXPECT_EQ(rw_root_calls, 1);  // not asked again
}

}  // namespace
}  // namespace nfsgw::test
