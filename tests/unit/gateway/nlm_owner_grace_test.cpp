// gateway/nlm/owner_map.h (each client's lock owner gets a distinct owner at the
// origin, bounded) and gateway/nlm/grace_period.h (only reclaims in grace, with a
// clock the test drives).
#include <gtest/gtest.h>

#include <set>

#include "gateway/nlm/grace_period.h"
#include "gateway/nlm/owner_map.h"

namespace nfsgw::nlm::nlm_owner_grace_test {
namespace {

using nlm4::Stat;
using namespace std::chrono_literals;

ClientOwner owner(std::string address, std::string name, nlm4::Netobj oh, std::int32_t svid) {
  return {std::move(address), std::move(name), std::move(oh), svid};
}

std::string text(const nlm4::Netobj& b) { return std::string(b.begin(), b.end()); }

TEST(NlmOwnerMap, EveryFieldOfTheClientOwnerMakesADistinctOriginOwner) {
  OwnerMap m("boot7", 100);
  const ClientOwner base = owner("10.0.0.1", "web1", {1, 2, 3}, 100);
  std::vector<ClientOwner> owners{base};
  owners.push_back(owner("10.0.0.2", "web1", {1, 2, 3}, 100));  // address
  owners.push_back(owner("10.0.0.1", "web2", {1, 2, 3}, 100));  // caller_name
  owners.push_back(owner("10.0.0.1", "web1", {1, 2, 4}, 100));  // owner handle
  owners.push_back(owner("10.0.0.1", "web1", {1, 2, 3}, 101));  // svid
  owners.push_back(owner("10.0.0.1", "web1", {}, 100));         // empty handle
  std::set<OwnerId> ids;
  std::set<std::string> handles;
  std::set<std::int32_t> svids;
  for (const ClientOwner& o : owners) {
    const auto id = m.acquire(o);
    ASSERT_TRUE(id);
    ids.insert(*id);
    const auto origin = m.origin(*id);
    ASSERT_TRUE(origin);
    handles.insert(text(origin->oh));
    svids.insert(origin->svid);
    EXPECT_GT(origin->svid, 0);
    EXPECT_EQ(origin->svid, static_cast<std::int32_t>(*id));
    EXPECT_EQ(text(origin->oh), "nfsgw/boot7/" + std::to_string(*id));
    ASSERT_NE(m.client(*id), nullptr);
    EXPECT_EQ(*m.client(*id), o);
  }
  EXPECT_EQ(ids.size(), owners.size());
  EXPECT_EQ(handles.size(), owners.size());
  EXPECT_EQ(svids.size(), owners.size());
  EXPECT_EQ(m.size(), owners.size());
  // The same owner again is the same id.
  EXPECT_EQ(m.acquire(base), m.find(base));
  EXPECT_EQ(m.size(), owners.size());
}

TEST(NlmOwnerMap, TheOriginsOwnerLeadsBackToTheClients) {
  OwnerMap m("gw-a", 10);
  const OwnerId a = *m.acquire(owner("10.0.0.1", "web1", {7}, 1));
  const OwnerId b = *m.acquire(owner("10.0.0.2", "web2", {8}, 2));
  EXPECT_EQ(m.find(*m.origin(a)), a);
  EXPECT_EQ(m.find(*m.origin(b)), b);
  OriginOwner wrong_svid = *m.origin(a);
  wrong_svid.svid = static_cast<std::int32_t>(b);
  EXPECT_FALSE(m.find(wrong_svid));
  const std::string other_instance = "nfsgw/gw-b/" + std::to_string(a);
  EXPECT_FALSE(m.find(OriginOwner{nlm4::Netobj(other_instance.begin(), other_instance.end()),
                                  static_cast<std::int32_t>(a)}));
  for (std::string bad : {"nfsgw/gw-a/", "nfsgw/gw-a/0", "nfsgw/gw-a/01", "nfsgw/gw-a/1x", "nfsgw/gw-a/99999999999",
                          "nfsgw/gw-a/-1", "", "garbage"}) {
    EXPECT_FALSE(m.find(OriginOwner{nlm4::Netobj(bad.begin(), bad.end()), 1})) << bad;
  }
  const OriginOwner was_a = *m.origin(a);
  m.forget(a);
  EXPECT_FALSE(m.find(was_a)) << "a forgotten owner";
  EXPECT_FALSE(m.origin(a));
  EXPECT_EQ(m.client(a), nullptr);
}

TEST(NlmOwnerMap, BoundedWithAClearRefusal) {
  OwnerMap m("x", 2);
  const ClientOwner o1 = owner("a", "h1", {1}, 1), o2 = owner("a", "h1", {2}, 1), o3 = owner("a", "h1", {3}, 1);
  const OwnerId id1 = *m.acquire(o1);
  ASSERT_TRUE(m.acquire(o2));
  EXPECT_FALSE(m.acquire(o3)) << "past max_owners";
  EXPECT_EQ(m.acquire(o1), id1) << "known owners are still found";
  m.forget(id1);
  const auto id3 = m.acquire(o3);
  ASSERT_TRUE(id3);
  EXPECT_NE(*id3, id1) << "a forgotten id is not given again at once";
  EXPECT_EQ(m.size(), 2u);
  m.forget(12345);  // unknown: harmless
  EXPECT_EQ(m.size(), 2u);
}

TEST(NlmOwnerMap, OwnersOfARebootedHost) {
  OwnerMap m("x", 10);
  const OwnerId a1 = *m.acquire(owner("10.0.0.1", "web1", {1}, 1));
  const OwnerId b1 = *m.acquire(owner("10.0.0.2", "web2", {1}, 1));
  const OwnerId a2 = *m.acquire(owner("10.0.0.9", "web1", {2}, 5));  // same name, other address
  EXPECT_EQ(m.owners_of("web1"), (std::vector<OwnerId>{a1, a2}));
  EXPECT_EQ(m.owners_of("web2"), (std::vector<OwnerId>{b1}));
  EXPECT_TRUE(m.owners_of("web").empty());
}

TEST(NlmOwnerMap, TheInstanceMustBePrintable) {
  EXPECT_THROW(OwnerMap("", 1), std::invalid_argument);
  EXPECT_THROW(OwnerMap("a/b", 1), std::invalid_argument);
  EXPECT_THROW(OwnerMap("a b", 1), std::invalid_argument);
  EXPECT_THROW(OwnerMap(std::string(65, 'a'), 1), std::invalid_argument);
  EXPECT_THROW(OwnerMap(std::string("a\x01", 2), 1), std::invalid_argument);
  EXPECT_NO_THROW(OwnerMap(std::string(64, 'a'), 1));
}

// --- grace ----------------------------------------------------------------------

const GracePeriod::TimePoint kT0 = GracePeriod::TimePoint{} + 1000h;

TEST(NlmGracePeriod, NoGraceUntilItBegins) {
  GracePeriod g;
  EXPECT_FALSE(g.active(kT0));
  EXPECT_EQ(g.admit_lock(false, kT0), Stat::Granted);
  EXPECT_EQ(g.admit_lock(true, kT0), Stat::DeniedGracePeriod) << "a reclaim outside grace";
  EXPECT_EQ(g.admit_test(kT0), Stat::Granted);
  EXPECT_EQ(g.admit_release(kT0), Stat::Granted);
}

TEST(NlmGracePeriod, OnlyReclaimsDuringItsLength) {
  GracePeriod g;
  g.begin(kT0, 90s);
  EXPECT_EQ(g.ends(), kT0 + 90s);
  for (auto at : {kT0, kT0 + 1s, kT0 + 90s - 1ns}) {
    EXPECT_TRUE(g.active(at));
    EXPECT_EQ(g.admit_lock(true, at), Stat::Granted);
    EXPECT_EQ(g.admit_lock(false, at), Stat::DeniedGracePeriod);
    EXPECT_EQ(g.admit_test(at), Stat::DeniedGracePeriod);
    EXPECT_EQ(g.admit_release(at), Stat::Granted) << "unlocks are always let through";
  }
  for (auto at : {kT0 + 90s, kT0 + 1h}) {
    EXPECT_FALSE(g.active(at));
    EXPECT_EQ(g.admit_lock(true, at), Stat::DeniedGracePeriod);
    EXPECT_EQ(g.admit_lock(false, at), Stat::Granted);
    EXPECT_EQ(g.admit_test(at), Stat::Granted);
  }
}

TEST(NlmGracePeriod, EndsEarlyOrNotAtAll) {
  GracePeriod g;
  g.begin(kT0, 45s);
  ASSERT_TRUE(g.active(kT0 + 10s));
  g.end();
  EXPECT_FALSE(g.active(kT0 + 10s));
  EXPECT_EQ(g.admit_lock(false, kT0 + 10s), Stat::Granted);
  g.begin(kT0, -5s);
  EXPECT_FALSE(g.active(kT0)) << "a negative length is no grace";
  g.begin(kT0, 0s);
  EXPECT_FALSE(g.active(kT0));
  g.begin(kT0 + 1h, 10s);  // a later restart's grace
  EXPECT_TRUE(g.active(kT0 + 1h + 9s));
  EXPECT_FALSE(g.active(kT0 + 1h + 10s));
}

}  // namespace
}  // namespace nfsgw::nlm::nlm_owner_grace_test
