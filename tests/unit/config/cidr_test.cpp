// Cidr parsing and matching: IPv4, IPv6, IPv4-mapped clients, host bits, bad input.
#include <gtest/gtest.h>

#include "config/config.h"

using nfsgw::config::Cidr;
using nfsgw::config::ConfigError;
using nfsgw::config::ExportConfig;

TEST(Cidr, ParsesIpv4Network) {
  auto c = Cidr::parse("10.1.0.0/16");
  EXPECT_FALSE(c.v6);
  EXPECT_EQ(c.prefix, 16u);
  EXPECT_EQ(c.text, "10.1.0.0/16");
  EXPECT_EQ(c.addr[0], 10);
  EXPECT_EQ(c.addr[1], 1);
  EXPECT_TRUE(c.contains("10.1.255.7"));
  EXPECT_FALSE(c.contains("10.2.0.1"));
  EXPECT_FALSE(c.contains("11.1.0.1"));
}

TEST(Cidr, BareAddressIsFullPrefix) {
  auto v4 = Cidr::parse("192.168.1.5");
  EXPECT_EQ(v4.prefix, 32u);
  EXPECT_TRUE(v4.contains("192.168.1.5"));
  EXPECT_FALSE(v4.contains("192.168.1.6"));
  auto v6 = Cidr::parse("2001:db8::1");
  EXPECT_TRUE(v6.v6);
  EXPECT_EQ(v6.prefix, 128u);
  EXPECT_TRUE(v6.contains("2001:db8::1"));
  EXPECT_FALSE(v6.contains("2001:db8::2"));
}

TEST(Cidr, PrefixNotOnByteBoundary) {
  auto c = Cidr::parse("172.16.0.0/12");
  EXPECT_TRUE(c.contains("172.16.0.1"));
  EXPECT_TRUE(c.contains("172.31.255.255"));
  EXPECT_FALSE(c.contains("172.32.0.0"));
  EXPECT_FALSE(c.contains("172.15.255.255"));
}

TEST(Cidr, HostBitsAreMaskedOff) {
  auto c = Cidr::parse("10.9.8.7/8");
  EXPECT_EQ(c.addr[1], 0);
  EXPECT_TRUE(c.contains("10.200.1.1"));
  EXPECT_EQ(c.text, "10.9.8.7/8");
}

TEST(Cidr, ZeroPrefixMatchesEveryAddressOfItsFamily) {
  auto all4 = Cidr::parse("0.0.0.0/0");
  EXPECT_TRUE(all4.contains("1.2.3.4"));
  EXPECT_TRUE(all4.contains("::ffff:1.2.3.4"));
  EXPECT_FALSE(all4.contains("2001:db8::1"));
  auto all6 = Cidr::parse("::/0");
  EXPECT_TRUE(all6.contains("2001:db8::1"));
}

TEST(Cidr, Ipv6Network) {
  auto c = Cidr::parse("fd00:1234::/32");
  EXPECT_TRUE(c.v6);
  EXPECT_TRUE(c.contains("fd00:1234:ffff::1"));
  EXPECT_FALSE(c.contains("fd00:1235::1"));
  EXPECT_FALSE(c.contains("10.0.0.1"));
}

TEST(Cidr, Ipv4MappedClientMatchesIpv4Network) {
  auto c = Cidr::parse("127.0.0.0/8");
  EXPECT_TRUE(c.contains("::ffff:127.0.0.1"));
  EXPECT_FALSE(c.contains("::ffff:128.0.0.1"));
  // Not mapped: ::127.0.0.1 (deprecated IPv4-compatible) is an IPv6 address.
  EXPECT_FALSE(c.contains("::127.0.0.1"));
}

TEST(Cidr, Ipv4MappedNetworkIsTheIpv4Network) {
  auto c = Cidr::parse("::ffff:10.0.0.0/104");
  EXPECT_FALSE(c.v6);
  EXPECT_EQ(c.prefix, 8u);
  EXPECT_TRUE(c.contains("10.3.4.5"));
  EXPECT_TRUE(c.contains("::ffff:10.3.4.5"));
  EXPECT_FALSE(c.contains("11.3.4.5"));
}

TEST(Cidr, ScopeIdOfClientIsIgnored) {
  auto c = Cidr::parse("fe80::/10");
  EXPECT_TRUE(c.contains("fe80::1%eth0"));
}

TEST(Cidr, UnparseableClientIsNotContained) {
  auto c = Cidr::parse("0.0.0.0/0");
  EXPECT_FALSE(c.contains(""));
  EXPECT_FALSE(c.contains("localhost"));
  EXPECT_FALSE(c.contains("1.2.3"));
  EXPECT_FALSE(c.contains(std::string(1000, '1')));
}

TEST(Cidr, RefusesBadInput) {
  for (const char* bad : {"", "/8", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/8x",
                          "10.0.0.256/8", "10.0.0/8", "host.example/24", "::/129", "fe80::1%eth0/64",
                          "10.0.0.0/8/8", "10.0.0.0/0008", " 10.0.0.0/8"}) {
    EXPECT_THROW(Cidr::parse(bad), ConfigError) << bad;
  }
}

TEST(Cidr, ErrorNamesValueAndAllowedRange) {
  try {
    Cidr::parse("10.0.0.0/33");
    FAIL();
  } catch (const ConfigError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("10.0.0.0/33"), std::string::npos) << m;
    EXPECT_NE(m.find("0..32"), std::string::npos) << m;
  }
  try {
    Cidr::parse("2001:db8::/200");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("0..128"), std::string::npos) << e.what();
  }
}

TEST(ExportAllows, AnyListedNetworkAdmits) {
  ExportConfig e;
  e.clients = {Cidr::parse("10.0.0.0/8"), Cidr::parse("2001:db8::/32")};
  EXPECT_TRUE(e.allows("10.1.1.1"));
  EXPECT_TRUE(e.allows("::ffff:10.1.1.1"));
  EXPECT_TRUE(e.allows("2001:db8::5"));
  EXPECT_FALSE(e.allows("192.168.0.1"));
  EXPECT_FALSE(e.allows("2001:db9::5"));
  ExportConfig none;
  EXPECT_FALSE(none.allows("10.1.1.1"));
}

TEST(ExportAllows, RepeatedAndAlternatingClientsGetTheirOwnAnswers) {
  // allows() keeps the last address it parsed (per thread): each answer must still
  // be the asked address's own, in any order, for any export.
  ExportConfig ten, lan;
  ten.clients = {Cidr::parse("10.0.0.0/8")};
  lan.clients = {Cidr::parse("192.168.0.0/16")};
  for (int round = 0; round < 3; ++round) {
    EXPECT_TRUE(ten.allows("10.1.1.1"));
    EXPECT_TRUE(ten.allows("10.1.1.1"));
    EXPECT_FALSE(lan.allows("10.1.1.1"));
    EXPECT_FALSE(ten.allows("192.168.0.1"));
    EXPECT_TRUE(lan.allows("192.168.0.1"));
    EXPECT_FALSE(ten.allows("not an address"));
    EXPECT_FALSE(ten.allows(""));
    EXPECT_TRUE(ten.allows("10.9.9.9%eth0"));
  }
}
