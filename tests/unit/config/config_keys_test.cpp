// Every key, set to a value other than its default, lands in the right field.
#include <gtest/gtest.h>

#include <chrono>

#include "config/config.h"
#include "config_test_helpers.h"

using namespace nfsgw::config;
using nfsgw::config::testing::kEveryKey;

TEST(ConfigKeys, EveryKeyIsRead) {
  auto c = parse_config(std::string(kEveryKey) + R"(
[[export]]
path = "/scratch"
origin = "nfs://127.0.0.1/srv/scratch?nfsport=20490&mountport=20491"
access = "rw"
squash = "none"
anon_uid = 0
anon_gid = 0
upstream_connections = 1
writes = "back"
write_back_delay = "0"
)");
  EXPECT_EQ(c.server.listen, "::1");
  EXPECT_EQ(c.server.nfs_port, 12049);
  EXPECT_EQ(c.server.mount_port, 12050);
  EXPECT_EQ(c.server.threads, 8u);
  EXPECT_FALSE(c.server.register_rpcbind);
  EXPECT_EQ(c.server.max_record_bytes, 1048576u);
  EXPECT_EQ(c.cache.dir, "/tmp/gwcache");
  EXPECT_EQ(c.cache.memory_mb, 64u);
  EXPECT_EQ(c.cache.metadata_max_gb, 100u);
  EXPECT_EQ(c.cache.dirty_max_gb, 32u);
  EXPECT_EQ(c.cache.secret_file, "/etc/nfsgw/secret");

  ASSERT_EQ(c.exports.size(), 2u);
  const auto& a = c.exports[0];
  EXPECT_EQ(a.path, "/projects/alpha");
  EXPECT_EQ(a.origin.host, "fd00::7");
  EXPECT_EQ(a.origin.nfs_port, 2050);
  EXPECT_EQ(a.origin.mount_port, 635);
  EXPECT_EQ(a.origin.path, "/export/alpha");
  EXPECT_EQ(a.access, Access::ReadOnly);
  ASSERT_EQ(a.clients.size(), 3u);
  EXPECT_EQ(a.clients[2].text, "192.168.1.10");
  EXPECT_TRUE(a.allows("10.2.3.4"));
  EXPECT_TRUE(a.allows("192.168.1.10"));
  EXPECT_FALSE(a.allows("192.168.1.11"));
  EXPECT_EQ(a.squash, Squash::All);
  EXPECT_EQ(a.anon_uid, 1000u);
  EXPECT_EQ(a.anon_gid, 4294967295u);
  EXPECT_EQ(a.upstream_connections, 64u);
  EXPECT_FALSE(a.coherency.enabled);
  EXPECT_EQ(a.coherency.consistency, nfsgw::cache::Consistency::Strict);
  EXPECT_EQ(a.coherency.access_check, nfsgw::cache::AccessCheck::Local);
  EXPECT_EQ(a.coherency.attr_ttl, std::chrono::milliseconds{500});
  EXPECT_EQ(a.coherency.dir_ttl, std::chrono::minutes{10});
  EXPECT_EQ(a.coherency.negative_ttl, std::chrono::milliseconds{0});
  EXPECT_EQ(a.coherency.access_ttl, std::chrono::hours{2});
  EXPECT_EQ(a.coherency.fsstat_ttl, std::chrono::seconds{1});
  EXPECT_EQ(a.coherency.fsinfo_ttl, std::chrono::hours{24});

  const auto& s = c.exports[1];
  EXPECT_EQ(s.access, Access::ReadWrite);
  EXPECT_EQ(s.squash, Squash::None);
  EXPECT_EQ(s.anon_uid, 0u);
  EXPECT_EQ(s.anon_gid, 0u);
  EXPECT_EQ(s.upstream_connections, 1u);
  EXPECT_TRUE(s.coherency.enabled);
  EXPECT_EQ(s.coherency.consistency, nfsgw::cache::Consistency::Ttl);
  EXPECT_EQ(s.origin.nfs_port, 20490);
  EXPECT_EQ(s.origin.mount_port, 20491);
  EXPECT_EQ(s.writes, Writes::Back);
  EXPECT_EQ(s.write_back_delay, std::chrono::milliseconds{0});
  // Set on an export that writes through: kept, read only when it writes back.
  EXPECT_EQ(a.writes, Writes::Through);
  EXPECT_EQ(a.write_back_delay, std::chrono::minutes{5});
}

TEST(ConfigKeys, RangeBoundsAreAccepted) {
  auto c = parse_config(R"(
[server]
nfs_port = 1
mount_port = 65535
threads = 1024
max_record_bytes = 65536
[cache]
memory_mb = 16
[[export]]
path = "/e"
origin = "nfs://h/e"
)");
  EXPECT_EQ(c.server.nfs_port, 1);
  EXPECT_EQ(c.server.mount_port, 65535);
  EXPECT_EQ(c.server.threads, 1024u);
  EXPECT_EQ(c.server.max_record_bytes, 65536u);
  EXPECT_EQ(c.cache.memory_mb, 16u);
  auto d = parse_config("[server]\nnfs_port = 65535\nmax_record_bytes = 67108864\n"
                        "[[export]]\npath = \"/e\"\norigin = \"nfs://h/e\"\n");
  EXPECT_EQ(d.server.nfs_port, 65535);
  EXPECT_EQ(d.server.max_record_bytes, 67108864u);
  // The write-back bounds: dirty_max_gb 1..65536, write_back_delay 0..24h.
  for (const std::uint32_t gb : {1u, 65536u}) {
    auto w = parse_config("[cache]\ndirty_max_gb = " + std::to_string(gb) +
                          "\n[[export]]\npath = \"/e\"\norigin = \"nfs://h/e\"\nwrites = \"back\"\n"
                          "write_back_delay = \"24h\"\n");
    EXPECT_EQ(w.cache.dirty_max_gb, gb);
    EXPECT_EQ(w.exports[0].write_back_delay, std::chrono::hours{24});
  }
}

TEST(ConfigKeys, ListenAcceptsIpv4AndIpv6) {
  for (const char* a : {"127.0.0.1", "0.0.0.0", "::", "fe80::1"}) {
    auto c = parse_config(std::string("[server]\nlisten = \"") + a +
                          "\"\n[[export]]\npath = \"/e\"\norigin = \"nfs://h/e\"\n");
    EXPECT_EQ(c.server.listen, a);
  }
}
