// gateway/nlm/nlm_service.h: NLM requests checked (handle, grace, bounds), answered
// locally when nfsgw's own clients conflict, and otherwise carried to a fake
// origin lock manager that keeps real POSIX locks (a LockTable of its own), so
// that what the origin holds can be checked after every step.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <filesystem>

#include "fake_statd.h"
#include "gateway/nlm/nlm_service.h"
#include "run_awaitable.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

namespace nfsgw::nlm::nlm_service_test {
namespace {

using nlm4::Stat;
using nfsgw::test::run_awaitable;
using namespace std::chrono_literals;

/// An origin lock manager: POSIX locks by (owner handle, svid), an outsider
/// (a client of the origin that is not nfsgw), and a switch for how it answers.
class FakeOrigin final : public OriginLocks {
 public:
  Outcome mode = Outcome::Answered;
  int calls = 0;
  std::vector<std::string> log;  // "LOCK", "UNLOCK", ...
  std::string last_caller;
  std::optional<bool> last_reclaim;  // the reclaim flag of the last LOCK
  std::vector<std::int32_t> lock_states;  // the NSM state of each LOCK asked
  std::function<void()> before_lock;  // runs as each LOCK arrives
  LockTable held{LockLimits{100000, 100000}};
  bool restarted = false;  // since restart(): the grace rules below apply
  bool in_grace = false;

  /// A restart: every lock dropped; in a grace period when `grace`.
  void restart(bool grace) {
    held = LockTable{LockLimits{100000, 100000}};
    restarted = true;
    in_grace = grace;
  }

  OwnerId owner_of(const nlm4::Lock& l) {
    const std::string key = std::string(l.oh.begin(), l.oh.end()) + "#" + std::to_string(l.svid);
    auto [it, fresh] = ids_.try_emplace(key, static_cast<OwnerId>(ids_.size() + 2));
    return it->second;
  }
  static FileKey file(const nfs3::FileHandle& fh) { return FileKey(fh.bytes.begin(), fh.bytes.begin() + fh.len); }
  static constexpr OwnerId kOutsider = 1;
  void outsider_lock(const nfs3::FileHandle& fh, Range r, bool exclusive) {
    ASSERT_EQ(held.lock(file(fh), kOutsider, r, exclusive), Stat::Granted);
  }
  void outsider_unlock(const nfs3::FileHandle& fh, Range r) { held.unlock(file(fh), kOutsider, r); }

  Awaitable<OriginReply<nlm4::TestRes>> test(const Credentials&, nlm4::TestArgs a) override {
    OriginReply<nlm4::TestRes> r;
    if (!answers("TEST", a.lock)) {
      r.outcome = mode;
      co_return r;
    }
    nlm4::TestRes res{a.cookie, Stat::Granted, {}};
    if (auto h = held.test(file(a.lock.fh), owner_of(a.lock), Range::from_nlm(a.lock.offset, a.lock.length),
                           a.exclusive)) {
      res.stat = Stat::Denied;
      res.holder.exclusive = h->exclusive;
      res.holder.svid = h->owner == kOutsider ? 4242 : -1;
      res.holder.offset = h->range.nlm_offset();
      res.holder.length = h->range.nlm_length();
    }
    r.outcome = Outcome::Answered;
    r.reply = res;
    co_return r;
  }
  Awaitable<OriginReply<nlm4::Res>> lock(const Credentials&, nlm4::LockArgs a) override {
    if (before_lock) before_lock();
    lock_states.push_back(a.state);
    OriginReply<nlm4::Res> r;
    if (!answers("LOCK", a.lock)) {
      r.outcome = mode;
      co_return r;
    }
    EXPECT_FALSE(a.block) << "nfsgw asks the origin for non-blocking locks only";
    last_reclaim = a.reclaim;
    r.outcome = Outcome::Answered;
    if (restarted && a.reclaim != in_grace) {
      // As nfs-ganesha: in its grace period only reclaims, after it no reclaims.
      r.reply = nlm4::Res{a.cookie, Stat::DeniedGracePeriod};
      co_return r;
    }
    r.reply = nlm4::Res{a.cookie, held.lock(file(a.lock.fh), owner_of(a.lock),
                                           Range::from_nlm(a.lock.offset, a.lock.length), a.exclusive)};
    co_return r;
  }
  Awaitable<OriginReply<nlm4::Res>> cancel(const Credentials&, nlm4::CancelArgs a) override {
    OriginReply<nlm4::Res> r;
    answers("CANCEL", a.lock);
    r.outcome = Outcome::Answered;
    r.reply = nlm4::Res{a.cookie, Stat::Denied};
    co_return r;
  }
  Awaitable<OriginReply<nlm4::Res>> unlock(const Credentials&, nlm4::UnlockArgs a) override {
    OriginReply<nlm4::Res> r;
    if (!answers("UNLOCK", a.lock)) {
      r.outcome = mode;
      co_return r;
    }
    r.outcome = Outcome::Answered;
    r.reply = nlm4::Res{a.cookie, held.unlock(file(a.lock.fh), owner_of(a.lock),
                                             Range::from_nlm(a.lock.offset, a.lock.length))};
    co_return r;
  }
  Awaitable<bool> notify_restart(std::string, std::int32_t) override { co_return true; }

