// squash() and admit() as tables: every squash mode against root, ordinary and
// AUTH_NONE callers; admission by network and by read-only-ness.
#include <gtest/gtest.h>

#include "gateway/translator/export_policy.h"
#include "gateway/rpc/procedure_table.h"
#include "tests/unit/gateway/translator_fixture.h"

namespace nfsgw::test {
namespace {

struct SquashCase {
  config::Squash squash;
  std::uint32_t uid, gid;
  std::vector<std::uint32_t> gids;
  bool auth_none;
  std::uint32_t want_uid, want_gid;
  std::vector<std::uint32_t> want_gids;
};

TEST(ExportPolicyTest, SquashTable) {
  using config::Squash;
  constexpr std::uint32_t U = 65000, G = 65001;  // make_export's anonymous ids
  const std::vector<SquashCase> cases = {
      // squash none: as they come, root included
      {Squash::None, 0, 0, {0, 1}, false, 0, 0, {0, 1}},
      {Squash::None, 1000, 100, {100}, false, 1000, 100, {100}},
      {Squash::None, 0, 0, {0}, true, U, G, {}},
      {Squash::None, 1000, 100, {100}, true, U, G, {}},
      // squash root: only id 0 changes, in uid, gid and every supplementary gid
      {Squash::Root, 0, 0, {0, 4, 0}, false, U, G, {G, 4, G}},
      {Squash::Root, 0, 50, {50}, false, U, 50, {50}},
      {Squash::Root, 1000, 0, {}, false, 1000, G, {}},
      {Squash::Root, 1000, 100, {100, 200}, false, 1000, 100, {100, 200}},
      {Squash::Root, 1000, 100, {100}, true, U, G, {}},
      // squash all: everyone is anonymous, with no supplementary groups
      {Squash::All, 0, 0, {0}, false, U, G, {}},
      {Squash::All, 1000, 100, {100, 200}, false, U, G, {}},
      {Squash::All, 1000, 100, {100}, true, U, G, {}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const SquashCase& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i));
    const config::ExportConfig e = make_export("/e", 1, config::Access::ReadWrite, c.squash);
    Credentials in;
    in.uid = c.uid;
    in.gid = c.gid;
    in.gids.assign(c.gids.begin(), c.gids.end());
    in.auth_none = c.auth_none;
    in.machine_name = "m";
    const Credentials out = squash(in, e);
    EXPECT_EQ(out.uid, c.want_uid);
    EXPECT_EQ(out.gid, c.want_gid);
    EXPECT_EQ(std::vector<std::uint32_t>(out.gids.begin(), out.gids.end()), c.want_gids);
    EXPECT_EQ(out.machine_name, "m");
  }
}

TEST(ExportPolicyTest, SquashUsesTheExportsOwnAnonymousIds) {
  config::ExportConfig e = make_export("/e", 1, config::Access::ReadWrite, config::Squash::All);
  e.anon_uid = 4242;
  e.anon_gid = 4343;
  Credentials in;
  in.uid = 1;
  in.gid = 2;
  const Credentials out = squash(in, e);
  EXPECT_EQ(out.uid, 4242u);
  EXPECT_EQ(out.gid, 4343u);
}

struct AdmitCase {
  std::vector<std::string> clients;
  config::Access access;
  std::string address;
  bool mutates;
  nfs3::Status want;
};

TEST(ExportPolicyTest, AdmitTable) {
  using config::Access;
  using nfs3::Status;
  const std::vector<AdmitCase> cases = {
      {{"127.0.0.0/8"}, Access::ReadWrite, "127.0.0.1", false, Status::Ok},
      {{"127.0.0.0/8"}, Access::ReadWrite, "127.0.0.1", true, Status::Ok},
      {{"127.0.0.0/8"}, Access::ReadOnly, "127.0.0.1", false, Status::Ok},
      {{"127.0.0.0/8"}, Access::ReadOnly, "127.0.0.1", true, Status::RoFs},
      {{"127.0.0.0/8"}, Access::ReadWrite, "10.0.0.1", false, Status::Acces},
      // a refused client is refused first, whatever the call
      {{"127.0.0.0/8"}, Access::ReadOnly, "10.0.0.1", true, Status::Acces},
      {{"10.1.0.0/16", "192.168.0.0/24"}, Access::ReadWrite, "192.168.0.77", false, Status::Ok},
      {{"10.1.0.0/16", "192.168.0.0/24"}, Access::ReadWrite, "192.168.1.77", false, Status::Acces},
      {{"10.1.0.0/16"}, Access::ReadWrite, "10.1.255.255", true, Status::Ok},
      {{"::1/128"}, Access::ReadWrite, "::1", false, Status::Ok},
      {{"::1/128"}, Access::ReadWrite, "127.0.0.1", false, Status::Acces},
      {{"0.0.0.0/0", "::/0"}, Access::ReadWrite, "203.0.113.9", false, Status::Ok},
      {{"0.0.0.0/0", "::/0"}, Access::ReadWrite, "2001:db8::1", false, Status::Ok},
      {{"127.0.0.0/8"}, Access::ReadWrite, "not an address", false, Status::Acces},
      {{}, Access::ReadWrite, "127.0.0.1", false, Status::Acces},  // nobody listed
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const AdmitCase& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i) + ": " + c.address);
    const config::ExportConfig e =
        make_export("/e", 1, c.access, config::Squash::Root, c.clients);
    CallContext ctx;
    ctx.client_address = c.address;
    ctx.proc_flags = c.mutates ? rpc::flags::Mutates : rpc::flags::Idempotent;
    EXPECT_EQ(admit(ctx, e), c.want);
  }
}

}  // namespace
}  // namespace nfsgw::test
