// nfsgw starts while its origin is down, answers MNT from its own state, and serves
// once the origin comes up. The origin here uses its own ports (kLateOrigin*), so it
// cannot be confused with a running shared origin.
#include <gtest/gtest.h>
#include <nfsc/libnfs.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace {

using namespace integ;

TEST(OriginDown, GatewayStartsMountsAndServesOnceOriginIsUp) {
  INTEG_REQUIRE_NFSGW();
  GaneshaOrigin late(kLateOriginNfsPort, kLateOriginMountPort);
  TempDir dir("origin-down");
  GatewayConfig cfg;
  cfg.port = kGatewayPort;
  cfg.origin_url = late.url();  // nothing listens there yet
  Gateway gw(cfg, dir.sub("gw"));
  ASSERT_NO_THROW(gw.start()) << "nfsgw must start although its origin is down";

  auto early = mount_root(gw.port(), "/export");
  ASSERT_TRUE(early.transport_ok) << "MNT got no answer while the origin is down: " << early.error << "\n" << gw.log();
  EXPECT_EQ(early.status, 0u) << "MNT refused while the origin is down";
  EXPECT_TRUE(gw.running());

  ASSERT_NO_THROW(late.start());
  std::ofstream(late.export_dir() + "/hello") << "hello";

  // Bounded wait: the gateway reconnects on its own (its back-off, not ours).
  Attrs attrs;
  std::string last_error;
  const auto stat_works = [&] {
    NfsClient client(gw.url(), -1, -1, 10000);
    if (client.mount_status() == 0) {
      attrs = lstat_of(client.get(), "/hello");
      if (attrs.rc == 0) return true;
      last_error = "stat: " + client.error();
    } else {
      last_error = client.mount_error();
    }
    return false;
  };
  (void)nfsgw::test::wait_until(stat_works, std::chrono::seconds(60), "a stat through nfsgw",
                                std::chrono::milliseconds(500));
  ASSERT_EQ(attrs.rc, 0) << "no successful stat through nfsgw within 60 s of the origin starting: " << last_error
                         << "\n" << gw.log();
  EXPECT_EQ(attrs.size, 5u);

  // The root handle handed out while the origin was down is valid too.
  if (early.status == 0) {
    RawNfsConnection c;
    ASSERT_TRUE(c.connect(gw.port(), kNfsProgram, 3));
    auto a = c.getattr(early.root);
    EXPECT_EQ(a.status, 0u) << "GETATTR on the root handle MNT gave while the origin was down";
    auto l = c.lookup(early.root, "hello");
    EXPECT_EQ(l.status, 0u);
  }
  EXPECT_EQ(gw.stop(), 0) << gw.log();
}

}  // namespace
