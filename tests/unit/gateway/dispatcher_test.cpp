// The dispatcher in wire bytes: real calls encoded with protocol/, dispatched to the
// NFSv3 table over a recording fake, replies decoded as a client would. Covers the
// success path and every generic RPC error the dispatcher owns.
#include <gtest/gtest.h>

#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/nfs3_procedure_info.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/rpc_test_helpers.h"
#include "tests/unit/gateway/run_awaitable.h"

namespace nfsgw::test {
namespace {

using rpc::AcceptStat;
using rpc::AuthStat;
using rpc::RejectStat;
using rpc::ReplyStat;

class DispatcherTest : public ::testing::Test {
 protected:
  DispatcherTest() { dispatcher.add(rpc::make_nfs3_table(fake)); }

  std::vector<std::uint8_t> dispatch(const std::vector<std::uint8_t>& record,
                                     const std::string& peer = "127.0.0.1") {
    return run_awaitable(dispatcher.dispatch(record, peer)).flat();
  }
  Reply dispatch_reply(const std::vector<std::uint8_t>& record) {
    return parse_reply(dispatch(record));
  }

  static CallSpec nfs_call(nfs3::Proc proc, rpc::OpaqueAuth cred = auth_sys(1000, 100)) {
    CallSpec s;
    s.prog = nfs3::kProgram;
    s.vers = nfs3::kVersion;
    s.proc = static_cast<std::uint32_t>(proc);
    s.cred = std::move(cred);
    return s;
  }

  FakeNfs3Program fake;
  rpc::Dispatcher dispatcher;
};

TEST_F(DispatcherTest, GetattrReachesTheProgramWithArgsAndCredentials) {
  fake.getattr_res.status = nfs3::Status::Ok;
  fake.getattr_res.attributes.fileid = 777;
  fake.getattr_res.attributes.type = nfs3::FileType::Dir;
  nfs3::GetattrArgs args;
  args.object = fh({1, 2, 3, 4, 5});
  CallSpec s = nfs_call(nfs3::Proc::Getattr, auth_sys(1001, 2002, {3, 4, 5}, "host-a"));
  s.xid = 0xCAFE;

  const Reply rep = dispatch_reply(call_record(s, args));

  EXPECT_EQ(rep.header.xid, 0xCAFEu);
  ASSERT_EQ(rep.header.stat, ReplyStat::Accepted);
  ASSERT_EQ(rep.header.accept, AcceptStat::Success);
  const auto res = decode_result<nfs3::GetattrRes>(rep.body);
  EXPECT_EQ(res.status, nfs3::Status::Ok);
  EXPECT_EQ(res.attributes.fileid, 777u);
  EXPECT_EQ(res.attributes.type, nfs3::FileType::Dir);

  ASSERT_EQ(fake.call_count(), 1u);
  EXPECT_EQ(fake.calls()[0].proc, "getattr");
  EXPECT_EQ(fake.getattr_args.object, args.object);
  const CallContext ctx = fake.last_ctx();
  EXPECT_EQ(ctx.xid, 0xCAFEu);
  EXPECT_EQ(ctx.client_address, "127.0.0.1");
  EXPECT_FALSE(ctx.cred.auth_none);
  EXPECT_EQ(ctx.cred.uid, 1001u);
  EXPECT_EQ(ctx.cred.gid, 2002u);
  EXPECT_EQ(ctx.cred.gids, (AuthGroups{3, 4, 5}));
  EXPECT_EQ(ctx.cred.machine_name, "host-a");
  EXPECT_FALSE(ctx.proc_flags & rpc::flags::Mutates);
}

TEST_F(DispatcherTest, ThePeerNeedNotOutliveTheCallAndTheGoneFlagArrivesAsGiven) {
  nfs3::GetattrArgs args;
  args.object = fh({1, 2, 3});
  const std::vector<std::uint8_t> record = call_record(nfs_call(nfs3::Proc::Getattr), args);
  auto gone = std::make_shared<CallerGone>();
  // The peer's string (longer than a short-string buffer) is gone before the call
  // runs: the dispatcher keeps its own copy (ASan reports a use after free if not).
  Awaitable<rpc::ReplyRecord> call = [&] {
    const std::string peer = "2001:db8:ffff:ffff:ffff:ffff:ffff:77";
    return dispatcher.dispatch(record, peer, gone.get());
  }();
  const std::string other(64, 'x');  // likely reuses the freed block
  const rpc::ReplyRecord reply = run_awaitable(std::move(call));
  ASSERT_FALSE(reply.empty());
  ASSERT_EQ(fake.call_count(), 1u);
  EXPECT_EQ(fake.last_ctx().client_address, "2001:db8:ffff:ffff:ffff:ffff:ffff:77");
  EXPECT_EQ(fake.last_ctx().caller_gone, gone.get());
  EXPECT_FALSE(fake.last_ctx().caller_left());
  gone->raise();
  EXPECT_TRUE(fake.last_ctx().caller_left());
}

TEST_F(DispatcherTest, LookupArgsArriveDecoded) {
  fake.lookup_res.status = nfs3::Status::NoEnt;
  nfs3::LookupArgs args;
  args.what.dir = fh({9, 9});
  args.what.name = "some name";
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Lookup), args));
  ASSERT_EQ(rep.header.accept, AcceptStat::Success);
  EXPECT_EQ(decode_result<nfs3::LookupRes>(rep.body).status, nfs3::Status::NoEnt);
  EXPECT_EQ(fake.lookup_args.what.dir, args.what.dir);
  EXPECT_EQ(fake.lookup_args.what.name, "some name");
}

