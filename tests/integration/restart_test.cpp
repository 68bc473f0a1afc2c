// A client's file handles survive an nfsgw restart: handles are derived from the
// persistent cache (secret and handle map in the cache dir), not from process state.
// The client keeps the bytes of handles obtained before the restart and uses them
// on a new connection to the restarted gateway.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"

namespace {

using namespace integ;

auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

TEST(Restart, OldHandlesWorkAfterRestart) {
  INTEG_REQUIRE_NFSGW();
  const std::string content = "content that must survive a gateway restart\n";
  make_dirs(shared_origin().export_dir() + "/restart_dir");
  std::ofstream(shared_origin().export_dir() + "/restart_dir/file") << content;

  TempDir dir("restart");
  GatewayConfig cfg;
  cfg.port = kGatewayPort;
  cfg.origin_url = shared_origin().url();
  Gateway gw(cfg, dir.sub("gw"));
  ASSERT_NO_THROW(gw.start());

  Handle root, subdir, file;
  std::uint64_t file_id = 0;
  {
    auto m = mount_root(gw.port(), "/export");
    ASSERT_TRUE(m.transport_ok && m.status == 0) << m.error << " status " << m.status << "\n" << gw.log();
    root = m.root;
    RawNfsConnection c;
    ASSERT_TRUE(c.connect(gw.port(), kNfsProgram, 3)) << c.error();
    auto d = c.lookup(root, "restart_dir");
    ASSERT_EQ(d.status, 0u) << d.error;
    subdir = d.handle;
    auto f = c.lookup(subdir, "file");
    ASSERT_EQ(f.status, 0u) << f.error;
    file = f.handle;
    auto a = c.getattr(file);
    ASSERT_EQ(a.status, 0u);
    file_id = a.fileid;
    auto r = c.read(file, 0, 4096);
    ASSERT_EQ(r.status, 0u);
    ASSERT_EQ(std::string(r.data.begin(), r.data.end()), content);
  }

  EXPECT_EQ(gw.stop(), 0) << "nfsgw did not exit cleanly on SIGTERM:\n" << gw.log();
  ASSERT_NO_THROW(gw.start());

  RawNfsConnection c;
  ASSERT_TRUE(c.connect(gw.port(), kNfsProgram, 3)) << c.error();
  auto a = c.getattr(file);
  ASSERT_TRUE(a.transport_ok) << a.error;
  EXPECT_EQ(a.status, 0u) << "GETATTR on a pre-restart handle\n" << gw.log();
  EXPECT_EQ(a.fileid, file_id);
  EXPECT_EQ(a.size, content.size());
  auto r = c.read(file, 0, 4096);
  ASSERT_TRUE(r.transport_ok) << r.error;
  EXPECT_EQ(r.status, 0u) << "READ on a pre-restart handle";
  EXPECT_EQ(std::string(r.data.begin(), r.data.end()), content);
  EXPECT_TRUE(r.eof);
  // Directory handles too: LOOKUP from the old root and the old subdirectory.
  auto d = c.lookup(root, "restart_dir");
  EXPECT_EQ(d.status, 0u);
  EXPECT_EQ(d.handle, subdir) << "the same object should get the same handle after a restart";
  auto f = c.lookup(subdir, "file");
  EXPECT_EQ(f.status, 0u);
  EXPECT_EQ(f.fileid, file_id);
  // And the root handle MNT gives now is still the one clients hold.
  auto m = mount_root(gw.port(), "/export");
  EXPECT_EQ(m.status, 0u);
  EXPECT_EQ(m.root, root);
  EXPECT_EQ(gw.stop(), 0) << gw.log();
}

}  // namespace
