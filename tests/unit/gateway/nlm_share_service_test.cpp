// gateway/nlm/share_service.h: SHARE and UNSHARE checked (handle, grace, bound)
// and carried to a fake origin that keeps DOS share reservations per owner and
// file and refuses conflicting ones (access against deny), as nfs-ganesha does,
// so that what the origin holds can be checked after every step; and the origin's
// restart (every reservation asked for again in its grace period).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gateway/nlm/share_service.h"
#include "run_awaitable.h"

namespace nfsgw::nlm::nlm_share_service_test {
namespace {

using nlm4::ShareAccess;
using nlm4::ShareMode;
using nlm4::Stat;
using nfsgw::test::run_awaitable;
using namespace std::chrono_literals;

/// Share reservations by (file, owner handle): access and deny bits. Locks are
/// not its business (nlm_service_test's fake): those calls are Unreachable.
class FakeOrigin final : public OriginLocks {
 public:
  Outcome mode = Outcome::Answered;
  bool restarted = false;  // since restart(): the grace rules below apply
  bool in_grace = false;
  /// A restart: every reservation dropped; in a grace period when `grace`.
  void restart(bool grace) {
    held.clear();
    restarted = true;
    in_grace = grace;
  }
  /// A client of the origin outside nfsgw takes a reservation.
  void outsider(const std::string& f, unsigned access, unsigned deny) {
    held[std::make_pair(f, nlm4::Netobj{0xEE})] = Bits{access, deny};
  }

  Awaitable<OriginReply<nlm4::TestRes>> test(const Credentials&, nlm4::TestArgs) override {
    co_return OriginReply<nlm4::TestRes>{};
  }
  Awaitable<OriginReply<nlm4::Res>> lock(const Credentials&, nlm4::LockArgs) override {
    co_return OriginReply<nlm4::Res>{};
  }
  Awaitable<OriginReply<nlm4::Res>> cancel(const Credentials&, nlm4::CancelArgs) override {
    co_return OriginReply<nlm4::Res>{};
  }
  Awaitable<OriginReply<nlm4::Res>> unlock(const Credentials&, nlm4::UnlockArgs) override {
    co_return OriginReply<nlm4::Res>{};
  }
  Awaitable<bool> notify_restart(std::string, std::int32_t) override { co_return true; }
  int calls = 0;
  std::vector<nlm4::ShareArgs> seen;
  std::vector<Credentials> creds;
  struct Bits {
    unsigned access = 0, deny = 0;
  };
  std::map<std::pair<std::string, nlm4::Netobj>, Bits> held;

  static std::string file(const nfs3::FileHandle& fh) { return std::string(fh.bytes.begin(), fh.bytes.begin() + fh.len); }
  std::size_t at(const std::string& f) const {
    std::size_t n = 0;
    for (const auto& [k, b] : held) n += k.first == f ? 1 : 0;
    return n;
  }

  Awaitable<OriginReply<nlm4::ShareRes>> share(const Credentials& cred, nlm4::ShareArgs a) override {
    OriginReply<nlm4::ShareRes> r;
    r.outcome = mode;
    if (!answers(cred, a)) co_return r;
    if (restarted && a.reclaim != in_grace) {
      // As nfs-ganesha: in its grace period only reclaims, after it no reclaims.
      r.reply = nlm4::ShareRes{a.cookie, Stat::DeniedGracePeriod, 0};
      co_return r;
    }
    const unsigned access = static_cast<unsigned>(a.share.access), deny = static_cast<unsigned>(a.share.mode);
    const auto key = std::make_pair(file(a.share.fh), a.share.oh);
    for (const auto& [k, b] : held) {
      if (k.first != key.first || k == key) continue;
      if ((access & b.deny) != 0 || (deny & b.access) != 0) {
        r.reply = nlm4::ShareRes{a.cookie, Stat::Denied, 0};
        co_return r;
      }
    }
    Bits& b = held[key];
    b.access |= access;
    b.deny |= deny;
    r.reply = nlm4::ShareRes{a.cookie, Stat::Granted, 1};
    co_return r;
  }
  Awaitable<OriginReply<nlm4::ShareRes>> unshare(const Credentials& cred, nlm4::ShareArgs a) override {
    OriginReply<nlm4::ShareRes> r;
    r.outcome = mode;
    if (!answers(cred, a)) co_return r;
    auto it = held.find(std::make_pair(file(a.share.fh), a.share.oh));
    if (it != held.end()) {
      it->second.access &= ~static_cast<unsigned>(a.share.access);
      it->second.deny &= ~static_cast<unsigned>(a.share.mode);
      if (it->second.access == 0 && it->second.deny == 0) held.erase(it);
    }
    r.reply = nlm4::ShareRes{a.cookie, Stat::Granted, 2};
    co_return r;
  }