 private:
  bool answers(const char* what, const nlm4::Lock& l) {
    ++calls;
    log.emplace_back(what);
    last_caller = l.caller_name;
    return mode == Outcome::Answered;
  }
  std::map<std::string, OwnerId> ids_;
};

/// Records the NLM_GRANTED callbacks sent to clients.
class FakeCallbacks final : public ClientCallbacks {
 public:
  std::vector<std::pair<std::string, nlm4::TestArgs>> sent;
  bool accept = true;
  Awaitable<bool> granted(std::string address, nlm4::TestArgs args) override {
    sent.emplace_back(std::move(address), std::move(args));
    co_return accept;
  }
};

nfs3::FileHandle handle(std::string text) {
  std::vector<std::uint8_t> b(text.begin(), text.end());
  return nfs3::FileHandle(b);
}

/// "good..." handles are admitted into export 7 (the origin's handle is "o" + the
/// rest); "deny..." are refused by the export; anything else is forged.
CheckedHandle check(const CallContext&, const nfs3::FileHandle& fh) {
  const std::string s(fh.bytes.begin(), fh.bytes.begin() + fh.len);
  CheckedHandle c;
  if (s.starts_with("good")) {
    c.verdict = Stat::Granted;
    c.export_id = 7;
    c.origin = handle("o" + s.substr(4));
  } else if (s.starts_with("deny")) {
    c.verdict = Stat::Denied;
  } else {
    c.verdict = Stat::StaleFh;
  }
  return c;
}

struct Fixture {
  FakeOrigin origin;
  FakeCallbacks callbacks;
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::time_point{} + 1h;
  std::vector<std::pair<std::uint32_t, nfs3::FileHandle>> granted_hook;
  std::unique_ptr<NlmService> service;

  explicit Fixture(NlmSettings s = {}) {
    s.caller_name = "gw1";
    s.instance = "run1";
    service = std::make_unique<NlmService>(
        [](const CallContext& ctx, const nfs3::FileHandle& fh) -> Awaitable<CheckedHandle> {
          co_return check(ctx, fh);
        },
        [this](std::uint32_t id) -> OriginLocks* { return id == 7 ? &origin : nullptr; }, s,
        [this] { return now; });
    service->on_granted([this](std::uint32_t id, const nfs3::FileHandle& fh) { granted_hook.emplace_back(id, fh); });
  }

  static CallContext from(std::string address) {
    CallContext c;
    c.client_address = std::move(address);
    return c;
  }
  static nlm4::Lock lk(std::string fh, std::string host, std::int32_t svid, std::uint64_t off, std::uint64_t len) {
    nlm4::Lock l;
    l.caller_name = std::move(host);
    l.fh = handle(std::move(fh));
    l.oh = {static_cast<std::uint8_t>(svid), 0xAB};
    l.svid = svid;
    l.offset = off;
    l.length = len;
    return l;
  }
  std::optional<nlm4::Res> lock(const std::string& addr, nlm4::Lock l, bool exclusive, bool block = false,
                                bool reclaim = false) {
    nlm4::LockArgs a{{1, 2, 3}, block, exclusive, std::move(l), reclaim, 5};
    return run_awaitable(service->lock(from(addr), a));
  }
  std::optional<nlm4::Res> unlock(const std::string& addr, nlm4::Lock l) {
    return run_awaitable(service->unlock(from(addr), nlm4::UnlockArgs{{9}, std::move(l)}));
  }
  std::optional<nlm4::Res> cancel(const std::string& addr, nlm4::Lock l, bool exclusive) {
    return run_awaitable(service->cancel(from(addr), nlm4::CancelArgs{{4}, true, exclusive, std::move(l)}));
  }
  std::optional<nlm4::TestRes> test(const std::string& addr, nlm4::Lock l, bool exclusive) {
    return run_awaitable(service->test(from(addr), nlm4::TestArgs{{8}, exclusive, std::move(l)}));
  }
  Stat stat(const std::optional<nlm4::Res>& r) { return r ? r->stat : Stat::Failed; }
  /// Locks the origin holds on the fake origin's file "o<name>".
  std::size_t at_origin(const std::string& name) { return origin.held.locks(FakeOrigin::file(handle("o" + name))).size(); }
};

const std::string A = "10.0.0.1", B = "10.0.0.2", C = "10.0.0.3";

TEST(NlmService, AGrantedLockIsHeldAtTheOriginInNfsgwsName) {
  Fixture f;
  auto r = f.lock(A, Fixture::lk("goodF", "hostA", 11, 0, 100), true);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stat, Stat::Granted);
  EXPECT_EQ(r->cookie, (nlm4::Netobj{1, 2, 3}));
  EXPECT_EQ(f.at_origin("F"), 1u);
  EXPECT_EQ(f.origin.last_caller, "gw1");  // nfsgw's caller name, not the client's
  EXPECT_EQ(f.service->lock_count(), 1u);
  // The cache rule: the file's attributes are to be asked of the origin again.
  ASSERT_EQ(f.granted_hook.size(), 1u);
  EXPECT_EQ(f.granted_hook[0].first, 7u);
  EXPECT_EQ(f.granted_hook[0].second, handle("oF"));
}

TEST(NlmService, AConflictBetweenTwoClientsOfNfsgwIsAnsweredWithoutTheOrigin) {
  Fixture f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 11, 0, 100), true)), Stat::Granted);
  const int calls = f.origin.calls;
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 11, 50, 10), false)), Stat::Denied);
  auto t = f.test(B, Fixture::lk("goodF", "hostB", 11, 99, 1), false);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->stat, Stat::Denied);
  EXPECT_EQ(t->holder.svid, 11);  // named as its client names it
  EXPECT_TRUE(t->holder.exclusive);
  EXPECT_EQ(t->holder.offset, 0u);
  EXPECT_EQ(t->holder.length, 100u);
  EXPECT_EQ(f.origin.calls, calls);
  // Outside the range: goes to the origin and is granted.
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 11, 100, 10), true)), Stat::Granted);
  EXPECT_EQ(f.at_origin("F"), 2u);
  // Two owners of one client host (svid) are two owners.
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 12, 0, 1), false)), Stat::Denied);
  // The same owner again (upgrade of its own range) is granted.
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 11, 0, 100), true)), Stat::Granted);
}

