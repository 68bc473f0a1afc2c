// MountProgram: export roots from the configuration, subfolder mounts walked with
// LOOKUPs through the (fake) NFS program, and the informational DUMP/UMNT/EXPORT.
#include <gtest/gtest.h>

#include <map>

#include "gateway/mount_program.h"
#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/mount_procedures.h"
#include "tests/unit/gateway/rpc_test_helpers.h"
#include "tests/unit/gateway/run_awaitable.h"
#include "tests/unit/gateway/translator_fixture.h"

namespace nfsgw::test {
namespace {

using MountStatus = mount3::Status;

class MountProgramTest : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kExportId = 0x3333;
  static constexpr std::uint32_t kDeepId = 0x4444;
  static constexpr std::uint32_t kLanId = 0x5555;

  MountProgramTest()
      : store(cache::make_memory_store()),
        codec(fixed_secret(), *store),
        exports{make_export("/export", kExportId, config::Access::ReadWrite, config::Squash::Root),
                make_export("/export/deep/er", kDeepId, config::Access::ReadOnly,
                            config::Squash::Root),
                make_export("/lan", kLanId, config::Access::ReadWrite, config::Squash::Root,
                            {"10.0.0.0/8", "fd00::/8"})},
        mount(exports, codec, nfs) {
    // A small tree below /export, in gateway handles: a/ b/ (dirs), a/file (regular).
    nfs.on_lookup = [this](const nfs3::LookupArgs& a) {
      nfs3::LookupRes r;
      const auto it = tree.find({key(a.what.dir), a.what.name});
      if (it == tree.end()) {
        r.status = nfs3::Status::NoEnt;
        return r;
      }
      r.object = it->second.first;
      r.obj_attributes = nfs3::Fattr{};
      r.obj_attributes->type = it->second.second;
      return r;
    };
    tree[{key(codec.root(kExportId)), "a"}] = {dir_a, nfs3::FileType::Dir};
    tree[{key(dir_a), "b"}] = {dir_b, nfs3::FileType::Dir};
    tree[{key(dir_a), "file"}] = {file, nfs3::FileType::Reg};
  }

  static std::string key(const nfs3::FileHandle& h) {
    return std::string(h.view().begin(), h.view().end());
  }

  mount3::MntRes mnt(const std::string& path, const std::string& client = "127.0.0.1") {
    CallContext ctx;
    ctx.client_address = client;
    ctx.cred.uid = 1234;
    ctx.cred.gid = 567;
    return run_awaitable(mount.mnt(ctx, mount3::MntArgs{path}));
  }

