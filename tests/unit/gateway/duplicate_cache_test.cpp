// The duplicate request cache (gateway/rpc/duplicate_cache.h): alone, and in the
// dispatcher with a program that counts what it executes.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cache/clock.h"
#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/duplicate_cache.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/rpc_test_helpers.h"
#include "tests/unit/gateway/run_awaitable.h"

namespace nfsgw::test {
namespace {

using rpc::CallIdentity;
using rpc::DuplicateCache;
using Kind = rpc::DuplicateCache::Seen::Kind;

const std::vector<std::uint8_t> kArgs = {1, 2, 3, 4, 5, 6, 7, 8};

CallIdentity call(std::uint32_t xid, const std::vector<std::uint8_t>& args = kArgs,
                  std::string client = "10.0.0.1") {
  return CallIdentity{std::move(client), xid, nfs3::kProgram, nfs3::kVersion, 12, 1000, 1000, args};
}

TEST(DuplicateCache, AFinishedCallIsReplayedWithTheSameBytes) {
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  auto first = drc.begin(call(7));
  ASSERT_EQ(first.kind, Kind::First);
  const rpc::Reply reply = {0, 0, 0, 8, 9, 9, 9, 9, 1, 2, 3, 4};
  drc.finish(first.key, reply, true);
  auto again = drc.begin(call(7));
  ASSERT_EQ(again.kind, Kind::Replay);
  EXPECT_EQ(again.reply, reply);
  EXPECT_EQ(drc.counts().replayed, 1u);
}

TEST(DuplicateCache, AnyOtherPartOfTheCallMakesItNew) {
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  auto first = drc.begin(call(7));
  drc.finish(first.key, {1, 2, 3}, true);
  const std::vector<std::uint8_t> other_args = {1, 2, 3, 4, 5, 6, 7, 9};
  EXPECT_EQ(drc.begin(call(8)).kind, Kind::First) << "another xid";
  EXPECT_EQ(drc.begin(call(7, other_args)).kind, Kind::First) << "other arguments";
  EXPECT_EQ(drc.begin(call(7, kArgs, "10.0.0.2")).kind, Kind::First) << "another client";
  auto other_user = call(7);
  other_user.uid = 1001;
  EXPECT_EQ(drc.begin(other_user).kind, Kind::First) << "another caller";
  auto other_proc = call(7);
  other_proc.proc = 14;
  EXPECT_EQ(drc.begin(other_proc).kind, Kind::First) << "another procedure";
  EXPECT_EQ(drc.begin(call(7)).kind, Kind::Replay) << "the original still replays";
}

TEST(DuplicateCache, ADuplicateOfACallInFlightIsToldToWait) {
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  auto first = drc.begin(call(7));
  auto dup = drc.begin(call(7));
  ASSERT_EQ(dup.kind, Kind::InFlight);
  ASSERT_TRUE(dup.pending);

  boost::asio::io_context io;
  auto waited = boost::asio::co_spawn(io, DuplicateCache::wait(dup.pending), boost::asio::use_future);
  io.run_for(std::chrono::milliseconds(20));
  EXPECT_NE(waited.wait_for(std::chrono::seconds(0)), std::future_status::ready) << "answered before the first";
  drc.finish(first.key, {4, 5, 6}, true);
  io.restart();
  io.run();
  EXPECT_EQ(waited.get(), (rpc::Reply{4, 5, 6}));
  EXPECT_EQ(drc.counts().waited, 1u);
}

TEST(DuplicateCache, AReplyNotToKeepIsForgottenButStillWakesTheWaiters) {
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  auto first = drc.begin(call(7));
  auto dup = drc.begin(call(7));
  ASSERT_EQ(dup.kind, Kind::InFlight);
  drc.finish(first.key, {9}, false);
  EXPECT_EQ(run_awaitable(DuplicateCache::wait(dup.pending)), (rpc::Reply{9}));
  EXPECT_EQ(drc.begin(call(7)).kind, Kind::First) << "executed again, not replayed";
}

TEST(DuplicateCache, EntriesExpire) {
  cache::ManualClock clock;
  rpc::DuplicateCacheOptions o;
  o.keep = std::chrono::seconds(60);
  DuplicateCache drc(o, clock);
  drc.finish(drc.begin(call(7)).key, {1}, true);
  clock.advance(59'000);
  EXPECT_EQ(drc.begin(call(7)).kind, Kind::Replay);
  clock.advance(2'000);
  EXPECT_EQ(drc.begin(call(7)).kind, Kind::First);
}

TEST(DuplicateCache, TheOldestFinishedCallMakesRoomAndCallsInFlightAreKept) {
  cache::ManualClock clock;
  rpc::DuplicateCacheOptions o;
  o.max_entries = 3;
  DuplicateCache drc(o, clock);
  drc.finish(drc.begin(call(1)).key, {1}, true);
  drc.finish(drc.begin(call(2)).key, {2}, true);
  auto in_flight = drc.begin(call(3));
  ASSERT_EQ(in_flight.kind, Kind::First);
  EXPECT_EQ(drc.counts().entries, 3u);
  // Full: the oldest finished (xid 1) goes.
  auto fourth = drc.begin(call(4));
  ASSERT_EQ(fourth.kind, Kind::First);
  EXPECT_EQ(drc.counts().entries, 3u);
  EXPECT_EQ(drc.begin(call(2)).kind, Kind::Replay);
  EXPECT_EQ(drc.begin(call(3)).kind, Kind::InFlight);
  // xid 1 is new again; it takes xid 2's place, the last finished one.
  auto one = drc.begin(call(1));
  ASSERT_EQ(one.kind, Kind::First);
  // Now all three are in flight: a further call is executed without a record.
  EXPECT_EQ(drc.begin(call(5)).kind, Kind::Untracked);
  EXPECT_EQ(drc.counts().entries, 3u);
  drc.finish(in_flight.key, {3}, true);
  drc.finish(fourth.key, {4}, true);
  drc.finish(one.key, {1}, true);
  EXPECT_EQ(drc.begin(call(3)).kind, Kind::Replay);
}

// ---- in the dispatcher ------------------------------------------------------------

/// REMOVE waits on a gate the test opens; everything it executes is counted.
class GatedRetryProgram : public FakeNfs3Program {
 public:
  explicit GatedRetryProgram(boost::asio::io_context& io) : gate(io) {
    gate.expires_at(boost::asio::steady_timer::time_point::max());
  }
  Awaitable<nfs3::RemoveRes> remove(const CallContext& ctx, nfs3::RemoveArgs args) override {
    ++removes;
    if (gated) {
      boost::system::error_code ec;
      co_await gate.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    }
    co_return co_await FakeNfs3Program::remove(ctx, std::move(args));
  }
  boost::asio::steady_timer gate;
  bool gated = false;
  int removes = 0;
};

std::vector<std::uint8_t> remove_call(std::uint32_t xid, const std::string& name) {
  CallSpec s;
  s.xid = xid;
  s.prog = nfs3::kProgram;
  s.vers = nfs3::kVersion;
  s.proc = static_cast<std::uint32_t>(nfs3::Proc::Remove);
  nfs3::RemoveArgs a;
  a.object.dir = nfs3::FileHandle(std::vector<std::uint8_t>(28, 3));
  a.object.name = name;
  return call_record(s, a);
}

std::vector<std::uint8_t> dispatch(const rpc::Dispatcher& d, const std::vector<std::uint8_t>& rec,
                                   const std::string& peer = "10.0.0.1") {
  return run_awaitable(d.dispatch(rec, peer)).flat();
}

TEST(DuplicateCacheDispatch, ARetransmittedRemoveIsExecutedOnce) {
  boost::asio::io_context io;
  GatedRetryProgram prog(io);
  prog.remove_res.status = nfs3::Status::Ok;
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  for (bool with_cache : {false, true}) {
    rpc::Dispatcher d;
    d.add(rpc::make_nfs3_table(prog));
    if (with_cache) d.use_duplicate_cache(&drc);
    prog.removes = 0;
    const auto first = dispatch(d, remove_call(0x51 + with_cache, "a"));
    prog.remove_res.status = nfs3::Status::NoEnt;  // what executing it again would say
    const auto again = dispatch(d, remove_call(0x51 + with_cache, "a"));
    prog.remove_res.status = nfs3::Status::Ok;
    if (with_cache) {
      EXPECT_EQ(prog.removes, 1);
      EXPECT_EQ(again, first) << "the same reply bytes";
    } else {
      EXPECT_EQ(prog.removes, 2) << "control: without the cache the call runs twice";
      EXPECT_NE(again, first);
    }
  }
}

TEST(DuplicateCacheDispatch, OnlyCallsThatChangeSomethingAreRemembered) {
  boost::asio::io_context io;
  GatedRetryProgram prog(io);
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  rpc::Dispatcher d;
  d.add(rpc::make_nfs3_table(prog));
  d.use_duplicate_cache(&drc);
  CallSpec s;
  s.prog = nfs3::kProgram;
  s.vers = nfs3::kVersion;
  s.proc = static_cast<std::uint32_t>(nfs3::Proc::Getattr);
  const auto getattr = call_record(s, nfs3::GetattrArgs{nfs3::FileHandle(std::vector<std::uint8_t>(28, 3))});
  dispatch(d, getattr);
  dispatch(d, getattr);
  EXPECT_EQ(prog.call_count(), 2u);
  EXPECT_EQ(drc.counts().entries, 0u);
  dispatch(d, remove_call(9, "b"));
  EXPECT_EQ(drc.counts().entries, 1u) << "positive control: a REMOVE is remembered";
}

TEST(DuplicateCacheDispatch, ADuplicateInFlightGetsTheFirstsReply) {
  boost::asio::io_context io;
  GatedRetryProgram prog(io);
  prog.gated = true;
  prog.remove_res.status = nfs3::Status::Ok;
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  rpc::Dispatcher d;
  d.add(rpc::make_nfs3_table(prog));
  d.use_duplicate_cache(&drc);
  const auto rec = remove_call(0x77, "c");
  const std::string peer = "10.0.0.1";  // dispatch() keeps a reference: it must outlive the calls
  auto a = boost::asio::co_spawn(io, d.dispatch(rec, peer), boost::asio::use_future);
  auto b = boost::asio::co_spawn(io, d.dispatch(rec, peer), boost::asio::use_future);
  io.run_for(std::chrono::milliseconds(50));
  EXPECT_EQ(prog.removes, 1);
  EXPECT_EQ(b.wait_for(std::chrono::seconds(0)), std::future_status::timeout) << "the duplicate must wait";
  prog.gate.cancel();
  io.restart();
  io.run_for(std::chrono::seconds(5));
  ASSERT_EQ(a.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  ASSERT_EQ(b.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(a.get().flat(), b.get().flat());
  EXPECT_EQ(prog.removes, 1);
}

TEST(DuplicateCacheDispatch, AJukeboxAnswerIsNotReplayed) {
  boost::asio::io_context io;
  GatedRetryProgram prog(io);
  prog.remove_res.status = nfs3::Status::Jukebox;
  prog.remove_res.gateway_status = true;
  cache::ManualClock clock;
  DuplicateCache drc({}, clock);
  rpc::Dispatcher d;
  d.add(rpc::make_nfs3_table(prog));
  d.use_duplicate_cache(&drc);
  dispatch(d, remove_call(0x99, "d"));
  prog.remove_res.status = nfs3::Status::Ok;
  const auto retry = dispatch(d, remove_call(0x99, "d"));
  EXPECT_EQ(prog.removes, 2) << "the retry after JUKEBOX must be executed";
  auto rep = parse_reply(retry);
  xdr::Reader r(rep.body);
  EXPECT_EQ(r.u32(), static_cast<std::uint32_t>(nfs3::Status::Ok));
}

// Whether a reply may go to a retransmission is decided from the typed result
// (procedure_table.h, Finished): no status nfsgw made up is replayed, whatever it
// is, while the origin's own answer, refusals included, is.
TEST(DuplicateCacheDispatch, NoStatusNfsgwMadeUpIsReplayedButTheOriginsOwnIs) {
  for (const auto status : {nfs3::Status::ServerFault, nfs3::Status::Io, nfs3::Status::Acces}) {
    for (const bool made_up : {true, false}) {
      boost::asio::io_context io;
      GatedRetryProgram prog(io);
      prog.remove_res.status = status;
      prog.remove_res.gateway_status = made_up;
      cache::ManualClock clock;
      DuplicateCache drc({}, clock);
      rpc::Dispatcher d;
      d.add(rpc::make_nfs3_table(prog));
      d.use_duplicate_cache(&drc);
      dispatch(d, remove_call(0x77, "d"));
      dispatch(d, remove_call(0x77, "d"));
      EXPECT_EQ(prog.removes, made_up ? 2 : 1)
          << "status " << static_cast<int>(status) << (made_up ? ", made up by nfsgw" : ", the origin's");
    }
  }
}

}  // namespace
}  // namespace nfsgw::test
