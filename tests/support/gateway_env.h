// The usual integration set-up, shared by every test of one binary: a ganesha
// origin on the integ ports and one nfsgw in front of it (port kGatewayPort,
// access rw, squash none, so root and other uids reach the origin unchanged).
#pragma once

#include <gtest/gtest.h>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"

namespace integ {

/// The running gateway, or nullptr when the nfsgw binary does not exist yet
/// (tests call INTEG_REQUIRE_NFSGW() first).
Gateway* shared_gateway();

/// URL clients mount through the shared gateway (the origin's in selftest mode).
std::string gateway_url();
/// The same for a path below the export root ("dir/file").
std::string gateway_url(const std::string& file);
/// Export path to MNT on gateway_port(): "/export" (the origin's dir in selftest).
std::string gateway_export_path();
std::uint16_t gateway_port();        // NFS
std::uint16_t gateway_mount_port();  // MOUNT (the same port on nfsgw)

class OriginAndGatewayEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
  void TearDown() override;
};

}  // namespace integ