  std::unique_ptr<cache::KvStore> store;
  cache::HandleCodec codec;
  std::vector<config::ExportConfig> exports;
  FakeNfs3Program nfs;
  MountProgram mount;
  const nfs3::FileHandle dir_a = handle_of({0xA1, 0xA2});
  const nfs3::FileHandle dir_b = handle_of({0xB1, 0xB2, 0xB3});
  const nfs3::FileHandle file = handle_of({0xF1});
  std::map<std::pair<std::string, std::string>, std::pair<nfs3::FileHandle, nfs3::FileType>> tree;
};

TEST_F(MountProgramTest, ExportPathGivesTheRootHandleAndFlavors) {
  const auto res = mnt("/export");
  ASSERT_EQ(res.status, MountStatus::Ok);
  EXPECT_EQ(res.fhandle, codec.root(kExportId));
  EXPECT_EQ(res.auth_flavors, (std::vector<std::uint32_t>{1, 0}));  // AUTH_SYS, AUTH_NONE
  EXPECT_EQ(nfs.call_count(), 0u);  // answered from the configuration alone
}

TEST_F(MountProgramTest, TrailingSlashNamesTheSameExport) {
  EXPECT_EQ(mnt("/export/").fhandle, codec.root(kExportId));
  EXPECT_EQ(mnt("/export//").fhandle, codec.root(kExportId));
  EXPECT_EQ(mnt("/lan/", "10.1.2.3").fhandle, codec.root(kLanId));
}

TEST_F(MountProgramTest, LongestExportPathWins) {
  const auto res = mnt("/export/deep/er");
  ASSERT_EQ(res.status, MountStatus::Ok);
  EXPECT_EQ(res.fhandle, codec.root(kDeepId));
  EXPECT_EQ(nfs.call_count(), 0u);
}

TEST_F(MountProgramTest, UnknownPathIsNoEnt) {
  for (const char* p : {"/nope", "/exportx", "/expor", "/", "", "/lanx/y"}) {
    EXPECT_EQ(mnt(p).status, MountStatus::NoEnt) << p;
  }
  EXPECT_EQ(nfs.call_count(), 0u);
}

TEST_F(MountProgramTest, ClientNotAllowedIsAcces) {
  EXPECT_EQ(mnt("/lan", "127.0.0.1").status, MountStatus::Acces);
  EXPECT_EQ(mnt("/export", "10.0.0.1").status, MountStatus::Acces);
  EXPECT_EQ(mnt("/export/a", "10.0.0.1").status, MountStatus::Acces);
  EXPECT_EQ(nfs.call_count(), 0u);
  EXPECT_EQ(mnt("/lan", "fd00::5").status, MountStatus::Ok);
}

TEST_F(MountProgramTest, SubfolderMountWalksLookupsFromTheRoot) {
  const auto res = mnt("/export/a/b");
  ASSERT_EQ(res.status, MountStatus::Ok);
  EXPECT_EQ(res.fhandle, dir_b);
  EXPECT_EQ(res.auth_flavors, (std::vector<std::uint32_t>{1, 0}));
  ASSERT_EQ(nfs.lookup_history.size(), 2u);
  EXPECT_EQ(nfs.lookup_history[0].what.dir, codec.root(kExportId));
  EXPECT_EQ(nfs.lookup_history[0].what.name, "a");
  EXPECT_EQ(nfs.lookup_history[1].what.dir, dir_a);
  EXPECT_EQ(nfs.lookup_history[1].what.name, "b");
  // The walk runs as the caller, so the origin's permissions apply.
  for (const auto& c : nfs.calls()) {
    EXPECT_EQ(c.ctx.cred.uid, 1234u);
    EXPECT_EQ(c.ctx.cred.gid, 567u);
    EXPECT_EQ(c.ctx.client_address, "127.0.0.1");
    EXPECT_FALSE(c.ctx.proc_flags & rpc::flags::Mutates);
  }
}

TEST_F(MountProgramTest, SubfolderWithTrailingSlash) {
  EXPECT_EQ(mnt("/export/a/").fhandle, dir_a);
}

TEST_F(MountProgramTest, NonDirectoryIsNotDir) {
  EXPECT_EQ(mnt("/export/a/file").status, MountStatus::NotDir);
  EXPECT_EQ(mnt("/export/a/file/x").status, MountStatus::NotDir);
}

TEST_F(MountProgramTest, MissingComponentIsNoEnt) {
  EXPECT_EQ(mnt("/export/a/missing").status, MountStatus::NoEnt);
  EXPECT_TRUE(mount.dump("127.0.0.1").empty());
}

TEST_F(MountProgramTest, LookupErrorsMapToMountStatuses) {
  nfs.on_lookup = nullptr;
  const std::pair<nfs3::Status, MountStatus> cases[] = {
      {nfs3::Status::Acces, MountStatus::Acces},   {nfs3::Status::Perm, MountStatus::Perm},
      {nfs3::Status::NotDir, MountStatus::NotDir}, {nfs3::Status::NameTooLong, MountStatus::NameTooLong},
      {nfs3::Status::Io, MountStatus::ServerFault}, {nfs3::Status::Jukebox, MountStatus::ServerFault},
  };
  for (const auto& [in, want] : cases) {
    nfs.lookup_res.status = in;
    EXPECT_EQ(mnt("/export/x").status, want) << nfs3::status_name(in);
  }
}

TEST_F(MountProgramTest, DotDotComponentIsInvalAndNotWalked) {
  EXPECT_EQ(mnt("/export/..").status, MountStatus::Inval);
  EXPECT_EQ(mnt("/export/../etc").status, MountStatus::Inval);
  EXPECT_EQ(mnt("/export/./a").status, MountStatus::Inval);
  EXPECT_EQ(nfs.call_count(), 0u);
  // ".." after a real component is refused too, before it is looked up.
  EXPECT_EQ(mnt("/export/a/../a").status, MountStatus::Inval);
  for (const auto& l : nfs.lookup_history) EXPECT_NE(l.what.name, "..");
}

TEST_F(MountProgramTest, DumpListsMountsAndUmntRemovesThem) {
  ASSERT_EQ(mnt("/export").status, MountStatus::Ok);
  ASSERT_EQ(mnt("/export/").status, MountStatus::Ok);  // the same mount, listed once
  ASSERT_EQ(mnt("/export/a").status, MountStatus::Ok);
  ASSERT_EQ(mnt("/export", "127.0.0.2").status, MountStatus::Ok);
  ASSERT_EQ(mnt("/nope").status, MountStatus::NoEnt);  // failures are not listed

  auto has = [&](const std::string& host, const std::string& dir) {
    for (const auto& m : mount.dump("127.0.0.1"))
      if (m.hostname == host && m.directory == dir) return true;
    return false;
  };
  EXPECT_EQ(mount.dump("127.0.0.1").size(), 3u);
  EXPECT_TRUE(has("127.0.0.1", "/export"));
  EXPECT_TRUE(has("127.0.0.1", "/export/a"));
  EXPECT_TRUE(has("127.0.0.2", "/export"));

  mount.umnt("127.0.0.1", mount3::UmntArgs{"/export/"});
  EXPECT_EQ(mount.dump("127.0.0.1").size(), 2u);
  EXPECT_FALSE(has("127.0.0.1", "/export"));
  EXPECT_TRUE(has("127.0.0.2", "/export"));  // another client's mount stays

  mount.umnt("127.0.0.1", mount3::UmntArgs{"/not-mounted"});  // harmless
  EXPECT_EQ(mount.dump("127.0.0.1").size(), 2u);

  ASSERT_EQ(mnt("/export").status, MountStatus::Ok);
  mount.umntall("127.0.0.1");
  ASSERT_EQ(mount.dump("127.0.0.1").size(), 1u);
  EXPECT_TRUE(has("127.0.0.2", "/export"));
  mount.umntall("127.0.0.2");
  EXPECT_TRUE(mount.dump("127.0.0.1").empty());
}

TEST_F(MountProgramTest, ExportListsPathsWithClientNetworks) {
  const mount3::ExportRes res = mount.exports("10.1.2.3");
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0].dir, "/lan");
  EXPECT_EQ(res[0].groups, (std::vector<std::string>{"10.0.0.0/8", "fd00::/8"}));
}

