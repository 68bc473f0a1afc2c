// Where a call's arguments end: bytes after them are refused with GARBAGE_ARGS on
// the answer-now path and the coroutine path alike (so that a small call cannot
// pin a large record while it waits), and the reply size a connection reserves
// before running a call follows the call's own bound (a READ's count).
#include <gtest/gtest.h>

#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/rpc_test_helpers.h"
#include "tests/unit/gateway/run_awaitable.h"

namespace nfsgw::test {
namespace {

using rpc::AcceptStat;

/// `args` encoded, then `extra` bytes of 0x5A.
template <typename Args>
RawArgs with_trailing(const Args& args, std::size_t extra) {
  RawArgs raw;
  xdr::Writer w(raw.bytes);
  nfs3::encode(w, args);
  raw.bytes.insert(raw.bytes.end(), extra, 0x5A);
  return raw;
}

class DispatcherArgsEnd : public ::testing::Test {
 protected:
  DispatcherArgsEnd() { dispatcher.add(rpc::make_nfs3_table(fake)); }

  static CallSpec nfs_call(nfs3::Proc proc) {
    CallSpec s;
    s.prog = nfs3::kProgram;
    s.vers = nfs3::kVersion;
    s.proc = static_cast<std::uint32_t>(proc);
    return s;
  }
  template <typename Args>
  Reply dispatch_reply(nfs3::Proc proc, const Args& args) {
    return parse_reply(run_awaitable(dispatcher.dispatch(call_record(nfs_call(proc), args), "127.0.0.1")).flat());
  }