 private:
  bool answers(const Credentials& cred, const nlm4::ShareArgs& a) {
    ++calls;
    seen.push_back(a);
    creds.push_back(cred);
    return mode == Outcome::Answered;
  }
};

nfs3::FileHandle handle(const std::string& text) {
  std::vector<std::uint8_t> b(text.begin(), text.end());
  return nfs3::FileHandle(b);
}

/// "good..." handles are admitted into export 7 (origin handle "o" + the rest, the
/// caller's uid 1000 after squash); "deny..." refused by the export; else forged.
CheckedHandle check(const nfs3::FileHandle& fh) {
  const std::string s(fh.bytes.begin(), fh.bytes.begin() + fh.len);
  CheckedHandle c;
  c.verdict = s.starts_with("good") ? Stat::Granted : s.starts_with("deny") ? Stat::Denied : Stat::StaleFh;
  c.export_id = 7;
  c.origin = handle("o" + s.substr(std::min<std::size_t>(4, s.size())));
  c.cred.uid = 1000;
  c.cred.gid = 100;
  return c;
}

struct Fixture {
  FakeOrigin origin;
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::time_point{} + 1h;
  ShareService service;

  explicit Fixture(std::size_t max_shares = 100, std::chrono::seconds grace = 0s)
      : service(
            [](const CallContext&, const nfs3::FileHandle& fh) -> Awaitable<CheckedHandle> { co_return check(fh); },
            [this](std::uint32_t id) -> OriginLocks* { return id == 7 ? &origin : nullptr; },
            ShareSettings{max_shares, grace, "gw1", "run1"}, [this] { return now; }) {
    service.begin_grace();
  }
  static CallContext from(const std::string& address) {
    CallContext c;
    c.client_address = address;
    return c;
  }
  static nlm4::ShareArgs args(const std::string& fh, const std::string& host, std::uint8_t owner, ShareAccess access,
                              ShareMode deny, bool reclaim = false) {
    nlm4::ShareArgs a;
    a.cookie = {owner, 9};
    a.share.caller_name = host;
    a.share.fh = handle(fh);
    a.share.oh = {owner, 0xAB};
    a.share.access = access;
    a.share.mode = deny;
    a.reclaim = reclaim;
    return a;
  }
  Stat share(const std::string& addr, nlm4::ShareArgs a) {
    auto r = run_awaitable(service.share(from(addr), std::move(a)));
    return r ? r->stat : Stat::Failed;
  }
  Stat unshare(const std::string& addr, nlm4::ShareArgs a) {
    auto r = run_awaitable(service.unshare(from(addr), std::move(a)));
    return r ? r->stat : Stat::Failed;
  }
};

const std::string A = "10.0.0.1", B = "10.0.0.2";

TEST(NlmShareService, AShareIsHeldAtTheOriginInNfsgwsNameAndGoesAtUnshare) {
  Fixture f;
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::ReadWrite, ShareMode::DenyWrite)),
            Stat::Granted);
  ASSERT_EQ(f.origin.seen.size(), 1u);
  const nlm4::ShareArgs& sent = f.origin.seen[0];
  EXPECT_EQ(sent.share.caller_name, "gw1") << "nfsgw's caller name, not the client's";
  EXPECT_EQ(sent.share.fh, handle("oF")) << "the origin's handle";
  EXPECT_EQ(std::string(sent.share.oh.begin(), sent.share.oh.end()), "nfsgw/run1-s/1");
  EXPECT_EQ(sent.share.access, ShareAccess::ReadWrite);
  EXPECT_EQ(sent.share.mode, ShareMode::DenyWrite);
  EXPECT_FALSE(sent.reclaim);
  EXPECT_EQ(f.origin.creds[0].uid, 1000u) << "the caller's credentials after squash";
  EXPECT_EQ(f.origin.at("oF"), 1u);
  EXPECT_EQ(f.service.share_count(), 1u);

  // Another client of nfsgw wanting to write is refused by the origin (its own owner there).
  EXPECT_EQ(f.share(B, Fixture::args("goodF", "hostB", 1, ShareAccess::Write, ShareMode::DenyNone)), Stat::Denied);
  EXPECT_EQ(f.service.share_count(), 1u);
  EXPECT_EQ(f.service.owner_count(), 1u) << "the refused owner is forgotten";
  // A reader that denies nothing is compatible.
  EXPECT_EQ(f.share(B, Fixture::args("goodF", "hostB", 1, ShareAccess::Read, ShareMode::DenyNone)), Stat::Granted);

  // UNSHARE releases every bit of A's reservation at the origin; then B may write.
  EXPECT_EQ(f.unshare(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyNone)), Stat::Granted);
  EXPECT_EQ(f.origin.seen.back().share.access, ShareAccess::ReadWrite);
  EXPECT_EQ(f.origin.seen.back().share.mode, ShareMode::DenyReadWrite);
  EXPECT_EQ(f.origin.at("oF"), 1u) << "B's reader stays";
  EXPECT_EQ(f.share(B, Fixture::args("goodF", "hostB", 2, ShareAccess::Write, ShareMode::DenyNone)), Stat::Granted);
  // An UNSHARE of nothing held through nfsgw does not reach the origin.
  const int calls = f.origin.calls;
  EXPECT_EQ(f.unshare(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyNone)), Stat::Granted);
  EXPECT_EQ(f.origin.calls, calls);
}