TEST(NlmService, AConflictAtTheOriginIsTheOriginsAnswer) {
  Fixture f;
  f.origin.outsider_lock(handle("oF"), Range{0, 9}, true);
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 11, 0, 5), false)), Stat::Denied);
  EXPECT_EQ(f.service->lock_count(), 0u);
  EXPECT_EQ(f.service->owner_count(), 0u);  // nothing held: the owner is forgotten
  auto t = f.test(A, Fixture::lk("goodF", "hostA", 11, 0, 5), false);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->stat, Stat::Denied);
  EXPECT_EQ(t->holder.svid, 4242);
  EXPECT_EQ(f.service->counts().denied_origin, 1u);
}

TEST(NlmService, AForgedOrRefusedHandleReachesNothing) {
  Fixture f;
  for (const std::string fh : {"forged", "", "goo"}) {
    EXPECT_EQ(f.stat(f.lock(A, Fixture::lk(fh, "hostA", 1, 0, 0), true, true)), Stat::StaleFh) << fh;
    EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk(fh, "hostA", 1, 0, 0))), Stat::StaleFh);
    EXPECT_EQ(f.stat(f.cancel(A, Fixture::lk(fh, "hostA", 1, 0, 0), true)), Stat::StaleFh);
    auto t = f.test(A, Fixture::lk(fh, "hostA", 1, 0, 0), true);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->stat, Stat::StaleFh);
  }
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("denyF", "hostA", 1, 0, 0), true)), Stat::Denied);
  EXPECT_EQ(f.origin.calls, 0);
  EXPECT_EQ(f.service->owner_count(), 0u);
  EXPECT_EQ(f.service->counts().stale, 12u);
  // Negative control: a good handle does reach the origin.
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  EXPECT_EQ(f.origin.calls, 1);
}

TEST(NlmService, InGraceOnlyReclaimsAfterItNoReclaims) {
  NlmSettings s;
  s.grace = 30s;
  Fixture f(s);
  f.service->begin_grace();
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::DeniedGracePeriod);
  auto t = f.test(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->stat, Stat::DeniedGracePeriod);
  EXPECT_EQ(f.origin.calls, 0);
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true, false, true)), Stat::Granted);
  EXPECT_EQ(f.at_origin("F"), 1u);
  // A new lock at the origin, which dropped nfsgw's old ones and keeps no grace for it.
  EXPECT_EQ(f.origin.last_reclaim, std::optional<bool>(false));
  // Releases are always allowed.
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 10))), Stat::Granted);
  EXPECT_EQ(f.at_origin("F"), 0u);
  f.now += 31s;
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true, false, true)),
            Stat::DeniedGracePeriod);
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
}

// After nfsgw's restart the origin may still hold nfsgw's old lock for a moment
// (it drops it once its statd has called it back): a reclaim it refuses in the
// grace period is asked again, bounded; outside it, and for other LOCKs, not.
TEST(NlmService, AReclaimTheOriginRefusesInGraceIsAskedAgainBounded) {
  NlmSettings s;
  s.grace = 30s;
  s.reclaim_retries = 5;
  s.reclaim_retry_delay = 1ms;
  Fixture f(s);
  f.service->begin_grace();
  f.origin.outsider_lock(handle("oF"), Range{0, kEndOfFile}, true);
  int calls = 0;
  f.origin.before_lock = [&] {
    if (++calls == 3) f.origin.outsider_unlock(handle("oF"), Range{0, kEndOfFile});
  };
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true, false, true)), Stat::Granted);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(f.service->counts().reclaims_retried, 2u);
  EXPECT_EQ(f.at_origin("F"), 1u);
  // Still refused after the retries: DENIED.
  f.origin.outsider_lock(handle("oG"), Range{0, kEndOfFile}, true);
  calls = 0;
  f.origin.before_lock = [&] { ++calls; };
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodG", "hostB", 2, 0, 10), true, false, true)), Stat::Denied);
  EXPECT_EQ(calls, 6);
  // After the grace period a LOCK refused by the origin is answered at once.
  f.now += 31s;
  calls = 0;
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodG", "hostB", 2, 0, 10), true)), Stat::Denied);
  EXPECT_EQ(calls, 1);
}