TEST_F(DispatcherTest, AnAnswerGivenAtOnceSkipsTheCoroutine) {
  fake.lookup_now_res = nfs3::LookupRes{};
  fake.lookup_now_res->status = nfs3::Status::NoEnt;
  fake.lookup_res.status = nfs3::Status::Io;  // what the coroutine would say
  nfs3::LookupArgs args;
  args.what.dir = fh({9, 9});
  args.what.name = "probe.php";
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Lookup), args));
  ASSERT_EQ(rep.header.accept, AcceptStat::Success);
  EXPECT_EQ(decode_result<nfs3::LookupRes>(rep.body).status, nfs3::Status::NoEnt);
  ASSERT_EQ(fake.call_count(), 1u);
  EXPECT_EQ(fake.calls()[0].proc, "lookup_now");
  EXPECT_EQ(fake.lookup_args.what.name, "probe.php");
  EXPECT_EQ(fake.last_ctx().xid, rep.header.xid);
}

TEST_F(DispatcherTest, NoAnswerAtOnceOrAFailingOneGoesToTheCoroutine) {
  fake.lookup_res.status = nfs3::Status::NoEnt;
  nfs3::LookupArgs args;
  args.what.dir = fh({9, 9});
  args.what.name = "x";
  for (bool throws : {false, true}) {
    fake.lookup_now_throws = throws;
    const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Lookup), args));
    ASSERT_EQ(rep.header.accept, AcceptStat::Success);
    // The arguments are decoded again by the coroutine path: nothing half-written.
    EXPECT_EQ(decode_result<nfs3::LookupRes>(rep.body).status, nfs3::Status::NoEnt);
    EXPECT_EQ(fake.calls().back().proc, "lookup");
    EXPECT_EQ(fake.lookup_args.what.name, "x");
  }
}

