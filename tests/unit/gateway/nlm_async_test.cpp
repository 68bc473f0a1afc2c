// gateway/rpc/nlm_procedures.h, the asynchronous NLM forms: a _MSG request runs
// what its synchronous procedure runs (a real NlmService over a fake origin that
// keeps real POSIX locks, as in nlm_service_test.cpp), is answered void, and its
// result goes to the client's NLM as the matching _RES call (a fake
// ClientResults records it); a request the origin leaves unanswered gets neither
// a reply nor a _RES. The _RES procedures sent to nfsgw are decoded and answered
// void.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gateway/nlm/client_results.h"
#include "gateway/nlm/nlm_service.h"
#include "gateway/rpc/nlm_procedures.h"
#include "run_awaitable.h"

namespace nfsgw::rpc::nlm_async_test {
namespace {

using nlm4::Proc;
using nlm4::Stat;
using nfsgw::test::run_awaitable;
using namespace std::chrono_literals;

/// An origin lock manager keeping real POSIX locks, one owner per (handle, svid);
/// `answers` false: it does not answer (Outcome::NoAnswer).
class FakeOrigin final : public nlm::OriginLocks {
 public:
  bool answers = true;
  int calls = 0;
  nlm::LockTable held{nlm::LockLimits{1000, 1000}};

  static nlm::FileKey file(const nlm4::Lock& l) { return nlm::FileKey(l.fh.bytes.begin(), l.fh.bytes.begin() + l.fh.len); }
  nlm::OwnerId owner(const nlm4::Lock& l) { return static_cast<nlm::OwnerId>(l.svid); }
  static nlm::Range range(const nlm4::Lock& l) { return nlm::Range::from_nlm(l.offset, l.length); }

  template <typename R>
  nlm::OriginReply<R> reply(R r) {
    ++calls;
    nlm::OriginReply<R> out;
    out.outcome = answers ? nlm::Outcome::Answered : nlm::Outcome::NoAnswer;
    if (answers) out.reply = std::move(r);
    return out;
  }
  Awaitable<nlm::OriginReply<nlm4::TestRes>> test(const Credentials&, nlm4::TestArgs a) override {
    nlm4::TestRes r{a.cookie, Stat::Granted, {}};
    if (held.test(file(a.lock), owner(a.lock), range(a.lock), a.exclusive)) r.stat = Stat::Denied;
    co_return reply(r);
  }
  Awaitable<nlm::OriginReply<nlm4::Res>> lock(const Credentials&, nlm4::LockArgs a) override {
    if (!answers) co_return reply(nlm4::Res{});
    co_return reply(nlm4::Res{a.cookie, held.lock(file(a.lock), owner(a.lock), range(a.lock), a.exclusive)});
  }
  Awaitable<nlm::OriginReply<nlm4::Res>> cancel(const Credentials&, nlm4::CancelArgs a) override {
    co_return reply(nlm4::Res{a.cookie, Stat::Denied});
  }
  Awaitable<nlm::OriginReply<nlm4::Res>> unlock(const Credentials&, nlm4::UnlockArgs a) override {
    if (!answers) co_return reply(nlm4::Res{});
    co_return reply(nlm4::Res{a.cookie, held.unlock(file(a.lock), owner(a.lock), range(a.lock))});
  }
  Awaitable<bool> notify_restart(std::string, std::int32_t) override { co_return true; }
};

/// The _RES calls sent to clients.
class FakeResults final : public nlm::ClientResults {
 public:
  struct Sent {
    std::string address;
    Proc proc;
    std::vector<std::uint8_t> args;
  };
  std::vector<Sent> sent;
  Awaitable<bool> send_result(std::string address, Proc proc, std::vector<std::uint8_t> args) override {
    sent.push_back(Sent{std::move(address), proc, std::move(args)});
    co_return true;
  }
  template <typename R>
  R decoded(std::size_t i) const {
    xdr::Reader r(sent.at(i).args);
    R out;
    nlm4::decode(r, out);
    EXPECT_EQ(r.remaining(), 0u);
    return out;
  }
};

nfs3::FileHandle handle(const std::string& text) {
  std::vector<std::uint8_t> b(text.begin(), text.end());
  return nfs3::FileHandle(b);
}

/// "good..." handles are admitted into export 7 (origin handle "o" + the rest);
/// anything else is forged.
nlm::CheckedHandle check(const nfs3::FileHandle& fh) {
  const std::string s(fh.bytes.begin(), fh.bytes.begin() + fh.len);
  nlm::CheckedHandle c;
  c.verdict = s.starts_with("good") ? Stat::Granted : Stat::StaleFh;
  c.export_id = 7;
  c.origin = handle("o" + s.substr(std::min<std::size_t>(4, s.size())));
  return c;
}

struct Called {
  Outcome outcome = Outcome::SystemErr;
  std::vector<std::uint8_t> reply;  // the result's bytes (empty: void)
};

struct Fixture {
  FakeOrigin origin;
  FakeResults results;
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::time_point{} + 1h;
  nlm::NlmService service;
  ProgramVersion table;

