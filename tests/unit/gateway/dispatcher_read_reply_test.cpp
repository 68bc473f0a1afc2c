// A READ reply keeps its data in the buffer it was read into: the dispatcher's
// Reply carries it apart from the header bytes (written by the connection with a
// gathered write), and the record on the wire is byte for byte what encoding the
// whole result into one buffer gives.
#include <gtest/gtest.h>

#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/rpc_test_helpers.h"
#include "tests/unit/gateway/run_awaitable.h"

namespace nfsgw::test {
namespace {

nfs3::ReadRes read_result(std::size_t n) {
  nfs3::ReadRes res;
  res.status = nfs3::Status::Ok;
  res.count = static_cast<std::uint32_t>(n);
  res.eof = true;
  res.file_attributes.emplace();
  res.file_attributes->size = 12345;
  res.data = nfs3::Payload::uninitialized(n);
  for (std::size_t i = 0; i < n; ++i) res.data[i] = static_cast<std::uint8_t>(i * 7);
  return res;
}

TEST(ReadReplyCodec, MovedDataEncodesLikeCopiedData) {
  for (std::size_t n : {0u, 1u, 5u, 8u, 4099u}) {
    std::vector<std::uint8_t> whole;
    xdr::Writer w1(whole);
    nfs3::encode(w1, read_result(n));  // an lvalue-free temporary, but no slot: copied
    std::vector<std::uint8_t> head;
    nfs3::Payload slot;
    xdr::Writer w2(head);
    w2.detach_last_opaque_into(&slot);
    nfs3::encode(w2, read_result(n));
    EXPECT_EQ(slot.size(), n);
    std::vector<std::uint8_t> joined = head;
    joined.insert(joined.end(), slot.begin(), slot.end());
    joined.resize(joined.size() + xdr::padding(slot.size()), 0);
    EXPECT_EQ(joined, whole) << n << " bytes of data";
  }
}

class DispatcherReadReply : public ::testing::Test {
 protected:
  DispatcherReadReply() { dispatcher.add(rpc::make_nfs3_table(fake)); }
  template <typename Args>
  rpc::ReplyRecord dispatch(nfs3::Proc proc, const Args& args) {
    CallSpec s;
    s.prog = nfs3::kProgram;
    s.vers = nfs3::kVersion;
    s.proc = static_cast<std::uint32_t>(proc);
    return run_awaitable(dispatcher.dispatch(call_record(s, args), "127.0.0.1"));
  }
  FakeNfs3Program fake;
  rpc::Dispatcher dispatcher;
};

TEST_F(DispatcherReadReply, ReadDataTravelsApartFromTheHeader) {
  fake.read_res = read_result(4097);  // 3 bytes of padding
  nfs3::ReadArgs args;
  args.file = nfs3::FileHandle(std::vector<std::uint8_t>{1, 2, 3});
  args.count = 4097;
  const rpc::ReplyRecord reply = dispatch(nfs3::Proc::Read, args);
  EXPECT_EQ(reply.data.size(), 4097u);
  EXPECT_LT(reply.bytes.size(), 256u);  // the header, attributes, count, eof, length
  EXPECT_EQ(reply.size(), reply.bytes.size() + 4097 + 3);

  const std::vector<std::uint8_t> flat = reply.flat();
  ASSERT_EQ(flat.size(), reply.size());
  const Reply rep = parse_reply(flat);  // checks the record mark covers it all
  ASSERT_EQ(rep.header.accept, rpc::AcceptStat::Success);
  const auto res = decode_result<nfs3::ReadRes>(rep.body);
  EXPECT_EQ(res.count, 4097u);
  EXPECT_TRUE(res.eof);
  EXPECT_EQ(res.data, fake.read_res.data);
}

TEST_F(DispatcherReadReply, OtherRepliesAndFailedReadsCarryEverythingInTheirBytes) {
  nfs3::GetattrArgs g;
  g.object = nfs3::FileHandle(std::vector<std::uint8_t>{1});
  fake.getattr_res.status = nfs3::Status::Ok;
  EXPECT_TRUE(dispatch(nfs3::Proc::Getattr, g).data.empty());

  fake.read_res = read_result(100);
  fake.throw_in = "read";  // SYSTEM_ERR: nothing of a result may remain
  nfs3::ReadArgs args;
  args.file = nfs3::FileHandle(std::vector<std::uint8_t>{1});
  args.count = 100;
  const rpc::ReplyRecord reply = dispatch(nfs3::Proc::Read, args);
  EXPECT_TRUE(reply.data.empty());
  EXPECT_EQ(parse_reply(reply.flat()).header.accept, rpc::AcceptStat::SystemErr);
}

}  // namespace
}  // namespace nfsgw::test