TEST(NlmService, BoundsAreAnsweredDeniedNoLocksBeforeTheOrigin) {
  NlmSettings s;
  s.limits.max_locks = 2;
  s.limits.max_waiters = 1;
  s.max_owners = 2;
  Fixture f(s);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 20, 10), true)), Stat::Granted);
  int calls = f.origin.calls;
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 40, 10), true)), Stat::DeniedNoLocks);
  // An unlock that would split a lock in two past the bound: nothing changes anywhere.
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 4, 2))), Stat::DeniedNoLocks);
  EXPECT_EQ(f.origin.calls, calls);
  EXPECT_EQ(f.at_origin("F"), 2u);
  // A lock that merges with one held still fits.
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 10, 10), true)), Stat::Granted);
  EXPECT_EQ(f.service->lock_count(), 1u);
  // Waiters: one queued, the next refused.
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 1, 0, 1), true, true)), Stat::Blocked);
  calls = f.origin.calls;
  EXPECT_EQ(f.service->owner_count(), 2u);
  // Owners: a third is refused.
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodF", "hostC", 1, 100, 1), true)), Stat::DeniedNoLocks);
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 1), true, true)), Stat::Granted);  // own lock
  EXPECT_EQ(f.origin.calls, calls + 1);
}

TEST(NlmService, AWaiterRefusedPastTheBound) {
  NlmSettings s;
  s.limits.max_waiters = 1;
  Fixture f(s);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 1, 0, 1), true, true)), Stat::Blocked);
  // Its retransmission is the same waiter.
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 1, 0, 1), true, true)), Stat::Blocked);
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodF", "hostC", 1, 0, 1), true, true)), Stat::DeniedNoLocks);
  EXPECT_EQ(f.service->waiter_count(), 1u);
}

TEST(NlmService, AnOriginThatDoesNotAnswerGetsTheClientToAskAgain) {
  Fixture f;
  f.origin.mode = Outcome::NoAnswer;
  EXPECT_FALSE(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true));  // no reply
  EXPECT_EQ(f.service->lock_count(), 0u);
  EXPECT_FALSE(f.test(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true));
  EXPECT_EQ(f.service->counts().no_answer, 2u);
  // The retransmission, with the origin back.
  f.origin.mode = Outcome::Answered;
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  // An UNLOCK the origin does not answer leaves the lock held: B is still refused.
  f.origin.mode = Outcome::NoAnswer;
  EXPECT_FALSE(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 10)));
  f.origin.mode = Outcome::Answered;
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 1, 0, 10), true)), Stat::Denied);
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 10))), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 1, 0, 10), true)), Stat::Granted);
  // An origin without a lock manager: a clear refusal.
  f.origin.mode = Outcome::Unreachable;
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodG", "hostC", 1, 0, 10), true)), Stat::DeniedNoLocks);
}

TEST(NlmService, AnUnlockGrantsTheWaitersItFrees) {
  Fixture f;
  f.service->use_callbacks(&f.callbacks);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodF", "hostC", 3, 5, 10), false, true)), Stat::Blocked);
  EXPECT_EQ(f.service->waiter_count(), 2u);
  f.granted_hook.clear();
  // A's unlock: B is granted at the origin at once and told; C (overlapping B's
  // exclusive range) still waits.
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 0))), Stat::Granted);
  EXPECT_EQ(f.service->waiter_count(), 1u);
  EXPECT_EQ(f.service->lock_count(), 1u);
  EXPECT_EQ(f.at_origin("F"), 1u);
  ASSERT_EQ(f.callbacks.sent.size(), 1u);
  EXPECT_EQ(f.callbacks.sent[0].first, B);
  EXPECT_EQ(f.callbacks.sent[0].second.lock.svid, 2);
  EXPECT_EQ(f.callbacks.sent[0].second.lock.fh, handle("goodF"));  // the client's own handle
  EXPECT_EQ(f.granted_hook.size(), 1u);
  // B's retry of its LOCK finds it held by itself.
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true, true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.unlock(B, Fixture::lk("goodF", "hostB", 2, 0, 10))), Stat::Granted);
  EXPECT_EQ(f.service->waiter_count(), 0u);
  EXPECT_EQ(f.service->counts().waiters_granted, 2u);
  EXPECT_EQ(f.at_origin("F"), 1u);  // C's shared lock
}

TEST(NlmService, AWaiterBlockedByAnOutsiderIsGrantedByTheRetry) {
  Fixture f;
  f.origin.outsider_lock(handle("oF"), Range{0, kEndOfFile}, true);
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(run_awaitable(f.service->retry_waiters()), 0u);  // still held outside
  EXPECT_EQ(f.service->waiter_count(), 1u);
  f.origin.outsider_unlock(handle("oF"), Range{0, kEndOfFile});
  EXPECT_EQ(run_awaitable(f.service->retry_waiters()), 1u);
  EXPECT_EQ(f.service->waiter_count(), 0u);
  EXPECT_EQ(f.at_origin("F"), 1u);
  // The outsider is now refused at the origin.
  EXPECT_EQ(f.origin.held.lock(FakeOrigin::file(handle("oF")), FakeOrigin::kOutsider, Range{0, 0}, false),
            Stat::Denied);
}

TEST(NlmService, CancelDropsAWaiterOrReleasesAnUnclaimedGrant) {
  Fixture f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(f.stat(f.cancel(B, Fixture::lk("goodF", "hostB", 2, 0, 10), false)), Stat::Denied);  // other type
  EXPECT_EQ(f.stat(f.cancel(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true)), Stat::Granted);
  EXPECT_EQ(f.service->waiter_count(), 0u);
  EXPECT_EQ(f.stat(f.cancel(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true)), Stat::Denied);
  // Granted from its waiter, then cancelled before the client claimed it: released.
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 0))), Stat::Granted);
  EXPECT_EQ(f.at_origin("F"), 1u);
  EXPECT_EQ(f.stat(f.cancel(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true)), Stat::Granted);
  EXPECT_EQ(f.at_origin("F"), 0u);
  EXPECT_EQ(f.service->lock_count(), 0u);
  EXPECT_EQ(f.service->owner_count(), 0u);
}