TEST_F(DispatcherTest, MutatingProceduresCarryTheMutatesFlag) {
  nfs3::WriteArgs args;
  args.file = fh({1});
  args.data = {1, 2, 3};
  args.count = 3;
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Write), args));
  ASSERT_EQ(rep.header.accept, AcceptStat::Success);
  EXPECT_EQ(fake.write_args.data, (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_TRUE(fake.last_ctx().proc_flags & rpc::flags::Mutates);
}

TEST_F(DispatcherTest, Nfs3TableTakesNamesAndFlagsFromTheProcedureInfo) {
  const rpc::ProgramVersion t = rpc::make_nfs3_table(fake);
  ASSERT_EQ(t.procedures.size(), rpc::kNfs3Procedures.size());
  for (std::uint32_t i = 0; i < nfs3::kProcCount; ++i) {
    const rpc::Nfs3ProcedureInfo& info = rpc::kNfs3Procedures[i];
    EXPECT_EQ(static_cast<std::uint32_t>(info.proc), i);
    EXPECT_STREQ(t.procedures[i].name, info.name) << i;
    EXPECT_STREQ(info.name, nfs3::proc_name(i)) << i;  // the protocol's names for logs agree
    EXPECT_EQ(t.procedures[i].flags, info.flags) << info.name;
    EXPECT_TRUE(t.procedures[i].handler || t.procedures[i].begin) << info.name;
    EXPECT_EQ(static_cast<bool>(t.procedures[i].begin), info.proc != nfs3::Proc::Null) << info.name << ": decoded once, answer step first";
  }
}

TEST(Nfs3ProcedureInfo, WhichProceduresMutateAndWhichMayBeRepeated) {
  using nfs3::Proc;
  std::string mutates, not_idempotent;
  for (const auto& p : rpc::kNfs3Procedures) {
    if (p.flags & rpc::flags::Mutates) mutates += std::string(mutates.empty() ? "" : " ") + p.name;
    if (!rpc::nfs3_idempotent(p.proc)) {
      not_idempotent += std::string(not_idempotent.empty() ? "" : " ") + p.name;
    }
  }
  EXPECT_EQ(mutates, "SETATTR WRITE CREATE MKDIR SYMLINK MKNOD REMOVE RMDIR RENAME LINK COMMIT");
  EXPECT_EQ(not_idempotent, "CREATE MKDIR SYMLINK MKNOD REMOVE RMDIR RENAME LINK");
  // The per-call rule: only a guarded SETATTR differs from its procedure's flag.
  nfs3::SetattrArgs unguarded;
  nfs3::SetattrArgs guarded;
  guarded.guard = nfs3::Time{1, 2};
  EXPECT_TRUE(rpc::nfs3_call_idempotent(Proc::Setattr, unguarded));
  EXPECT_FALSE(rpc::nfs3_call_idempotent(Proc::Setattr, guarded));
  EXPECT_TRUE(rpc::nfs3_call_idempotent(Proc::Write, nfs3::WriteArgs{}));
  EXPECT_FALSE(rpc::nfs3_call_idempotent(Proc::Create, nfs3::CreateArgs{}));
  static_assert(rpc::nfs3_call_idempotent(Proc::Getattr, nfs3::GetattrArgs{}));
  static_assert(!rpc::nfs3_idempotent(Proc::Rename));
}

TEST_F(DispatcherTest, AuthNoneIsMarkedInTheContext) {
  const Reply rep =
      dispatch_reply(call_record(nfs_call(nfs3::Proc::Getattr, auth_none()), nfs3::GetattrArgs{}));
  ASSERT_EQ(rep.header.accept, AcceptStat::Success);
  EXPECT_TRUE(fake.last_ctx().cred.auth_none);
}

TEST_F(DispatcherTest, NullAnswersWithAnEmptyResult) {
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Null), NoArgs{}));
  ASSERT_EQ(rep.header.accept, AcceptStat::Success);
  EXPECT_TRUE(rep.body.empty());
  EXPECT_EQ(fake.call_count(), 1u);
}

TEST_F(DispatcherTest, UnknownProgramIsProgUnavail) {
  CallSpec s = nfs_call(nfs3::Proc::Null);
  s.prog = 100099;
  const Reply rep = dispatch_reply(call_record(s, NoArgs{}));
  EXPECT_EQ(rep.header.xid, s.xid);
  ASSERT_EQ(rep.header.stat, ReplyStat::Accepted);
  EXPECT_EQ(rep.header.accept, AcceptStat::ProgUnavail);
  EXPECT_TRUE(rep.body.empty());
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, WrongVersionIsProgMismatchWithTheRange) {
  CallSpec s = nfs_call(nfs3::Proc::Null);
  s.vers = 4;
  const Reply rep = dispatch_reply(call_record(s, NoArgs{}));
  ASSERT_EQ(rep.header.stat, ReplyStat::Accepted);
  EXPECT_EQ(rep.header.accept, AcceptStat::ProgMismatch);
  EXPECT_EQ(rep.header.mismatch_low, 3u);
  EXPECT_EQ(rep.header.mismatch_high, 3u);
  EXPECT_TRUE(rep.body.empty());
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, ProgMismatchRangeSpansAllRegisteredVersions) {
  // Two more versions of a private program: the range is the lowest to the highest.
  for (std::uint32_t v : {7u, 2u, 5u}) dispatcher.add(rpc::ProgramVersion{0x20000042, v, {}});
  CallSpec s;
  s.prog = 0x20000042;
  s.vers = 3;
  const Reply rep = dispatch_reply(call_record(s, NoArgs{}));
  EXPECT_EQ(rep.header.accept, AcceptStat::ProgMismatch);
  EXPECT_EQ(rep.header.mismatch_low, 2u);
  EXPECT_EQ(rep.header.mismatch_high, 7u);
}

