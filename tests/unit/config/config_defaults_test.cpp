// Every default of config.h, as produced from the smallest valid file.
#include <gtest/gtest.h>

#include <chrono>

#include "config/config.h"

using namespace nfsgw::config;

namespace {
const char* kMinimal = R"(
[[export]]
path = "/data"
origin = "nfs://filer/vol/data"
)";
}

TEST(ConfigDefaults, Server) {
  auto c = parse_config(kMinimal);
  EXPECT_EQ(c.server.listen, "0.0.0.0");
  EXPECT_EQ(c.server.nfs_port, 2049);
  EXPECT_EQ(c.server.mount_port, 0);
  EXPECT_EQ(c.server.threads, 0u);
  EXPECT_TRUE(c.server.register_rpcbind);
  EXPECT_EQ(c.server.max_record_bytes, 4u << 20);
}

TEST(ConfigDefaults, Cache) {
  auto c = parse_config(kMinimal);
  EXPECT_EQ(c.cache.dir, "/var/lib/nfsgw");
  EXPECT_EQ(c.cache.memory_mb, 256u);
  EXPECT_EQ(c.cache.metadata_max_gb, 4u);
  EXPECT_EQ(c.cache.dirty_max_gb, 4u);
  EXPECT_EQ(c.cache.secret_file, "/var/lib/nfsgw/secret");
  EXPECT_TRUE(c.cache.answer_memo);
  EXPECT_TRUE(c.cache.peek_memo);
}

TEST(ConfigDefaults, SecretFileFollowsCacheDir) {
  auto c = parse_config(std::string("[cache]\ndir = \"/srv/gw\"\n") + kMinimal);
  EXPECT_EQ(c.cache.secret_file, "/srv/gw/secret");
  auto d = parse_config(std::string("[cache]\ndir = \"/srv/gw/\"\n") + kMinimal);
  EXPECT_EQ(d.cache.secret_file, "/srv/gw/secret");
}

TEST(ConfigDefaults, Export) {
  auto c = parse_config(kMinimal);
  ASSERT_EQ(c.exports.size(), 1u);
  const auto& e = c.exports[0];
  EXPECT_EQ(e.path, "/data");
  EXPECT_EQ(e.origin.host, "filer");
  EXPECT_EQ(e.origin.path, "/vol/data");
  EXPECT_EQ(e.access, Access::ReadWrite);
  EXPECT_EQ(e.squash, Squash::Root);
  EXPECT_EQ(e.anon_uid, 65534u);
  EXPECT_EQ(e.anon_gid, 65534u);
  EXPECT_EQ(e.upstream_connections, 4u);
  // Writes go through to the origin unless the export says otherwise.
  EXPECT_EQ(e.writes, Writes::Through);
  EXPECT_EQ(e.write_back_delay, std::chrono::seconds{30});
  // The metadata cache is on, with the defaults of cache/coherency.h (detailed in
  // config_coherency_test.cpp).
  EXPECT_TRUE(e.coherency.enabled);
  EXPECT_EQ(e.coherency.consistency, nfsgw::cache::Consistency::Ttl);
  EXPECT_EQ(e.coherency.access_check, nfsgw::cache::AccessCheck::Origin);
  EXPECT_EQ(e.coherency.attr_ttl, std::chrono::seconds{30});
  // Default clients: everyone, both families.
  EXPECT_TRUE(e.allows("203.0.113.9"));
  EXPECT_TRUE(e.allows("::ffff:203.0.113.9"));
  EXPECT_TRUE(e.allows("2001:db8::9"));
  ASSERT_EQ(e.clients.size(), 2u);
}

TEST(ConfigDefaults, ExportIdIsFnv1aOfPathAndIgnoresOrder) {
  // Pinned values: ids are inside every handle clients hold and must never change.
  auto c = parse_config(kMinimal);
  EXPECT_EQ(c.exports[0].id, 1240880126u);
  auto two = parse_config(R"(
[[export]]
path = "/a"
origin = "nfs://f/a"
[[export]]
path = "/data"
origin = "nfs://f/d"
)");
  auto swapped = parse_config(R"(
[[export]]
path = "/data"
origin = "nfs://f/d"
[[export]]
path = "/a"
origin = "nfs://f/a"
)");
  EXPECT_EQ(two.exports[0].id, 1892816941u);
  EXPECT_EQ(two.exports[1].id, swapped.exports[0].id);
  EXPECT_EQ(two.exports[0].id, swapped.exports[1].id);
  EXPECT_NE(two.exports[0].id, two.exports[1].id);
}

TEST(ConfigDefaults, RootPathExport) {
  auto c = parse_config("[[export]]\npath = \"/\"\norigin = \"nfs://f/\"\n");
  EXPECT_EQ(c.exports[0].path, "/");
  EXPECT_EQ(c.exports[0].id, 705468254u);
}