TEST(NlmService, FreeAllReleasesTheRebootedHostsLocksOnly) {
  Fixture f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodG", "hostA", 2, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(B, Fixture::lk("goodH", "hostB", 1, 0, 10), true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodF", "hostC", 1, 0, 10), true, true)), Stat::Blocked);
  // Another address naming hostA changes nothing.
  run_awaitable(f.service->free_all(Fixture::from(B), nlm4::Notify{"hostA", 3}));
  EXPECT_EQ(f.service->lock_count(), 3u);
  run_awaitable(f.service->free_all(Fixture::from(A), nlm4::Notify{"hostA", 3}));
  EXPECT_EQ(f.at_origin("G"), 0u);
  EXPECT_EQ(f.at_origin("H"), 1u);
  // C's waiter took hostA's freed lock.
  EXPECT_EQ(f.at_origin("F"), 1u);
  EXPECT_EQ(f.service->waiter_count(), 0u);
  EXPECT_EQ(f.service->lock_count(), 2u);
  EXPECT_EQ(f.service->owner_count(), 2u);
}

TEST(NlmService, GrantedFromTheOriginIsRefused) {
  Fixture f;
  const nlm4::Res r = f.service->granted(Fixture::from(A), nlm4::TestArgs{{1}, true, Fixture::lk("oF", "o", 1, 0, 0)});
  EXPECT_EQ(r.stat, Stat::Denied);
  EXPECT_EQ(r.cookie, nlm4::Netobj{1});
}