TEST_F(DispatcherTest, UnknownProcedureIsProcUnavail) {
  for (std::uint32_t proc : {22u, 23u, 1000u, 0xFFFFFFFFu}) {
    CallSpec s = nfs_call(nfs3::Proc::Null);
    s.proc = proc;
    const Reply rep = dispatch_reply(call_record(s, NoArgs{}));
    ASSERT_EQ(rep.header.stat, ReplyStat::Accepted) << proc;
    EXPECT_EQ(rep.header.accept, AcceptStat::ProcUnavail) << proc;
    EXPECT_TRUE(rep.body.empty());
  }
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, TruncatedArgumentsAreGarbageArgsAndNeverReachTheProgram) {
  nfs3::LookupArgs args;
  args.what.dir = fh({1, 2, 3, 4, 5, 6, 7, 8});
  args.what.name = "abcdefgh";
  std::vector<std::uint8_t> full = call_record(nfs_call(nfs3::Proc::Lookup), args);
  full.resize(full.size() - 4);  // cut into the name
  const Reply rep = dispatch_reply(full);
  ASSERT_EQ(rep.header.stat, ReplyStat::Accepted);
  EXPECT_EQ(rep.header.accept, AcceptStat::GarbageArgs);
  EXPECT_TRUE(rep.body.empty());
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, MissingArgumentsAreGarbageArgs) {
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Getattr), NoArgs{}));
  EXPECT_EQ(rep.header.accept, AcceptStat::GarbageArgs);
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, OversizedHandleIsGarbageArgs) {
  // A file handle length of 65 is above NFS3_FHSIZE.
  std::vector<std::uint8_t> bytes = {0, 0, 0, 65};
  bytes.resize(4 + 68, 0xAB);
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Getattr), RawArgs{bytes}));
  EXPECT_EQ(rep.header.accept, AcceptStat::GarbageArgs);
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, RpcVersion3IsDeniedWithRpcMismatch) {
  CallSpec s = nfs_call(nfs3::Proc::Getattr);
  s.rpcvers = 3;
  const Reply rep = dispatch_reply(call_record(s, nfs3::GetattrArgs{}));
  EXPECT_EQ(rep.header.xid, s.xid);
  ASSERT_EQ(rep.header.stat, ReplyStat::Denied);
  EXPECT_EQ(rep.header.reject, RejectStat::RpcMismatch);
  EXPECT_EQ(rep.header.mismatch_low, 2u);
  EXPECT_EQ(rep.header.mismatch_high, 2u);
  EXPECT_TRUE(rep.body.empty());
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, UnsupportedFlavorIsTooWeak) {
  rpc::OpaqueAuth gss;
  gss.flavor = 6;  // RPCSEC_GSS
  gss.body = {0, 0, 0, 1};
  const Reply rep =
      dispatch_reply(call_record(nfs_call(nfs3::Proc::Getattr, gss), nfs3::GetattrArgs{}));
  ASSERT_EQ(rep.header.stat, ReplyStat::Denied);
  EXPECT_EQ(rep.header.reject, RejectStat::AuthError);
  EXPECT_EQ(rep.header.auth, AuthStat::TooWeak);
  EXPECT_TRUE(rep.body.empty());
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, NullIsAnsweredWhateverTheFlavor) {
  rpc::OpaqueAuth gss;
  gss.flavor = 6;
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Null, gss), NoArgs{}));
  ASSERT_EQ(rep.header.stat, ReplyStat::Accepted);
  EXPECT_EQ(rep.header.accept, AcceptStat::Success);
}

