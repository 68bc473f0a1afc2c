// A cached LOOKUP, listing or link target goes only to a caller whose permission
// is known: from the origin's ACCESS answer for that credential, or (access_check =
// "local") from the cached mode bits.
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

class PermissionsTest : public MetaCacheTest {
 protected:
  /// root warms a 0700 root-owned directory (and a 0755 one) with a file and a link each.
  void warm_as_root() {
    secret = origin.add_dir(origin.root(), "secret", 0700, 0, 0);
    origin.add_file(secret, "f", 0600);
    secret_link = origin.add_symlink(secret, "l", "f", 0700);
    pub = origin.add_dir(origin.root(), "pub", 0755, 0, 0);
    origin.add_file(pub, "f", 0644);
    ASSERT_EQ(list(secret), (std::vector<std::string>{"f", "l"}));
    ASSERT_EQ(list(pub), std::vector<std::string>{"f"});
    ASSERT_EQ(lookup(secret, "f").status, Status::Ok);
    ASSERT_EQ(lookup(pub, "f").status, Status::Ok);
    ASSERT_EQ(readlink(secret_link).data, "f");
    ASSERT_EQ(readlink(secret_link).data, "f");
    // Warm for root: served without the origin.
    origin.reset_calls();
    EXPECT_EQ(lookup(secret, "f").status, Status::Ok);
    EXPECT_EQ(list(secret), (std::vector<std::string>{"f", "l"}));
    EXPECT_EQ(readlink(secret_link).data, "f");
    EXPECT_EQ(origin.total_calls(), 0u);
  }
  nfs3::FileHandle secret, secret_link, pub;
};