  FakeNfs3Program fake;
  rpc::Dispatcher dispatcher;
};

TEST_F(DispatcherArgsEnd, TrailingBytesAfterGetattrArgsAreGarbageArgs) {
  fake.getattr_res.status = nfs3::Status::Ok;
  nfs3::GetattrArgs args;
  args.object = fh({1, 2, 3, 4});
  // Positive control: the same arguments with nothing after them are served.
  Reply ok = dispatch_reply(nfs3::Proc::Getattr, args);
  ASSERT_EQ(ok.header.accept, AcceptStat::Success);
  ASSERT_EQ(fake.call_count(), 1u);

  for (std::size_t extra : {4u, 8u, 64u * 1024u}) {
    const Reply rep = dispatch_reply(nfs3::Proc::Getattr, with_trailing(args, extra));
    EXPECT_EQ(rep.header.accept, AcceptStat::GarbageArgs) << extra << " trailing bytes";
    EXPECT_TRUE(rep.body.empty());
  }
  EXPECT_EQ(fake.call_count(), 1u);  // none of them reached the program
}

TEST_F(DispatcherArgsEnd, TrailingBytesAreRefusedOnTheAnswerNowPathToo) {
  fake.lookup_now_res = nfs3::LookupRes{};
  fake.lookup_now_res->status = nfs3::Status::NoEnt;
  nfs3::LookupArgs args;
  args.what.dir = fh({9, 9});
  args.what.name = "probe.php";
  ASSERT_EQ(dispatch_reply(nfs3::Proc::Lookup, args).header.accept, AcceptStat::Success);
  ASSERT_EQ(fake.calls().back().proc, "lookup_now");  // the answer-now path is taken

  const Reply rep = dispatch_reply(nfs3::Proc::Lookup, with_trailing(args, 4));
  EXPECT_EQ(rep.header.accept, AcceptStat::GarbageArgs);
  EXPECT_EQ(fake.call_count(), 1u);
}

TEST_F(DispatcherArgsEnd, TrailingBytesAfterAWriteOrANullAreGarbageArgs) {
  nfs3::WriteArgs w;
  w.file = fh({1});
  w.count = 5;
  w.data = {1, 2, 3, 4, 5};  // padded to 8 on the wire: the padding is part of the args
  ASSERT_EQ(dispatch_reply(nfs3::Proc::Write, w).header.accept, AcceptStat::Success);
  EXPECT_EQ(dispatch_reply(nfs3::Proc::Write, with_trailing(w, 4)).header.accept, AcceptStat::GarbageArgs);
  EXPECT_EQ(dispatch_reply(nfs3::Proc::Null, RawArgs{{0, 0, 0, 0}}).header.accept, AcceptStat::GarbageArgs);
  EXPECT_EQ(dispatch_reply(nfs3::Proc::Null, NoArgs{}).header.accept, AcceptStat::Success);
  ASSERT_EQ(fake.call_count(), 2u);  // the good WRITE and the good NULL
}

TEST_F(DispatcherArgsEnd, ReplyReserveFollowsTheReadCount) {
  nfs3::ReadArgs r;
  r.file = fh({1, 2, 3});
  r.count = 1u << 20;
  const std::size_t big = dispatcher.preview(call_record(nfs_call(nfs3::Proc::Read), r)).reply_bytes;
  EXPECT_GE(big, (1u << 20) + 100);  // the data, its attributes and the header
  EXPECT_LT(big, (1u << 20) + 4096);

  r.count = 4096;
  const std::size_t small = dispatcher.preview(call_record(nfs_call(nfs3::Proc::Read), r)).reply_bytes;
  EXPECT_GE(small, 4096u + 100);
  EXPECT_LT(small, 4096u + 4096);

  r.count = 0xFFFFFFFF;  // a client may ask; the reply never carries more than kMaxData
  EXPECT_EQ(dispatcher.preview(call_record(nfs_call(nfs3::Proc::Read), r)).reply_bytes, big);

  nfs3::ReaddirplusArgs d;
  d.dir = fh({7});
  d.dircount = 512;
  d.maxcount = 65536;
  EXPECT_GE(dispatcher.preview(call_record(nfs_call(nfs3::Proc::Readdirplus), d)).reply_bytes, 65536u);

  nfs3::GetattrArgs g;
  g.object = fh({1});
  const std::size_t getattr = dispatcher.preview(call_record(nfs_call(nfs3::Proc::Getattr), g)).reply_bytes;
  EXPECT_GE(getattr, 200u);  // a GETATTR reply with its fattr3 fits
  EXPECT_LT(getattr, 4096u);

  // Garbage and unknown programs: a header's worth, never a throw.
  EXPECT_LT(dispatcher.preview(std::vector<std::uint8_t>{1, 2}).reply_bytes, 256u);
  CallSpec other = nfs_call(nfs3::Proc::Read);
  other.prog = 4242;
  EXPECT_LT(dispatcher.preview(call_record(other, r)).reply_bytes, 256u);
}

TEST_F(DispatcherArgsEnd, PreviewTellsCallsOfKnownProceduresFromTheRest) {
  nfs3::GetattrArgs g;
  g.object = fh({1});
  EXPECT_TRUE(dispatcher.preview(call_record(nfs_call(nfs3::Proc::Getattr), g)).known_procedure);
  EXPECT_TRUE(dispatcher.preview(call_record(nfs_call(nfs3::Proc::Null), NoArgs{})).known_procedure);
  CallSpec s = nfs_call(nfs3::Proc::Getattr);
  s.prog = 4242;  // PROG_UNAVAIL
  EXPECT_FALSE(dispatcher.preview(call_record(s, g)).known_procedure);
  s = nfs_call(nfs3::Proc::Getattr);
  s.vers = 2;  // PROG_MISMATCH
  EXPECT_FALSE(dispatcher.preview(call_record(s, g)).known_procedure);
  s = nfs_call(nfs3::Proc::Getattr);
  s.proc = 99;  // PROC_UNAVAIL
  EXPECT_FALSE(dispatcher.preview(call_record(s, g)).known_procedure);
  s = nfs_call(nfs3::Proc::Getattr);
  s.rpcvers = 3;  // RPC_MISMATCH
  EXPECT_FALSE(dispatcher.preview(call_record(s, g)).known_procedure);
  EXPECT_FALSE(dispatcher.preview(std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}).known_procedure);
}

}  // namespace
}  // namespace nfsgw::test