  explicit Fixture(bool with_results = true, std::chrono::seconds grace = 0s)
      : service(
            [](const CallContext&, const nfs3::FileHandle& fh) -> Awaitable<nlm::CheckedHandle> {
              co_return check(fh);
            },
            [this](std::uint32_t id) -> nlm::OriginLocks* { return id == 7 ? &origin : nullptr; }, settings(grace),
            [this] { return now; }),
        table(make_nlm4_table(service, NlmPeers{with_results ? &results : nullptr})) {
    service.begin_grace();
  }
  static nlm::NlmSettings settings(std::chrono::seconds grace) {
    nlm::NlmSettings s;
    s.caller_name = "gw1";
    s.instance = "run1";
    s.grace = grace;
    return s;
  }

  bool served(Proc p) const {
    const auto i = static_cast<std::size_t>(p);
    return i < table.procedures.size() && table.procedures[i].handler != nullptr;
  }
  Called call(Proc p, const std::vector<std::uint8_t>& args, const std::string& from = "10.0.0.1") {
    const Procedure& proc = table.procedures.at(static_cast<std::size_t>(p));
    EXPECT_TRUE(proc.handler) << nlm4::name(p);
    CallContext ctx;
    ctx.client_address = from;
    xdr::Reader in(args);
    Called c;
    xdr::Writer out(c.reply);
    c.outcome = run_awaitable(outcome_of(proc.handler(ctx, in, out)));
    return c;
  }
  /// Finished has no default (use_future needs one): its outcome.
  static Awaitable<Outcome> outcome_of(Awaitable<Finished> call) {
    const Finished f = co_await std::move(call);
    co_return f.outcome;
  }
  template <typename Args>
  Called call(Proc p, const Args& a, const std::string& from = "10.0.0.1") {
    std::vector<std::uint8_t> bytes;
    xdr::Writer w(bytes);
    nlm4::encode(w, a);
    return call(p, bytes, from);
  }
};

nlm4::Lock lk(const std::string& fh, std::int32_t svid, std::uint64_t off, std::uint64_t len) {
  nlm4::Lock l;
  l.caller_name = "host" + std::to_string(svid);
  l.fh = handle(fh);
  l.oh = {static_cast<std::uint8_t>(svid), 0xAB};
  l.svid = svid;
  l.offset = off;
  l.length = len;
  return l;
}
nlm4::LockArgs lock_args(nlm4::Lock l, bool reclaim = false) { return nlm4::LockArgs{{7, 7}, false, true, l, reclaim, 3}; }

TEST(NlmAsync, EachMsgRunsItsProcedureAndSendsTheMatchingRes) {
  Fixture f;
  const std::string A = "10.0.0.1", B = "10.0.0.2";
  // LOCK_MSG: granted at the origin, a void reply, LOCK_RES GRANTED to the caller.
  Called c = f.call(Proc::LockMsg, lock_args(lk("goodF", 11, 0, 100)), A);
  EXPECT_EQ(c.outcome, Outcome::Success);
  EXPECT_TRUE(c.reply.empty()) << "the _MSG is answered void";
  ASSERT_EQ(f.results.sent.size(), 1u);
  EXPECT_EQ(f.results.sent[0].address, A);
  EXPECT_EQ(f.results.sent[0].proc, Proc::LockRes);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(0), (nlm4::Res{{7, 7}, Stat::Granted}));
  EXPECT_EQ(f.origin.held.locks(FakeOrigin::file(lk("oF", 0, 0, 0))).size(), 1u) << "held at the origin";
  EXPECT_EQ(f.service.lock_count(), 1u);