TEST_F(PermissionsTest, OthersGetTheOriginsRefusalNeverTheCachedAnswer) {
  start();
  warm_as_root();
  for (int round = 1; round <= 2; ++round) {
    SCOPED_TRACE(round);
    EXPECT_EQ(lookup(secret, "f", as(kUser)).status, Status::Acces);
    EXPECT_EQ(origin.calls(Proc::Lookup), static_cast<std::size_t>(round));
    EXPECT_EQ(readdirplus(secret, as(kUser)).status, Status::Acces);
    EXPECT_EQ(origin.calls(Proc::Readdirplus), static_cast<std::size_t>(round));
    EXPECT_EQ(readdir(secret, as(kUser)).status, Status::Acces);
    EXPECT_EQ(origin.calls(Proc::Readdir), static_cast<std::size_t>(round));
    EXPECT_EQ(readlink(secret_link, as(kUser)).status, Status::Acces);
    EXPECT_EQ(origin.calls(Proc::Readlink), static_cast<std::size_t>(round));
  }
  // And root still gets the cached answers.
  origin.reset_calls();
  EXPECT_EQ(lookup(secret, "f").status, Status::Ok);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(PermissionsTest, UnderOriginCheckAnotherCallersFirstLookupAsksTheOrigin) {
  start();
  warm_as_root();
  EXPECT_EQ(lookup(pub, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(origin.calls(Proc::Access), 1u);  // learnt meanwhile
  origin.reset_calls();
  EXPECT_EQ(lookup(pub, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(list(pub, as(kUser)), std::vector<std::string>{"f"});
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(PermissionsTest, LocalCheckLetsTheModeBitsDecideWithoutTheOrigin) {
  settings.access_check = cache::AccessCheck::Local;
  start();
  warm_as_root();
  origin.reset_calls();
  EXPECT_EQ(lookup(pub, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(list(pub, as(kUser)), std::vector<std::string>{"f"});
  EXPECT_EQ(origin.total_calls(), 0u);

  EXPECT_EQ(lookup(secret, "f", as(kUser)).status, Status::Acces);
  EXPECT_EQ(readdirplus(secret, as(kUser)).status, Status::Acces);
  EXPECT_EQ(readlink(secret_link, as(kUser)).status, Status::Acces);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
  EXPECT_EQ(origin.calls(Proc::Readlink), 1u);
  EXPECT_EQ(origin.calls(Proc::Access), 0u);  // the mode bits said no
}

TEST_F(PermissionsTest, LocalCheckStillAsksTheOriginForRoot) {
  settings.access_check = cache::AccessCheck::Local;
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  origin.add_file(d, "f");
  ASSERT_EQ(list(d), std::vector<std::string>{"f"});
  EXPECT_EQ(origin.calls(Proc::Access), 1u);  // root may be squashed: the mode bits do not decide
}

TEST_F(PermissionsTest, ACachedAccessAnswerThatGrantsLookupLetsTheLookupHit) {
  start();
  warm_as_root();
  // Another caller whose permission is unknown goes to the origin.
  EXPECT_EQ(lookup(pub, "f", as(kUser + 1)).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);

  auto acc = access(pub, nfs3::access::Lookup | nfs3::access::Read, as(kUser));
  ASSERT_EQ(acc.status, Status::Ok);
  EXPECT_EQ(acc.access, nfs3::access::Lookup | nfs3::access::Read);
  origin.reset_calls();
  EXPECT_EQ(lookup(pub, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(access(pub, nfs3::access::Lookup, as(kUser)).access, nfs3::access::Lookup);
  EXPECT_EQ(origin.total_calls(), 0u);
}

TEST_F(PermissionsTest, AccessAnswersAreKeptPerCredentialGroupsIncluded) {
  start();
  const auto shared = origin.add_dir(origin.root(), "shared", 0750, 0, 50);
  origin.add_file(shared, "f");
  ASSERT_EQ(list(shared), std::vector<std::string>{"f"});
  CallContext member = as(kUser);
  member.cred.gids = {40, 50};
  ASSERT_EQ(access(shared, nfs3::access::Lookup, member).access, nfs3::access::Lookup);
  origin.reset_calls();
  CallContext reordered = member;
  reordered.cred.gids = {50, 40};
  EXPECT_EQ(lookup(shared, "f", reordered).status, Status::Ok);  // the same credential
  EXPECT_EQ(origin.total_calls(), 0u);
  // Same uid and gid, but not in group 50: the member's answer is not theirs.
  EXPECT_EQ(lookup(shared, "f", as(kUser)).status, Status::Acces);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
}

TEST_F(PermissionsTest, AnAccessAnswerThatRefusesKeepsTheCallerAtTheOrigin) {
  start();
  warm_as_root();
  auto acc = access(secret, nfs3::access::Lookup | nfs3::access::Read, as(kUser));
  ASSERT_EQ(acc.status, Status::Ok);
  EXPECT_EQ(acc.access, 0u);
  origin.reset_calls();
  EXPECT_EQ(lookup(secret, "f", as(kUser)).status, Status::Acces);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(origin.calls(Proc::Access), 0u);  // the refusal is known: nothing more to learn
}

TEST_F(PermissionsTest, AChmodThroughTheLayerRevokesCachedAccessAnswers) {
  start();
  warm_as_root();
  ASSERT_EQ(access(pub, nfs3::access::Lookup | nfs3::access::Read, as(kUser)).access,
            nfs3::access::Lookup | nfs3::access::Read);
  origin.reset_calls();
  ASSERT_EQ(lookup(pub, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(origin.total_calls(), 0u);

  ASSERT_EQ(chmod(pub, 0700).status, Status::Ok);
  EXPECT_EQ(lookup(pub, "f", as(kUser)).status, Status::Acces);
  EXPECT_EQ(readdirplus(pub, as(kUser)).status, Status::Acces);
  EXPECT_EQ(access(pub, nfs3::access::Lookup, as(kUser)).access, 0u);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
  EXPECT_EQ(origin.calls(Proc::Readdirplus), 1u);
  // The cached lookups themselves survived the chmod (it changed no entry): once
  // root's permission is known again, they are served.
  ASSERT_EQ(access(pub, nfs3::access::Lookup).access, nfs3::access::Lookup);
  origin.reset_calls();
  EXPECT_EQ(lookup(pub, "f").status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Lookup), 0u);
}

TEST_F(PermissionsTest, AChmodThroughTheLayerIsSeenByTheLocalCheck) {
  settings.access_check = cache::AccessCheck::Local;
  start();
  warm_as_root();
  origin.reset_calls();
  ASSERT_EQ(lookup(pub, "f", as(kUser)).status, Status::Ok);
  EXPECT_EQ(origin.total_calls(), 0u);
  ASSERT_EQ(chmod(pub, 0700).status, Status::Ok);
  EXPECT_EQ(lookup(pub, "f", as(kUser)).status, Status::Acces);
  EXPECT_EQ(origin.calls(Proc::Lookup), 1u);
}

}  // namespace
}  // namespace nfsgw::metacache::test
