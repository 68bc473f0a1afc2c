// The dispatcher's memo of answers given at once (answer_memo.h), in wire bytes:
// a program whose getattr_now returns what its answer rests on the way the
// metadata cache does (a watched change counter, a window, a counter it bumps, a
// vouch), so that each rule of the memo can be broken on purpose.
#include <gtest/gtest.h>

#include <atomic>

#include "cache/answer_basis.h"
#include "cache/clock.h"
#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/rpc_test_helpers.h"
#include "tests/unit/gateway/run_awaitable.h"

namespace nfsgw::test {
namespace {

/// Answers GETATTR at once from a tiny "store": one change counter (as a store
/// shard's), a window's end on a manual clock, and a hit counter it bumps.
class RecordingProgram : public FakeNfs3Program {
 public:
  std::atomic<std::uint64_t> shard{0};
  std::atomic<std::uint64_t> hits{0};
  cache::ManualClock clock{1'000'000};
  cache::Millis window_end = cache::kNever;
  bool vouch = true;
  bool refuse = false;
  rpc::Dispatcher* forget_while_building = nullptr;  // a reload in the middle of an answer
  unsigned built = 0;
  bool last_through_memory_layer = false;

  Now<nfs3::GetattrRes> getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) override {
    ++built;
    Now<nfs3::GetattrRes> now{std::nullopt, cache::AnswerBasis(ctx.refresh_records)};
    last_through_memory_layer = now.basis.through_memory_layer();
    const std::uint64_t version = shard.load();
    now.basis.rests_on(cache::Watch{&shard, version});
    now.basis.until(clock, window_end);
    now.basis.count(hits);
    if (vouch) now.basis.vouch();
    if (refuse) now.basis.refuse();
    if (forget_while_building != nullptr) forget_while_building->forget_answers();
    nfs3::GetattrRes& res = now.res.emplace();
    res.attributes.fileid = 1000 + version;
    res.attributes.uid = ctx.cred.uid;
    res.attributes.size = args.object.view().size();
    return now;
  }

  /// A READ answered at once: `read_bytes` bytes of data (a file that small), on
  /// the same counter, window and vouch as GETATTR's.
  std::size_t read_bytes = 100;
  unsigned reads_built = 0;
  Now<nfs3::ReadRes> read_now(const CallContext& ctx, const nfs3::ReadArgs&) override {
    ++reads_built;
    Now<nfs3::ReadRes> now{std::nullopt, cache::AnswerBasis(ctx.refresh_records)};
    const std::uint64_t version = shard.load();
    now.basis.rests_on(cache::Watch{&shard, version});
    now.basis.until(clock, window_end);
    now.basis.count(hits);
    if (vouch) now.basis.vouch();
    nfs3::ReadRes& res = now.res.emplace();
    std::string data(read_bytes, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + (i + version) % 26);
    res.data = nfs3::Payload(data.begin(), data.end());
    res.count = static_cast<std::uint32_t>(data.size());
    res.eof = true;
    res.file_attributes.emplace().fileid = 1000 + version;
    return now;
  }
};

class AnswerMemoTest : public ::testing::Test {
 protected:
  AnswerMemoTest() { dispatcher.add(rpc::make_nfs3_table(program)); }

  /// GETATTR of `handle` as `uid` from `peer`; returns the result's fileid.
  /// One NFS call of `proc` through the dispatcher, as `uid` from `peer`: its whole
  /// reply record.
  template <typename Args>
  std::vector<std::uint8_t> call(nfs3::Proc proc, const Args& args, std::uint32_t uid = 1000,
                                 const std::string& peer = "10.0.0.1", std::vector<std::uint32_t> gids = {}) {
    CallSpec s;
    s.prog = nfs3::kProgram;
    s.vers = nfs3::kVersion;
    s.proc = static_cast<std::uint32_t>(proc);
    s.xid = ++xid;
    s.cred = auth_sys(uid, 100, std::move(gids));
    return run_awaitable(dispatcher.dispatch(call_record(s, args), peer)).flat();
  }

  std::uint64_t getattr(std::vector<std::uint8_t> handle = {1, 2, 3}, std::uint32_t uid = 1000,
                        const std::string& peer = "10.0.0.1", std::vector<std::uint32_t> gids = {}) {
    nfs3::GetattrArgs args;
    args.object = nfs3::FileHandle(std::span<const std::uint8_t>(handle));
    const Reply rep = parse_reply(call(nfs3::Proc::Getattr, args, uid, peer, std::move(gids)));
    EXPECT_EQ(rep.header.xid, xid) << "a copy carries the call's own xid";
    last_body = rep.body;
    return decode_result<nfs3::GetattrRes>(rep.body).attributes.fileid;
  }

