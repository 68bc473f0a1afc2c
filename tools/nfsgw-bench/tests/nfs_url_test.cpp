#include "tools/nfsgw-bench/nfs_url.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace nfsgw::bench {
namespace {

TEST(NfsUrl, ExplicitPorts) {
  NfsUrl u = parse_nfs_url("nfs://127.0.0.1/tmp/bench-export?nfsport=23490&mountport=23048");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.export_path, "/tmp/bench-export");
  EXPECT_EQ(u.nfs_port, 23490);
  EXPECT_EQ(u.mount_port, 23048);
}

TEST(NfsUrl, NoQueryMeansRpcbind) {
  NfsUrl u = parse_nfs_url("nfs://server/export/");
  EXPECT_EQ(u.host, "server");
  EXPECT_EQ(u.export_path, "/export");
  EXPECT_EQ(u.nfs_port, 0);
  EXPECT_EQ(u.mount_port, 0);
}

TEST(NfsUrl, PortInAuthorityIsTheNfsPort) {
  NfsUrl u = parse_nfs_url("nfs://h:2049/");
  EXPECT_EQ(u.nfs_port, 2049);
  EXPECT_EQ(u.export_path, "/");
}

TEST(NfsUrl, RejectsMalformed) {
  for (const char* bad : {"", "http://h/e", "nfs://", "nfs://h", "nfs:///e", "nfs://h/e?nfsport=",
                          "nfs://h/e?nfsport=70000", "nfs://h/e?nfsport=0", "nfs://h/e?nfsport=12a",
                          "nfs://h/e?nfsprot=1", "nfs://h/e?mountport", "nfs://h/e?version=4", "nfs://h:x/e"}) {
    EXPECT_THROW(parse_nfs_url(bad), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace nfsgw::bench