  // Another client: LOCK_MSG DENIED, TEST_MSG DENIED with the holder, to B.
  f.call(Proc::LockMsg, lock_args(lk("goodF", 22, 50, 10)), B);
  ASSERT_EQ(f.results.sent.size(), 2u);
  EXPECT_EQ(f.results.sent[1].address, B);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(1).stat, Stat::Denied);
  EXPECT_EQ(f.call(Proc::TestMsg, nlm4::TestArgs{{5}, true, lk("goodF", 22, 50, 10)}, B).outcome, Outcome::Success);
  ASSERT_EQ(f.results.sent.size(), 3u);
  EXPECT_EQ(f.results.sent[2].proc, Proc::TestRes);
  const auto t = f.results.decoded<nlm4::TestRes>(2);
  EXPECT_EQ(t.cookie, nlm4::Netobj{5});
  EXPECT_EQ(t.stat, Stat::Denied);
  EXPECT_EQ(t.holder.svid, 11) << "the holder as its client names it";

  // CANCEL_MSG of a waiter that is not there, UNLOCK_MSG of A's lock.
  f.call(Proc::CancelMsg, nlm4::CancelArgs{{6}, true, true, lk("goodF", 22, 50, 10)}, B);
  ASSERT_EQ(f.results.sent.size(), 4u);
  EXPECT_EQ(f.results.sent[3].proc, Proc::CancelRes);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(3).cookie, nlm4::Netobj{6});
  f.call(Proc::UnlockMsg, nlm4::UnlockArgs{{8}, lk("goodF", 11, 0, 0)}, A);
  ASSERT_EQ(f.results.sent.size(), 5u);
  EXPECT_EQ(f.results.sent[4].proc, Proc::UnlockRes);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(4), (nlm4::Res{{8}, Stat::Granted}));
  EXPECT_TRUE(f.origin.held.locks(FakeOrigin::file(lk("oF", 0, 0, 0))).empty()) << "released at the origin";
  EXPECT_EQ(f.service.lock_count(), 0u);
}

TEST(NlmAsync, AForgedHandleIsAnsweredStaleFhAndReachesNothing) {
  Fixture f;
  f.call(Proc::LockMsg, lock_args(lk("forged", 11, 0, 0)));
  f.call(Proc::TestMsg, nlm4::TestArgs{{1}, true, lk("forged", 11, 0, 0)});
  ASSERT_EQ(f.results.sent.size(), 2u);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(0).stat, Stat::StaleFh);
  EXPECT_EQ(f.results.decoded<nlm4::TestRes>(1).stat, Stat::StaleFh);
  EXPECT_EQ(f.origin.calls, 0);
}

TEST(NlmAsync, InGraceANewLockMsgIsRefusedAndAReclaimGranted) {
  Fixture f(true, 30s);
  f.call(Proc::LockMsg, lock_args(lk("goodF", 11, 0, 10)));
  f.call(Proc::LockMsg, lock_args(lk("goodF", 11, 0, 10), /*reclaim=*/true));
  ASSERT_EQ(f.results.sent.size(), 2u);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(0).stat, Stat::DeniedGracePeriod);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(1).stat, Stat::Granted);
}