/// A service whose client hosts are monitored by a fake statd, with the record
/// in a directory of its own.
struct Monitored {
  Fixture f;
  fake_statd::FakeStatd statd;
  std::filesystem::path dir;
  std::unique_ptr<ClientMonitor> monitor;
  Monitored() {
    dir = std::filesystem::temp_directory_path() / ("nlm-service-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    monitor = std::make_unique<ClientMonitor>(statd, NsmRecordFile(dir / "nsm"), NsmRecord{3, {}});
    f.service->use_monitor(monitor.get(), [](const std::string& client) { return "srv-for-" + client; });
    f.service->use_callbacks(&f.callbacks);
  }
  ~Monitored() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

TEST(NlmService, AClientHostIsMonitoredBeforeItsFirstLockReachesTheOrigin) {
  Monitored m;
  Fixture& f = m.f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodG", "hostA", 2, 0, 10), true)), Stat::Granted);
  EXPECT_EQ(m.statd.calls, (std::vector<std::string>{"MON hostA"}));
  const NsmRecord r = NsmRecordFile(m.dir / "nsm").load().record;
  ASSERT_EQ(r.hosts.size(), 1u);
  EXPECT_EQ(r.hosts[0], (MonitoredHost{"hostA", A, "srv-for-" + A}));
  // NM_LOCK: a client without a status monitor is not monitored.
  nlm4::LockArgs nm{{1}, false, true, Fixture::lk("goodH", "hostN", 1, 0, 10), false, 5};
  EXPECT_EQ(f.stat(run_awaitable(f.service->lock(Fixture::from(C), nm, /*monitor=*/false))), Stat::Granted);
  EXPECT_EQ(m.statd.count("MON hostN"), 0u);
}

TEST(NlmService, EveryLockAtTheOriginCarriesNfsgwsOwnNsmStateNotTheClients) {
  // At the origin nfsgw is the lock client: its NSM state goes with each LOCK, so
  // that an origin that keeps it (nfs-ganesha) keeps this run's locks when a late
  // callback for this run's restart notice arrives. Each path that asks the origin
  // for a lock: a plain LOCK, a blocked waiter's retry, the reclaim after the
  // origin restarted.
  Monitored m;
  Fixture& f = m.f;
  const std::int32_t own = m.monitor->state();
  ASSERT_NE(own, 5) << "the fixture's clients send state 5: the check below must tell them apart";
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  f.origin.outsider_lock(handle("oG"), Range{0, kEndOfFile}, true);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodG", "hostA", 1, 0, 10), true, true)), Stat::Blocked);
  f.origin.outsider_unlock(handle("oG"), Range{0, kEndOfFile});
  ASSERT_EQ(run_awaitable(f.service->retry_waiters()), 1u);
  f.origin.restart(true);
  ASSERT_EQ(run_awaitable(f.service->origin_restarted({7}, "origin")).reclaimed, 2u);
  ASSERT_GE(f.origin.lock_states.size(), 5u);  // F, G (denied), G (retried), F and G reclaimed
  for (std::size_t i = 0; i < f.origin.lock_states.size(); ++i) {
    EXPECT_EQ(f.origin.lock_states[i], own) << "LOCK " << i << " at the origin";
  }
}

TEST(NlmService, ALockOfAHostStatdWillNotMonitorIsRefusedBeforeTheOrigin) {
  Monitored m;
  Fixture& f = m.f;
  m.statd.agree = false;
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::DeniedNoLocks);
  EXPECT_EQ(f.origin.calls, 0);
  EXPECT_EQ(f.service->owner_count(), 0u);
  EXPECT_EQ(f.service->counts().not_monitored, 1u);
  // Control: statd agrees, the same lock is granted.
  m.statd.agree = true;
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
}

TEST(NlmService, AHostThatHoldsNothingIsUnmonitored) {
  Monitored m;
  Fixture& f = m.f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(B, Fixture::lk("goodG", "hostB", 1, 0, 10), true)), Stat::Granted);
  EXPECT_EQ(run_awaitable(f.service->sweep_monitors()), 0u) << "both hold a lock";
  ASSERT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 10))), Stat::Granted);
  EXPECT_EQ(run_awaitable(f.service->sweep_monitors()), 1u);
  EXPECT_EQ(m.statd.calls.back(), "UNMON hostA");
  EXPECT_TRUE(m.monitor->monitored("hostB"));
  const NsmRecord r = NsmRecordFile(m.dir / "nsm").load().record;
  ASSERT_EQ(r.hosts.size(), 1u);
  EXPECT_EQ(r.hosts[0].mon_name, "hostB");
  // A waiter keeps its host monitored too.
  EXPECT_EQ(f.stat(f.lock(A, Fixture::lk("goodG", "hostA", 2, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(run_awaitable(f.service->sweep_monitors()), 0u);
  EXPECT_TRUE(m.monitor->monitored("hostA"));
}

TEST(NlmService, AMonitoredHostsRebootReleasesItsLocksAtTheOriginAndWakesWaiters) {
  Monitored m;
  Fixture& f = m.f;
  // hostA's owners on two addresses, hostB's lock, hostC waiting on hostA's range.
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(B, Fixture::lk("goodG", "hostA", 2, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(B, Fixture::lk("goodH", "hostB", 1, 0, 10), true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodF", "hostC", 1, 0, 10), true, true)), Stat::Blocked);
  run_awaitable(f.service->host_rebooted(nsm::Status{"hostA", 9, {}}));
  EXPECT_EQ(f.at_origin("G"), 0u) << "released at the origin, whatever the address";
  EXPECT_EQ(f.at_origin("H"), 1u) << "another host's lock stays";
  EXPECT_EQ(f.at_origin("F"), 1u) << "hostC's waiter took hostA's freed range";
  EXPECT_EQ(f.service->waiter_count(), 0u);
  ASSERT_EQ(f.callbacks.sent.size(), 1u);
  EXPECT_EQ(f.callbacks.sent[0].first, C);
  EXPECT_EQ(f.callbacks.sent[0].second.lock.caller_name, "gw1") << "GRANTED names nfsgw";
  EXPECT_EQ(f.callbacks.sent[0].second.lock.oh, (nlm4::Netobj{1, 0xAB}));
  EXPECT_EQ(f.service->counts().reboots, 1u);
  EXPECT_EQ(f.service->counts().grants_told, 1u);
  // hostA holds nothing now: unmonitored by the next sweep.
  EXPECT_EQ(run_awaitable(f.service->sweep_monitors()), 1u);
  EXPECT_EQ(m.statd.calls.back(), "UNMON hostA");
  // Control: a reboot of a host with nothing changes nothing.
  run_awaitable(f.service->host_rebooted(nsm::Status{"hostZ", 3, {}}));
  EXPECT_EQ(f.service->lock_count(), 2u);
}

TEST(NlmService, AGrantTheClientDoesNotTakeIsCountedAndStaysUnclaimed) {
  Monitored m;
  Fixture& f = m.f;
  m.f.callbacks.accept = false;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 0))), Stat::Granted);
  EXPECT_EQ(f.service->counts().grants_untold, 1u);
  // Unclaimed: the client's CANCEL releases it at the origin.
  EXPECT_EQ(f.stat(f.cancel(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true)), Stat::Granted);
  EXPECT_EQ(f.at_origin("F"), 0u);
}

TEST(NlmService, AGrantedWaiterWhoseClientWentAwayIsReleasedAfterTheTimeout) {
  NlmSettings s;
  s.unclaimed_timeout = 90s;
  Fixture f(s);
  f.service->use_callbacks(&f.callbacks);
  f.callbacks.accept = false;  // nobody answers NLM_GRANTED
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodF", "hostC", 3, 0, 10), true, true)), Stat::Blocked);
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 0))), Stat::Granted);
  ASSERT_EQ(f.service->counts().grants_untold, 1u) << "B granted, and not told";
  // Within the timeout B's grant stands (its client may still retry the LOCK).
  f.now += 89s;
  EXPECT_EQ(run_awaitable(f.service->retry_waiters()), 0u);
  EXPECT_EQ(f.service->counts().unclaimed_dropped, 0u);
  EXPECT_EQ(f.service->waiter_count(), 1u) << "C still waits";
  // Past it: released at the origin, and C, the next waiter, is granted.
  f.now += 2s;
  run_awaitable(f.service->retry_waiters());
  EXPECT_EQ(f.service->counts().unclaimed_dropped, 1u);
  EXPECT_EQ(f.service->counts().waiters_granted, 2u) << "B, then C";
  EXPECT_EQ(f.service->waiter_count(), 0u);
  EXPECT_EQ(f.at_origin("F"), 1u) << "C's lock only";
  EXPECT_EQ(f.service->lock_count(), 1u);
  // C claims its grant by retrying the LOCK: never dropped.
  EXPECT_EQ(f.stat(f.lock(C, Fixture::lk("goodF", "hostC", 3, 0, 10), true, true)), Stat::Granted);
  f.now += 200s;
  EXPECT_EQ(run_awaitable(f.service->retry_waiters()), 0u);
  EXPECT_EQ(f.service->counts().unclaimed_dropped, 1u);
  EXPECT_EQ(f.at_origin("F"), 1u);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true)), Stat::Denied);
}