TEST_F(MountProgramTest, ExportListsOnlyTheExportsThatAdmitTheCaller) {
  const mount3::ExportRes local = mount.exports("127.0.0.1");
  ASSERT_EQ(local.size(), 2u);
  EXPECT_EQ(local[0].dir, "/export");
  EXPECT_EQ(local[0].groups, (std::vector<std::string>{"127.0.0.0/8"}));
  EXPECT_EQ(local[1].dir, "/export/deep/er");
  // A caller no export admits learns nothing of them.
  EXPECT_TRUE(mount.exports("192.0.2.9").empty());
}

TEST_F(MountProgramTest, DumpAnswersOnlyCallersAnExportAdmits) {
  ASSERT_EQ(mnt("/export").status, MountStatus::Ok);
  ASSERT_EQ(mnt("/lan", "10.0.0.7").status, MountStatus::Ok);
  // Each caller sees the mounts of the exports it may mount itself.
  const auto local = mount.dump("127.0.0.1");
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].directory, "/export");
  const auto lan = mount.dump("10.0.0.8");
  ASSERT_EQ(lan.size(), 1u);
  EXPECT_EQ(lan[0].hostname, "10.0.0.7");
  EXPECT_TRUE(mount.dump("192.0.2.9").empty());
}

TEST_F(MountProgramTest, TheMountListIsBoundedAndDropsTheOldest) {
  MountProgram small(exports, codec, nfs, 3);
  for (int i = 1; i <= 5; ++i) {
    CallContext ctx;
    ctx.client_address = "127.0.0." + std::to_string(i);
    ASSERT_EQ(run_awaitable(small.mnt(ctx, mount3::MntArgs{"/export"})).status, MountStatus::Ok);
  }
  auto list = small.dump("127.0.0.1");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].hostname, "127.0.0.3");
  EXPECT_EQ(list[2].hostname, "127.0.0.5");
  // Mounting again makes an entry the newest.
  CallContext ctx;
  ctx.client_address = "127.0.0.3";
  ASSERT_EQ(run_awaitable(small.mnt(ctx, mount3::MntArgs{"/export"})).status, MountStatus::Ok);
  CallContext six;
  six.client_address = "127.0.0.6";
  ASSERT_EQ(run_awaitable(small.mnt(six, mount3::MntArgs{"/export"})).status, MountStatus::Ok);
  list = small.dump("127.0.0.1");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].hostname, "127.0.0.5");
  EXPECT_EQ(list[1].hostname, "127.0.0.3");
  EXPECT_EQ(list[2].hostname, "127.0.0.6");
}