TEST(NlmShareService, AForgedOrRefusedHandleReachesNothing) {
  Fixture f;
  for (const std::string fh : {"forged", "", "goo"}) {
    EXPECT_EQ(f.share(A, Fixture::args(fh, "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::StaleFh) << fh;
    EXPECT_EQ(f.unshare(A, Fixture::args(fh, "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::StaleFh);
  }
  EXPECT_EQ(f.share(A, Fixture::args("denyF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Denied);
  EXPECT_EQ(f.origin.calls, 0);
  EXPECT_EQ(f.service.counts().stale, 6u);
  EXPECT_EQ(f.service.owner_count(), 0u);
}

TEST(NlmShareService, InGraceOnlyReclaimsAfterItNoReclaims) {
  Fixture f(100, 30s);
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)),
            Stat::DeniedGracePeriod);
  EXPECT_EQ(f.origin.calls, 0);
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite, true)),
            Stat::Granted);
  EXPECT_FALSE(f.origin.seen.back().reclaim) << "a new reservation at the origin";
  // UNSHARE in grace is let through.
  EXPECT_EQ(f.unshare(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  EXPECT_EQ(f.origin.at("oF"), 0u);
  f.now += 31s;
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite, true)),
            Stat::DeniedGracePeriod);
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
}

TEST(NlmShareService, PastTheBoundDeniedNoLocksBeforeTheOrigin) {
  Fixture f(/*max_shares=*/2);
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyNone)), Stat::Granted);
  EXPECT_EQ(f.share(A, Fixture::args("goodG", "hostA", 1, ShareAccess::Read, ShareMode::DenyNone)), Stat::Granted);
  const int calls = f.origin.calls;
  EXPECT_EQ(f.share(A, Fixture::args("goodH", "hostA", 1, ShareAccess::Read, ShareMode::DenyNone)),
            Stat::DeniedNoLocks);
  EXPECT_EQ(f.share(B, Fixture::args("goodF", "hostB", 2, ShareAccess::Read, ShareMode::DenyNone)),
            Stat::DeniedNoLocks);
  EXPECT_EQ(f.origin.calls, calls);
  EXPECT_EQ(f.service.counts().over_bound, 2u);
  // The same reservation again is no new one: it still goes.
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  // Room again after an UNSHARE.
  EXPECT_EQ(f.unshare(A, Fixture::args("goodG", "hostA", 1, ShareAccess::Read, ShareMode::DenyNone)), Stat::Granted);
  EXPECT_EQ(f.share(A, Fixture::args("goodH", "hostA", 1, ShareAccess::Read, ShareMode::DenyNone)), Stat::Granted);
}

TEST(NlmShareService, AnOriginThatDoesNotAnswerGetsNoReplyAndTheReservationIsReleasedLater) {
  Fixture f;
  f.origin.mode = Outcome::NoAnswer;
  auto r = run_awaitable(f.service.share(Fixture::from(A),
                                         Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)));
  EXPECT_FALSE(r) << "no reply: the client sends the SHARE again";
  EXPECT_EQ(f.service.share_count(), 1u) << "kept: the origin may hold it";
  f.origin.mode = Outcome::Unreachable;
  EXPECT_EQ(f.share(A, Fixture::args("goodG", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)),
            Stat::DeniedNoLocks);
  f.origin.mode = Outcome::Answered;
  // FREE_ALL of hostA from A's address releases it at the origin.
  const int calls = f.origin.calls;
  EXPECT_EQ(run_awaitable(f.service.free_all(Fixture::from(A), nlm4::Notify{"hostA", 3})), 1u);
  EXPECT_EQ(f.origin.calls, calls + 1);
  EXPECT_EQ(f.origin.seen.back().share.access, ShareAccess::ReadWrite);
  EXPECT_EQ(f.service.share_count(), 0u);
  EXPECT_EQ(f.service.owner_count(), 0u);
}