// Design item 10: on a write-back export the file's unflushed writes reach the
// origin before its lock is released there; a flush that cannot be made now
// leaves the lock held and the UNLOCK unanswered (the client asks again).
TEST(NlmService, AnUnlockFlushesTheFilesWritesBeforeTheOriginReleasesIt) {
  Fixture f;
  std::vector<std::string> order;
  bool flush_ok = false;
  f.service->before_release([&](std::uint32_t id, const nfs3::FileHandle& fh) -> Awaitable<bool> {
    order.push_back("flush " + std::to_string(id) + (fh == handle("oF") ? " oF" : " other") +
                    (f.at_origin("F") == 1 ? " (held)" : " (released)"));
    co_return flush_ok;
  });
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  ASSERT_TRUE(order.empty()) << "a LOCK flushes nothing";
  // The flush fails: no answer, the lock still held here and at the origin.
  EXPECT_FALSE(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 0)).has_value());
  EXPECT_EQ(f.at_origin("F"), 1u);
  EXPECT_EQ(f.service->lock_count(), 1u);
  // The retransmission, once the flush goes through: flushed while still held, then released.
  flush_ok = true;
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 0))), Stat::Granted);
  EXPECT_EQ(f.at_origin("F"), 0u);
  EXPECT_EQ(order, (std::vector<std::string>{"flush 7 oF (held)", "flush 7 oF (held)"}));
  // A forged handle flushes nothing.
  order.clear();
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("badF", "hostA", 1, 0, 0))), Stat::StaleFh);
  EXPECT_TRUE(order.empty());
  // A release nfsgw makes itself (FREE_ALL: the host rebooted) flushes first too,
  // and releases even when the flush cannot be made now (nobody will ask again).
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 0), true)), Stat::Granted);
  flush_ok = false;
  nlm4::Notify gone;
  gone.name = "hostA";
  gone.state = 3;
  run_awaitable(f.service->free_all(Fixture::from(A), gone));
  EXPECT_EQ(order, (std::vector<std::string>{"flush 7 oF (held)"}));
  EXPECT_EQ(f.at_origin("F"), 0u);
  EXPECT_EQ(f.service->lock_count(), 0u);
}

// --- The origin restarted (design.md, issue 21, item 9) ---

TEST(NlmService, AnOriginsRestartHasItsLocksReclaimedInItsGracePeriod) {
  Fixture f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(B, Fixture::lk("goodG", "hostB", 2, 5, 10), false)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(B, Fixture::lk("goodG", "hostB", 2, 100, 0), true)), Stat::Granted);
  f.origin.restart(true);
  ASSERT_EQ(f.at_origin("F") + f.at_origin("G"), 0u) << "the restart dropped them";
  // Another export's origin restarted: nothing of export 7 is asked for.
  OriginReclaim none = run_awaitable(f.service->origin_restarted({8}, "other"));
  EXPECT_EQ(none.locks, 0u);
  EXPECT_EQ(f.at_origin("F") + f.at_origin("G"), 0u);

  OriginReclaim r = run_awaitable(f.service->origin_restarted({7}, "origin"));
  EXPECT_EQ(r.locks, 3u);
  EXPECT_EQ(r.reclaimed, 3u);
  EXPECT_EQ(r.retaken + r.refused + r.unanswered, 0u);
  EXPECT_EQ(f.at_origin("F"), 1u);
  EXPECT_EQ(f.at_origin("G"), 2u);
  EXPECT_EQ(f.origin.last_reclaim, std::optional<bool>(true));
  EXPECT_EQ(f.origin.last_caller, "gw1") << "in nfsgw's own name";
  // As the same origin owners: A's lock excludes an outsider, B's shared one does not.
  EXPECT_TRUE(f.origin.held.test(FakeOrigin::file(handle("oF")), FakeOrigin::kOutsider, Range{0, 9}, false));
  EXPECT_FALSE(f.origin.held.test(FakeOrigin::file(handle("oG")), FakeOrigin::kOutsider, Range{5, 14}, false));
  const NlmCounts c = f.service->counts();
  EXPECT_EQ(c.origin_restarts, 2u);
  EXPECT_EQ(c.origin_reclaimed, 3u);
  EXPECT_EQ(c.origin_reclaims_lost, 0u);
  // The clients' locks are as they were: A unlocks, B is granted F.
  EXPECT_EQ(f.service->lock_count(), 3u);
  f.origin.in_grace = false;
  EXPECT_EQ(f.stat(f.unlock(A, Fixture::lk("goodF", "hostA", 1, 0, 10))), Stat::Granted);
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 0, 10), true)), Stat::Granted);
}

TEST(NlmService, AnOriginPastItsGracePeriodHasTheLocksTakenAsNewOnes) {
  Fixture f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  f.origin.restart(false);  // no grace period: it refuses reclaims
  OriginReclaim r = run_awaitable(f.service->origin_restarted({7}, "origin"));
  EXPECT_EQ(r.locks, 1u);
  EXPECT_EQ(r.reclaimed, 0u);
  EXPECT_EQ(r.retaken, 1u);
  EXPECT_EQ(f.at_origin("F"), 1u);
  EXPECT_EQ(f.origin.last_reclaim, std::optional<bool>(false));
}

