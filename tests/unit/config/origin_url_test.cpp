// Origin URL parsing: the libnfs form and every way it can be wrong.
#include <gtest/gtest.h>

#include "config/config.h"

using nfsgw::config::ConfigError;
using nfsgw::config::OriginUrl;

TEST(OriginUrl, HostAndPath) {
  auto u = OriginUrl::parse("nfs://filer.example.com/vol/data");
  EXPECT_EQ(u.host, "filer.example.com");
  EXPECT_EQ(u.path, "/vol/data");
  EXPECT_EQ(u.nfs_port, 0);
  EXPECT_EQ(u.mount_port, 0);
  EXPECT_EQ(u.text, "nfs://filer.example.com/vol/data");
}

TEST(OriginUrl, QueryPorts) {
  auto u = OriginUrl::parse("nfs://127.0.0.1/tmp/export?nfsport=20490&mountport=20491");
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.path, "/tmp/export");
  EXPECT_EQ(u.nfs_port, 20490);
  EXPECT_EQ(u.mount_port, 20491);
  auto v = OriginUrl::parse("nfs://h/p?mountport=635");
  EXPECT_EQ(v.nfs_port, 0);
  EXPECT_EQ(v.mount_port, 635);
}

TEST(OriginUrl, PortAfterHostIsTheNfsPort) {
  auto u = OriginUrl::parse("nfs://h:2050/x");
  EXPECT_EQ(u.host, "h");
  EXPECT_EQ(u.nfs_port, 2050);
  auto same = OriginUrl::parse("nfs://h:2050/x?nfsport=2050");
  EXPECT_EQ(same.nfs_port, 2050);
}

TEST(OriginUrl, BracketedIpv6Host) {
  auto u = OriginUrl::parse("nfs://[::1]:2049/export");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.nfs_port, 2049);
  EXPECT_EQ(u.path, "/export");
  EXPECT_EQ(OriginUrl::parse("nfs://[fd00::5]/e").host, "fd00::5");
}

TEST(OriginUrl, RootPath) { EXPECT_EQ(OriginUrl::parse("nfs://h/").path, "/"); }

static std::string error_of(const std::string& url) {
  try {
    OriginUrl::parse(url);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(OriginUrl, RefusesWithReason) {
  struct Case {
    const char* url;
    const char* reason;
  } cases[] = {
      {"http://h/p", "nfs://"},
      {"nfs:/h/p", "nfs://"},
      {"NFS://h/p", "nfs://"},
      {"h/p", "nfs://"},
      {"nfs:///p", "no host"},
      {"nfs://h", "no export path"},
      {"nfs://h?nfsport=1", "no export path"},
      {"nfs://h:/p", "port"},
      {"nfs://h:0/p", "out of range"},
      {"nfs://h:65536/p", "out of range"},
      {"nfs://h:20x/p", "not a port"},
      {"nfs://h/p?nfsport=", "not a port"},
      {"nfs://h/p?nfsport=70000", "out of range"},
      {"nfs://h/p?mountport=-1", "not a port"},
      {"nfs://h/p?uid=0", "unknown query parameter \"uid\""},
      {"nfs://h/p?nfsport", "no value"},
      {"nfs://h/p?nfsport=1&nfsport=2", "twice"},
      {"nfs://h/p?mountport=1&mountport=1", "twice"},
      {"nfs://h:2049/p?nfsport=2050", "contradicts"},
      {"nfs://user@h/p", "not a host"},
      {"nfs://h h/p", "not a host"},
      {"nfs://[::1/p", "closing"},
      {"nfs://[]/p", "IPv6"},
      {"nfs://[zz::1]/p", "IPv6"},
      {"nfs://[::1]x/p", "unexpected"},
  };
  for (const auto& c : cases) {
    std::string m = error_of(c.url);
    ASSERT_FALSE(m.empty()) << c.url << " was accepted";
    EXPECT_NE(m.find(c.url), std::string::npos) << m;
    EXPECT_NE(m.find(c.reason), std::string::npos) << c.url << ": " << m;
  }
}