// The MOUNT tables through the dispatcher, in wire bytes.
class MountWireTest : public MountProgramTest {
 protected:
  MountWireTest() {
    dispatcher.add(rpc::make_mount1_table(mount));
    dispatcher.add(rpc::make_mount3_table(mount));
  }
  Reply call(std::uint32_t vers, mount3::Proc proc, const auto& args) {
    CallSpec s;
    s.prog = mount3::kProgram;
    s.vers = vers;
    s.proc = static_cast<std::uint32_t>(proc);
    return parse_reply(run_awaitable(dispatcher.dispatch(call_record(s, args), "127.0.0.1")).flat());
  }
  rpc::Dispatcher dispatcher;
};

TEST_F(MountWireTest, Mnt3OverTheWire) {
  const Reply rep = call(3, mount3::Proc::Mnt, mount3::MntArgs{"/export/a"});
  ASSERT_EQ(rep.header.accept, rpc::AcceptStat::Success);
  const auto res = decode_result<mount3::MntRes>(rep.body);
  EXPECT_EQ(res.status, MountStatus::Ok);
  EXPECT_EQ(res.fhandle, dir_a);

  const Reply dump = call(3, mount3::Proc::Dump, NoArgs{});
  const auto list = decode_result<mount3::DumpRes>(dump.body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].hostname, "127.0.0.1");
  EXPECT_EQ(list[0].directory, "/export/a");

  EXPECT_EQ(call(1, mount3::Proc::Umnt, mount3::UmntArgs{"/export/a"}).header.accept,
            rpc::AcceptStat::Success);
  EXPECT_TRUE(mount.dump("127.0.0.1").empty());
}

TEST_F(MountWireTest, Mnt1IsProcUnavailButV1DumpWorks) {
  EXPECT_EQ(call(1, mount3::Proc::Mnt, mount3::MntArgs{"/export"}).header.accept,
            rpc::AcceptStat::ProcUnavail);
  const Reply rep = call(1, mount3::Proc::Export, NoArgs{});
  ASSERT_EQ(rep.header.accept, rpc::AcceptStat::Success);
  // The two exports that admit 127.0.0.1 ("/lan" does not).
  EXPECT_EQ(decode_result<mount3::ExportRes>(rep.body).size(), 2u);
}

TEST_F(MountWireTest, Version2IsProgMismatchOneToThree) {
  const Reply rep = call(2, mount3::Proc::Null, NoArgs{});
  EXPECT_EQ(rep.header.accept, rpc::AcceptStat::ProgMismatch);
  EXPECT_EQ(rep.header.mismatch_low, 1u);
  EXPECT_EQ(rep.header.mismatch_high, 3u);
}

TEST_F(MountWireTest, OverlongPathIsGarbageArgs) {
  const Reply rep = call(3, mount3::Proc::Mnt, mount3::MntArgs{std::string(2000, 'x')});
  EXPECT_EQ(rep.header.accept, rpc::AcceptStat::GarbageArgs);
}

// A configuration reload (MountProgram::update): a removed export is refused and
// leaves DUMP and EXPORT, an added one is mountable, changed clients apply.
TEST_F(MountProgramTest, ReloadRemovesAddsAndChangesExports) {
  ASSERT_EQ(mnt("/export").status, MountStatus::Ok);
  ASSERT_EQ(mnt("/lan", "127.0.0.1").status, MountStatus::Acces);
  ASSERT_EQ(mount.dump("127.0.0.1").size(), 1u);
  std::vector<config::ExportConfig> next{
      make_export("/lan", kLanId, config::Access::ReadWrite, config::Squash::Root, {"127.0.0.0/8"}),
      make_export("/added", 0x6666, config::Access::ReadOnly, config::Squash::All)};
  mount.update(next);
  EXPECT_EQ(mnt("/export").status, MountStatus::NoEnt);
  EXPECT_EQ(mnt("/export/a").status, MountStatus::NoEnt);
  EXPECT_TRUE(mount.dump("127.0.0.1").empty());  // the removed export's mount is gone
  const auto added = mnt("/added");
  ASSERT_EQ(added.status, MountStatus::Ok);
  EXPECT_EQ(added.fhandle, codec.root(0x6666));
  EXPECT_EQ(mnt("/lan", "127.0.0.1").status, MountStatus::Ok);
  std::vector<std::string> listed;
  for (const auto& e : mount.exports("127.0.0.1")) listed.push_back(e.dir);
  EXPECT_EQ(listed, (std::vector<std::string>{"/lan", "/added"}));
  mount.update(exports);  // and back
  EXPECT_EQ(mnt("/export").status, MountStatus::Ok);
  EXPECT_EQ(mnt("/added").status, MountStatus::NoEnt);
}

}  // namespace
}  // namespace nfsgw::test