TEST(NlmAsync, WhenTheOriginDoesNotAnswerNeitherAReplyNorAResGoes) {
  Fixture f;
  f.origin.answers = false;
  EXPECT_EQ(f.call(Proc::LockMsg, lock_args(lk("goodF", 11, 0, 10))).outcome, Outcome::NoReply);
  EXPECT_EQ(f.call(Proc::TestMsg, nlm4::TestArgs{{1}, true, lk("goodF", 11, 0, 10)}).outcome, Outcome::NoReply);
  EXPECT_GT(f.origin.calls, 0) << "control: the requests did reach the origin";
  EXPECT_TRUE(f.results.sent.empty());
  // The client's resend, once the origin answers, gets its _RES.
  f.origin.answers = true;
  EXPECT_EQ(f.call(Proc::LockMsg, lock_args(lk("goodF", 11, 0, 10))).outcome, Outcome::Success);
  ASSERT_EQ(f.results.sent.size(), 1u);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(0).stat, Stat::Granted);
}

TEST(NlmAsync, GrantedMsgIsAnsweredAsGrantedIsWithGrantedRes) {
  Fixture f;
  EXPECT_EQ(f.call(Proc::GrantedMsg, nlm4::TestArgs{{3}, true, lk("goodF", 11, 0, 10)}).outcome, Outcome::Success);
  ASSERT_EQ(f.results.sent.size(), 1u);
  EXPECT_EQ(f.results.sent[0].proc, Proc::GrantedRes);
  EXPECT_EQ(f.results.decoded<nlm4::Res>(0), (nlm4::Res{{3}, Stat::Denied}));
  EXPECT_EQ(f.origin.calls, 0);
}

TEST(NlmAsync, ResCallsAreDecodedAndAnsweredVoid) {
  Fixture f;
  for (Proc p : {Proc::LockRes, Proc::CancelRes, Proc::UnlockRes, Proc::GrantedRes}) {
    const Called c = f.call(p, nlm4::Res{{1}, Stat::Granted});
    EXPECT_EQ(c.outcome, Outcome::Success) << nlm4::name(p);
    EXPECT_TRUE(c.reply.empty());
    EXPECT_EQ(f.call(p, std::vector<std::uint8_t>{0, 0, 0}).outcome, Outcome::GarbageArgs) << nlm4::name(p);
  }
  nlm4::TestRes t{{1}, Stat::Denied, {}};
  EXPECT_EQ(f.call(Proc::TestRes, t).outcome, Outcome::Success);
  // A status outside nlm4_stats does not decode.
  EXPECT_EQ(f.call(Proc::LockRes, std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 0, 99}).outcome, Outcome::GarbageArgs);
  EXPECT_TRUE(f.results.sent.empty());
  EXPECT_EQ(f.origin.calls, 0);
}

TEST(NlmAsync, MalformedMsgArgumentsAreGarbageAndReachNothing) {
  Fixture f;
  for (Proc p : {Proc::TestMsg, Proc::LockMsg, Proc::CancelMsg, Proc::UnlockMsg, Proc::GrantedMsg}) {
    EXPECT_EQ(f.call(p, std::vector<std::uint8_t>{0, 0, 0, 1}).outcome, Outcome::GarbageArgs) << nlm4::name(p);
  }
  EXPECT_TRUE(f.results.sent.empty());
  EXPECT_EQ(f.origin.calls, 0);
}

TEST(NlmAsync, WithoutAResultSenderTheMsgFormsAreNotServed) {
  Fixture f(/*with_results=*/false);
  for (Proc p : {Proc::TestMsg, Proc::LockMsg, Proc::CancelMsg, Proc::UnlockMsg, Proc::GrantedMsg})
    EXPECT_FALSE(f.served(p)) << nlm4::name(p);
  EXPECT_TRUE(f.served(Proc::LockRes));
  Fixture g;
  EXPECT_TRUE(g.served(Proc::LockMsg));
}

}  // namespace
}  // namespace nfsgw::rpc::nlm_async_test
