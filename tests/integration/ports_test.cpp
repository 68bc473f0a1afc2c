// integ::port_block (tests/support/ports.h): the environment that places each
// integration test's block of loopback ports, and what it refuses. Built into the
// bad_config binary (no binary of its own).
#include <gtest/gtest.h>

#include "tests/support/ports.h"

namespace {

TEST(IntegPorts, DefaultsGiveTheDefaultBaseAndBlockZero) {
  const integ::PortBlock b = integ::port_block(nullptr, nullptr);
  EXPECT_EQ(b.error, "");
  EXPECT_EQ(b.first, integ::kDefaultPortBase);
  const integ::PortBlock empty = integ::port_block("", "");
  EXPECT_EQ(empty.error, "");
  EXPECT_EQ(empty.first, integ::kDefaultPortBase);
}

TEST(IntegPorts, ABlockIsAHundredPortsPastTheBase) {
  const integ::PortBlock b = integ::port_block("26000", "3");
  EXPECT_EQ(b.error, "");
  EXPECT_EQ(b.first, 26300u);
  // The last block that fits: its last port is 65535.
  const integ::PortBlock last = integ::port_block("65436", "0");
  EXPECT_EQ(last.error, "");
  EXPECT_EQ(last.first, 65436u);
}

TEST(IntegPorts, WhatIsNotANumberIsRefusedByName) {
  for (const char* bad : {"12x", "x", "-5", "+5", " 12000", "70000", "99999999999999999999"}) {
    const integ::PortBlock b = integ::port_block(bad, nullptr);
    EXPECT_NE(b.error.find(std::string("NFSGW_INTEG_PORT_BASE=") + bad + ": not a number"), std::string::npos)
        << bad << ": " << b.error;
    const integ::PortBlock k = integ::port_block(nullptr, bad);
    EXPECT_NE(k.error.find(std::string("NFSGW_INTEG_PORT_BLOCK=") + bad + ": not a number"), std::string::npos)
        << bad << ": " << k.error;
  }
}

TEST(IntegPorts, ABlockOutsideTheUnprivilegedRangeIsRefused) {
  EXPECT_NE(integ::port_block("1023", "0").error.find("must lie in 1024-65535"), std::string::npos);
  EXPECT_EQ(integ::port_block("1024", "0").error, "");  // the positive control at the edge
  EXPECT_NE(integ::port_block("65437", "0").error.find("must lie in 1024-65535"), std::string::npos);
  // Block 535 of the default base would be 65500-65599; block 534 (65400-65499) fits.
  EXPECT_NE(integ::port_block("12000", "535").error.find("must lie in 1024-65535"), std::string::npos);
  EXPECT_EQ(integ::port_block("12000", "534").error, "");
}

}  // namespace