TEST_F(DispatcherTest, MalformedAuthSysIsBadCred) {
  rpc::OpaqueAuth bad;
  bad.flavor = 1;
  bad.body = {0, 0, 0, 1, 0, 0};  // stamp, then half a string length
  Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Getattr, bad), nfs3::GetattrArgs{}));
  ASSERT_EQ(rep.header.stat, ReplyStat::Denied);
  EXPECT_EQ(rep.header.reject, RejectStat::AuthError);
  EXPECT_EQ(rep.header.auth, AuthStat::BadCred);

  // 17 supplementary gids: one above the AUTH_SYS limit.
  rpc::OpaqueAuth many = auth_sys(1, 1, std::vector<std::uint32_t>(17, 7));
  rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Getattr, many), nfs3::GetattrArgs{}));
  ASSERT_EQ(rep.header.stat, ReplyStat::Denied);
  EXPECT_EQ(rep.header.auth, AuthStat::BadCred);
  EXPECT_EQ(fake.call_count(), 0u);
}

TEST_F(DispatcherTest, RecordTooShortForAnXidGetsNoReply) {
  for (std::size_t n = 0; n < 4; ++n) {
    std::vector<std::uint8_t> rec(n, 0x11);
    EXPECT_TRUE(dispatch(rec).empty()) << n;
  }
}

TEST_F(DispatcherTest, ReplyMessagesGetNoReply) {
  std::vector<std::uint8_t> rec;
  xdr::Writer w(rec);
  rpc::encode_accepted_reply(w, 5, AcceptStat::Success);
  EXPECT_TRUE(dispatch(rec).empty());
}

TEST_F(DispatcherTest, ThrowingHandlerIsSystemErr) {
  fake.throw_in = "getattr";
  const Reply rep = dispatch_reply(call_record(nfs_call(nfs3::Proc::Getattr), nfs3::GetattrArgs{}));
  ASSERT_EQ(rep.header.stat, ReplyStat::Accepted);
  EXPECT_EQ(rep.header.accept, AcceptStat::SystemErr);
  EXPECT_TRUE(rep.body.empty());
  EXPECT_EQ(fake.call_count(), 1u);
}

TEST_F(DispatcherTest, PartialOutputOfAFailedHandlerIsDiscarded) {
  // A handler that wrote half a result before failing: the reply is the bare
  // SYSTEM_ERR header, with none of its bytes.
  rpc::ProgramVersion t{0x20000043, 1, {}};
  t.procedures.resize(2);
  t.procedures[1] = rpc::Procedure{
      "HALF", 0,
      [](const CallContext&, xdr::Reader&, xdr::Writer& out) -> Awaitable<rpc::Finished> {
        out.u32(0xDEADBEEF);
        out.u32(0xDEADBEEF);
        throw std::runtime_error("failed halfway");
        co_return rpc::Outcome::Success;
      }};
  dispatcher.add(std::move(t));
  CallSpec s;
  s.prog = 0x20000043;
  s.vers = 1;
  s.proc = 1;
  const Reply rep = dispatch_reply(call_record(s, NoArgs{}));
  EXPECT_EQ(rep.header.accept, AcceptStat::SystemErr);
  EXPECT_TRUE(rep.body.empty());
}

TEST_F(DispatcherTest, HandlerOutcomesMapToAcceptStats) {
  rpc::ProgramVersion t{0x20000044, 1, {}};
  t.procedures.resize(3);
  auto returning = [](rpc::Outcome o) {
    return [o](const CallContext&, xdr::Reader&, xdr::Writer& out) -> Awaitable<rpc::Finished> {
      out.u32(1);  // must not survive unless o is Success
      co_return o;
    };
  };
  t.procedures[0] = rpc::Procedure{"OK", 0, returning(rpc::Outcome::Success)};
  t.procedures[1] = rpc::Procedure{"GARBAGE", 0, returning(rpc::Outcome::GarbageArgs)};
  t.procedures[2] = rpc::Procedure{"SYSERR", 0, returning(rpc::Outcome::SystemErr)};
  dispatcher.add(std::move(t));
  CallSpec s;
  s.prog = 0x20000044;
  s.vers = 1;
  const AcceptStat want[] = {AcceptStat::Success, AcceptStat::GarbageArgs, AcceptStat::SystemErr};
  for (std::uint32_t p = 0; p < 3; ++p) {
    s.proc = p;
    const Reply rep = dispatch_reply(call_record(s, NoArgs{}));
    EXPECT_EQ(rep.header.accept, want[p]) << p;
    EXPECT_EQ(rep.body.size(), p == 0 ? 4u : 0u) << p;
  }
}

}  // namespace
}  // namespace nfsgw::test