TEST(NlmService, ALockTheRestartedOriginGaveAwayIsCountedLostAndStillExcludesNfsgwsClients) {
  Fixture f;
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  f.origin.restart(false);
  f.origin.outsider_lock(handle("oF"), Range{0, 4}, true);  // an outsider got there first
  OriginReclaim r = run_awaitable(f.service->origin_restarted({7}, "origin"));
  EXPECT_EQ(r.refused, 1u);
  EXPECT_EQ(f.service->counts().origin_reclaims_lost, 1u);
  EXPECT_EQ(f.service->lock_count(), 1u) << "NLM cannot take it back from A: kept";
  const int calls = f.origin.calls;
  EXPECT_EQ(f.stat(f.lock(B, Fixture::lk("goodF", "hostB", 2, 5, 1), true)), Stat::Denied);
  EXPECT_EQ(f.origin.calls, calls) << "answered by nfsgw: A's lock still excludes B";
}

TEST(NlmService, AReclaimTheOriginDoesNotAnswerYetIsAskedAgainWithinTheWindow) {
  NlmSettings s;
  s.reclaim_retry_delay = 1ms;
  s.origin_reclaim_window = 3s;
  Fixture f(s);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodG", "hostA", 1, 0, 10), true)), Stat::Granted);
  f.origin.restart(true);
  // Its lock manager answers from the third call on.
  int calls = 0;
  f.origin.mode = Outcome::NoAnswer;
  f.origin.before_lock = [&] {
    if (++calls == 3) f.origin.mode = Outcome::Answered;
  };
  OriginReclaim r = run_awaitable(f.service->origin_restarted({7}, "origin"));
  EXPECT_EQ(r.reclaimed, 2u);
  EXPECT_EQ(calls, 4);
  // An origin that never answers: given up at the window's end (the clock moves a
  // second a call), reported, the lock kept in the table.
  f.origin.restart(true);
  f.origin.mode = Outcome::NoAnswer;
  calls = 0;
  f.origin.before_lock = [&] {
    ++calls;
    f.now += 1s;
  };
  r = run_awaitable(f.service->origin_restarted({7}, "origin"));
  EXPECT_EQ(r.unanswered, 2u);
  EXPECT_GE(calls, 4);  // two files reclaimed side by side, each at least twice
  EXPECT_LE(calls, 10);
  EXPECT_EQ(f.service->lock_count(), 2u);
}

TEST(NlmService, AClientsUnlockDuringTheReclaimOfItsFileGoesAfterIt) {
  NlmSettings s;
  s.reclaim_retry_delay = 5ms;
  Fixture f(s);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  f.origin.restart(true);
  int calls = 0;
  f.origin.mode = Outcome::NoAnswer;  // the reclaim is asked three times
  f.origin.before_lock = [&] {
    if (++calls == 3) f.origin.mode = Outcome::Answered;
  };
  f.origin.log.clear();
  boost::asio::io_context io;
  // The coroutines take the call's context by reference and start in io.run():
  // it must outlive them (as the dispatcher's frame does).
  const CallContext from_a = Fixture::from(A);
  auto reclaim = boost::asio::co_spawn(io, f.service->origin_restarted({7}, "origin"), boost::asio::use_future);
  auto unlock = boost::asio::co_spawn(
      io, f.service->unlock(from_a, nlm4::UnlockArgs{{9}, Fixture::lk("goodF", "hostA", 1, 0, 10)}),
      boost::asio::use_future);
  io.run();
  EXPECT_EQ(reclaim.get().reclaimed, 1u);
  EXPECT_EQ(f.stat(unlock.get()), Stat::Granted);
  EXPECT_EQ(f.origin.log, (std::vector<std::string>{"LOCK", "LOCK", "LOCK", "UNLOCK"}))
      << "the UNLOCK waited for the reclaim";
  EXPECT_EQ(f.at_origin("F"), 0u) << "nothing left held at the origin for a lock its client let go";
  EXPECT_EQ(f.service->lock_count(), 0u);
}

TEST(NlmService, AClientHostsRebootDuringTheReclaimLeavesNothingAtTheOrigin) {
  // statd calls back for the origin and for a client host at once (Linux's statd
  // matched a client's notice, sent from 127.0.0.1, to the origin's 127.0.0.1).
  NlmSettings s;
  s.reclaim_retry_delay = 5ms;
  Fixture f(s);
  ASSERT_EQ(f.stat(f.lock(A, Fixture::lk("goodF", "hostA", 1, 0, 10), true)), Stat::Granted);
  f.origin.restart(true);
  int calls = 0;
  f.origin.mode = Outcome::NoAnswer;  // the reclaim's first LOCK is not answered
  f.origin.before_lock = [&] {
    if (++calls == 2) f.origin.mode = Outcome::Answered;
  };
  boost::asio::io_context io;
  const CallContext from_a = Fixture::from(A);  // outlives the coroutines (see above)
  auto reclaim = boost::asio::co_spawn(io, f.service->origin_restarted({7}, "origin"), boost::asio::use_future);
  io.poll();  // the reclaim has asked once and waits to ask again
  ASSERT_EQ(calls, 1);
  nlm4::Notify gone;
  gone.name = "hostA";
  gone.state = 3;
  auto freed = boost::asio::co_spawn(io, f.service->free_all(from_a, gone), boost::asio::use_future);
  io.run();
  reclaim.get();
  freed.get();
  EXPECT_EQ(f.service->lock_count(), 0u);
  EXPECT_EQ(f.at_origin("F"), 0u) << "the reclaim must not leave a lock its host let go";
}

}  // namespace
}  // namespace nfsgw::nlm::nlm_service_test