TEST(NlmShareService, AHostsRebootReleasesItsReservationsOnly) {
  Fixture f;
  EXPECT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  EXPECT_EQ(f.share(A, Fixture::args("goodG", "hostA", 2, ShareAccess::Write, ShareMode::DenyRead)), Stat::Granted);
  EXPECT_EQ(f.share(B, Fixture::args("goodH", "hostB", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  // FREE_ALL names hostA but comes from B's address: nothing of A's goes.
  EXPECT_EQ(run_awaitable(f.service.free_all(Fixture::from(B), nlm4::Notify{"hostA", 3})), 0u);
  EXPECT_EQ(f.service.share_count(), 3u);
  // statd's callback: hostA rebooted, from any address.
  EXPECT_EQ(run_awaitable(f.service.host_rebooted("hostA")), 2u);
  EXPECT_EQ(f.origin.at("oF") + f.origin.at("oG"), 0u);
  EXPECT_EQ(f.origin.at("oH"), 1u);
  EXPECT_EQ(f.service.share_count(), 1u);
  EXPECT_EQ(f.service.counts().released, 2u);
  // A release the origin does not answer keeps the reservation for a later one.
  f.origin.mode = Outcome::NoAnswer;
  EXPECT_EQ(run_awaitable(f.service.host_rebooted("hostB")), 0u);
  EXPECT_EQ(f.service.share_count(), 1u);
  f.origin.mode = Outcome::Answered;
  EXPECT_EQ(run_awaitable(f.service.host_rebooted("hostB")), 1u);
  EXPECT_EQ(f.service.share_count(), 0u);
}

TEST(NlmShareService, AnOriginsRestartTakesEveryReservationAgainInItsGrace) {
  Fixture f;
  ASSERT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  ASSERT_EQ(f.share(B, Fixture::args("goodG", "hostB", 1, ShareAccess::Write, ShareMode::DenyRead)), Stat::Granted);
  f.origin.restart(/*grace=*/true);
  ASSERT_EQ(f.origin.at("oF") + f.origin.at("oG"), 0u) << "control: the restart dropped both";
  const std::size_t before = f.origin.seen.size();
  EXPECT_EQ(run_awaitable(f.service.origin_restarted({7})), 2u);
  EXPECT_EQ(f.origin.at("oF"), 1u);
  EXPECT_EQ(f.origin.at("oG"), 1u);
  ASSERT_EQ(f.origin.seen.size(), before + 2);
  for (std::size_t i = before; i < f.origin.seen.size(); ++i) {
    EXPECT_TRUE(f.origin.seen[i].reclaim) << "inside the origin's grace period";
    EXPECT_EQ(f.origin.seen[i].share.caller_name, "gw1");
  }
  // As granted: F read and deny write, so the origin's outsider writer is refused.
  const nlm4::ShareArgs& again_f = f.origin.seen[before].share.fh == handle("oF") ? f.origin.seen[before]
                                                                                  : f.origin.seen[before + 1];
  EXPECT_EQ(again_f.share.access, ShareAccess::Read);
  EXPECT_EQ(again_f.share.mode, ShareMode::DenyWrite);
  EXPECT_EQ(f.origin.creds.back().uid, 1000u) << "the credentials of the call that took it";
  // Other exports' origins are not asked.
  const int calls = f.origin.calls;
  EXPECT_EQ(run_awaitable(f.service.origin_restarted({8})), 0u);
  EXPECT_EQ(f.origin.calls, calls);
  // The reservations are still nfsgw's to release.
  EXPECT_EQ(f.unshare(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  EXPECT_EQ(f.origin.at("oF"), 0u);
}

TEST(NlmShareService, AfterTheOriginsGraceANewReservationAndAConflictIsLostLoudly) {
  Fixture f;
  ASSERT_EQ(f.share(A, Fixture::args("goodF", "hostA", 1, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  ASSERT_EQ(f.share(A, Fixture::args("goodG", "hostA", 2, ShareAccess::Read, ShareMode::DenyWrite)), Stat::Granted);
  f.origin.restart(/*grace=*/false);
  // Meanwhile a client of the origin opened G for writing.
  f.origin.outsider("oG", /*access=*/2, /*deny=*/0);
  EXPECT_EQ(run_awaitable(f.service.origin_restarted({7})), 1u);
  EXPECT_EQ(f.origin.at("oF"), 1u) << "asked again as a new reservation";
  EXPECT_FALSE(f.origin.seen.back().reclaim);
  EXPECT_EQ(f.service.counts().lost, 1u) << "G: denied by the outsider's write";
  EXPECT_EQ(f.service.share_count(), 1u) << "the lost one is forgotten";
}

}  // namespace
}  // namespace nfsgw::nlm::nlm_share_service_test
