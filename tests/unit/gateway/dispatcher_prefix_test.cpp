// Every prefix of a valid call, dispatched on its own: the dispatcher must never
// crash or read past the record (each prefix is copied into a buffer of exactly its
// size, so the sanitizer build catches over-reads), must answer nothing until an
// xid and CALL are present, GARBAGE_ARGS for anything cut short after that, and
// must reach the program only with the whole call.
#include <gtest/gtest.h>

#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "protocol/nfs3_codec.h"
#include "tests/unit/gateway/fake_nfs3_program.h"
#include "tests/unit/gateway/rpc_test_helpers.h"
#include "tests/unit/gateway/run_awaitable.h"

namespace nfsgw::test {
namespace {

template <typename Args>
void check_every_prefix(nfs3::Proc proc, const Args& args) {
  FakeNfs3Program fake;
  rpc::Dispatcher dispatcher;
  dispatcher.add(rpc::make_nfs3_table(fake));
  CallSpec s;
  s.prog = nfs3::kProgram;
  s.vers = nfs3::kVersion;
  s.proc = static_cast<std::uint32_t>(proc);
  s.cred = auth_sys(0, 0, {1, 2, 3}, "a-machine-name");
  const std::vector<std::uint8_t> full = call_record(s, args);

  for (std::size_t n = 0; n <= full.size(); ++n) {
    SCOPED_TRACE("prefix of " + std::to_string(n) + " of " + std::to_string(full.size()) +
                 " bytes, " + nfs3::proc_name(s.proc));
    // A heap buffer of exactly n bytes: any read past it is a sanitizer error.
    auto exact = std::make_unique<std::uint8_t[]>(n == 0 ? 1 : n);
    std::copy_n(full.begin(), n, exact.get());
    std::vector<std::uint8_t> reply;
    ASSERT_NO_THROW(reply = run_awaitable(
                        dispatcher.dispatch(std::span<const std::uint8_t>(exact.get(), n),
                                            "127.0.0.1"))
                                    .flat());
    if (n < 8) {
      EXPECT_TRUE(reply.empty());
      continue;
    }
    Reply rep;
    ASSERT_NO_THROW(rep = parse_reply(reply));
    EXPECT_EQ(rep.header.xid, s.xid);
    ASSERT_EQ(rep.header.stat, rpc::ReplyStat::Accepted);
    if (n < full.size()) {
      EXPECT_EQ(rep.header.accept, rpc::AcceptStat::GarbageArgs);
      EXPECT_EQ(fake.call_count(), 0u);
    } else {
      EXPECT_EQ(rep.header.accept, rpc::AcceptStat::Success);
      EXPECT_EQ(fake.call_count(), 1u);
    }
  }
}

nfs3::FileHandle some_handle() {
  std::vector<std::uint8_t> b(40);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return nfs3::FileHandle(b);
}

TEST(DispatcherPrefixTest, Getattr) {
  check_every_prefix(nfs3::Proc::Getattr, nfs3::GetattrArgs{some_handle()});
}

TEST(DispatcherPrefixTest, Lookup) {
  nfs3::LookupArgs a;
  a.what.dir = some_handle();
  a.what.name = "file-name.txt";
  check_every_prefix(nfs3::Proc::Lookup, a);
}

TEST(DispatcherPrefixTest, Write) {
  nfs3::WriteArgs a;
  a.file = some_handle();
  a.offset = 1ull << 40;
  a.data = std::vector<std::uint8_t>(37, 0x5A);
  a.count = 37;
  a.stable = nfs3::StableHow::FileSync;
  check_every_prefix(nfs3::Proc::Write, a);
}

TEST(DispatcherPrefixTest, Setattr) {
  nfs3::SetattrArgs a;
  a.object = some_handle();
  a.new_attributes.mode = 0644;
  a.new_attributes.size = 12;
  a.new_attributes.mtime.how = nfs3::TimeHow::ClientTime;
  a.new_attributes.mtime.time = {5, 6};
  a.guard = nfs3::Time{7, 8};
  check_every_prefix(nfs3::Proc::Setattr, a);
}

TEST(DispatcherPrefixTest, Rename) {
  nfs3::RenameArgs a;
  a.from.dir = some_handle();
  a.from.name = "old";
  a.to.dir = some_handle();
  a.to.name = "new-name";
  check_every_prefix(nfs3::Proc::Rename, a);
}

TEST(DispatcherPrefixTest, Symlink) {
  nfs3::SymlinkArgs a;
  a.where.dir = some_handle();
  a.where.name = "link";
  a.symlink_attributes.mode = 0777;
  a.symlink_data = "../target/path";
  check_every_prefix(nfs3::Proc::Symlink, a);
}

}  // namespace
}  // namespace nfsgw::test