  /// READ of 4 KiB at offset 0 of `handle`; returns the reply's data.
  std::string read(std::vector<std::uint8_t> handle = {1, 2, 3}) {
    nfs3::ReadArgs args;
    args.file = nfs3::FileHandle(std::span<const std::uint8_t>(handle));
    args.offset = 0;
    args.count = 4096;
    const auto record = call(nfs3::Proc::Read, args);
    last_reply.assign(record.begin() + 8, record.end());  // after the record mark and xid
    const Reply rep = parse_reply(record);
    EXPECT_EQ(rep.header.xid, xid);
    const auto res = decode_result<nfs3::ReadRes>(rep.body);
    EXPECT_EQ(res.count, res.data.size());
    return std::string(res.data.begin(), res.data.end());
  }

  RecordingProgram program;
  rpc::Dispatcher dispatcher;
  std::uint32_t xid = 0x100;
  std::vector<std::uint8_t> last_body;
  std::vector<std::uint8_t> last_reply;  // a READ's whole reply but its xid
};

TEST_F(AnswerMemoTest, TheSameCallAgainGetsACopyCountedAsTheAnswer) {
  EXPECT_EQ(getattr(), 1000u);
  const auto first = last_body;
  EXPECT_EQ(getattr(), 1000u);
  EXPECT_EQ(getattr(), 1000u);
  EXPECT_EQ(program.built, 1u) << "built once, then copied";
  EXPECT_EQ(last_body, first);
  EXPECT_EQ(program.hits.load(), 3u) << "each copy bumps what the answer bumped";
}

TEST_F(AnswerMemoTest, AChangeOfWhatItRestsOnBuildsItAgain) {
  getattr();
  getattr();
  ASSERT_EQ(program.built, 1u);
  ++program.shard;  // a write to a record of its shard
  EXPECT_EQ(getattr(), 1001u);
  EXPECT_EQ(program.built, 2u);
  EXPECT_EQ(getattr(), 1001u);
  EXPECT_EQ(program.built, 2u) << "the new answer is kept in turn";
}

TEST_F(AnswerMemoTest, AnEndedWindowBuildsItAgain) {
  program.window_end = program.clock.now_ms() + 100;
  getattr();
  program.clock.advance(99);
  getattr();
  EXPECT_EQ(program.built, 1u);
  program.clock.advance(1);
  getattr();
  EXPECT_EQ(program.built, 2u) << "the window's end is the copy's end";
}

TEST_F(AnswerMemoTest, AnotherCallerOrArgumentGetsItsOwnAnswer) {
  getattr({1, 2, 3}, 1000, "10.0.0.1");
  ASSERT_EQ(program.built, 1u);
  getattr({1, 2, 3}, 1001, "10.0.0.1");
  EXPECT_EQ(program.built, 2u) << "another uid";
  getattr({1, 2, 3}, 1000, "10.0.0.2");
  EXPECT_EQ(program.built, 3u) << "another client";
  getattr({1, 2, 3}, 1000, "10.0.0.1", {7});
  EXPECT_EQ(program.built, 4u) << "other groups";
  getattr({1, 2, 4}, 1000, "10.0.0.1");
  EXPECT_EQ(program.built, 5u) << "another handle";
  getattr({1, 2, 3}, 1000, "10.0.0.1");
  getattr({1, 2, 3}, 1001, "10.0.0.1");
  EXPECT_EQ(program.built, 5u) << "each kept apart";
}

TEST_F(AnswerMemoTest, AnAnswerNobodyVouchedForOrOneRefusedIsNeverKept) {
  program.vouch = false;
  getattr();
  getattr();
  EXPECT_EQ(program.built, 2u);
  program.vouch = true;
  program.refuse = true;
  getattr();
  getattr();
  EXPECT_EQ(program.built, 4u);
  program.refuse = false;  // positive control
  getattr();
  getattr();
  EXPECT_EQ(program.built, 5u);
}

TEST_F(AnswerMemoTest, AReloadVoidsEveryKeptAnswerAndOneBuiltDuringItIsNotKept) {
  getattr();
  getattr();
  ASSERT_EQ(program.built, 1u);
  dispatcher.forget_answers();
  getattr();
  EXPECT_EQ(program.built, 2u);
  program.forget_while_building = &dispatcher;  // the next answer straddles a reload
  ++program.shard;
  getattr();
  program.forget_while_building = nullptr;
  getattr();
  EXPECT_EQ(program.built, 4u) << "an answer built across a reload was kept";
  getattr();
  EXPECT_EQ(program.built, 4u);
}

TEST_F(AnswerMemoTest, OffMeansEveryCallIsBuilt) {
  dispatcher.use_answer_memo(false);
  getattr();
  getattr();
  EXPECT_EQ(program.built, 2u);
}

TEST_F(AnswerMemoTest, EveryNthUseIsBuiltAgainThroughTheSharedMemoryLayer) {
  getattr();
  EXPECT_FALSE(program.last_through_memory_layer);
  for (std::uint32_t i = 1; i < rpc::AnswerMemo::kUsesBeforeRefresh; ++i) getattr();
  EXPECT_EQ(program.built, 1u);
  getattr();
  EXPECT_EQ(program.built, 2u);
  EXPECT_TRUE(program.last_through_memory_layer) << "the records' LRU must see them used";
  getattr();
  EXPECT_EQ(program.built, 2u) << "kept again after the refresh";
}

TEST_F(AnswerMemoTest, ManyCallersOfTheSameArgumentsEachGetTheirOwnAnswer) {
  // Their answers share one set (call_hash covers the arguments only): more
  // callers than ways replace each other, and none ever gets another's answer.
  const auto uid_of_answer = [&](std::uint32_t uid) {
    getattr({9, 9, 9}, uid);
    return decode_result<nfs3::GetattrRes>(last_body).attributes.uid;
  };
  for (int round = 0; round < 3; ++round)
    for (std::uint32_t uid = 2000; uid < 2000 + 2 * rpc::AnswerMemo::kWays; ++uid)
      ASSERT_EQ(uid_of_answer(uid), uid) << "round " << round;
  EXPECT_GT(program.built, 2 * rpc::AnswerMemo::kWays)
      << "premise: more callers than ways replace each other (each caller's first answer alone builds 8)";
  const unsigned built = program.built;
  EXPECT_EQ(uid_of_answer(2000 + 2 * rpc::AnswerMemo::kWays - 1), 2000 + 2 * rpc::AnswerMemo::kWays - 1);
  EXPECT_EQ(program.built, built) << "the last caller's answer is kept";
}

TEST_F(AnswerMemoTest, AnAnswerTooLargeToKeepInlineIsBuiltEachTime) {
  const std::string long_peer(rpc::AnswerMemo::kInlineBytes, 'p');  // the key alone is too large
  getattr({1, 2, 3}, 1000, long_peer);
  getattr({1, 2, 3}, 1000, long_peer);
  EXPECT_EQ(program.built, 2u);
  getattr({1, 2, 3}, 1000, "10.0.0.1");
  getattr({1, 2, 3}, 1000, "10.0.0.1");
  EXPECT_EQ(program.built, 3u) << "positive control: a small one is kept";
}

TEST_F(AnswerMemoTest, TwoDispatchersNeverShareAnswers) {
  RecordingProgram other_program;
  rpc::Dispatcher other;
  other.add(rpc::make_nfs3_table(other_program));
  getattr();
  getattr();
  ASSERT_EQ(program.built, 1u);
  CallSpec s;
  s.prog = nfs3::kProgram;
  s.vers = nfs3::kVersion;
  s.proc = static_cast<std::uint32_t>(nfs3::Proc::Getattr);
  s.xid = ++xid;
  s.cred = auth_sys(1000, 100);
  nfs3::GetattrArgs args;
  const std::vector<std::uint8_t> handle{1, 2, 3};
  args.object = nfs3::FileHandle(std::span<const std::uint8_t>(handle));
  (void)run_awaitable(other.dispatch(call_record(s, args), "10.0.0.1"));
  EXPECT_EQ(other_program.built, 1u) << "the same call to another dispatcher was answered from the first's memo";
}

// A READ's data travels apart from the rest of its result (ReplyRecord::data): a
// small one is kept with it, and a copy is the same reply in one piece, with the
// data's XDR padding (101 bytes: 3 of padding).
TEST_F(AnswerMemoTest, ASmallReadIsKeptWithItsDataAndALargeOneIsNot) {
  program.read_bytes = 101;
  const std::string first = read();
  ASSERT_EQ(first.size(), 101u);
  const auto first_body = last_reply;
  EXPECT_EQ(read(), first);
  EXPECT_EQ(last_reply, first_body) << "the copy is the same reply, padding included";
  EXPECT_EQ(program.reads_built, 1u) << "built once, then copied";
  EXPECT_EQ(program.hits.load(), 2u);
  ++program.shard;  // what it rests on moves: built again
  EXPECT_NE(read(), first);
  EXPECT_EQ(program.reads_built, 2u);

  program.read_bytes = rpc::AnswerMemo::kInlineBytes;  // its data alone fills the slot
  read({4, 5, 6});
  read({4, 5, 6});
  EXPECT_EQ(program.reads_built, 4u) << "too large to keep inline: built each time";
}

}  // namespace
}  // namespace nfsgw::test
