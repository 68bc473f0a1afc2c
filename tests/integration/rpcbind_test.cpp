// nfsgw registers NFS v3 and MOUNT v1/v3 with the local rpcbind when asked to, so
// clients that mount without explicit ports find it, and unregisters when it stops.
// The origin need not be up for this: nfsgw starts and registers regardless.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/nfsgw_process.h"
#include "tests/support/ports.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace {

using namespace std::chrono_literals;

const std::uint16_t kPort = integ::kRpcbindGatewayPort;
// No origin listens here: registration must not wait for the origin.
const std::string kAbsentOrigin =
    "nfs://127.0.0.1/nowhere?nfsport=" + std::to_string(integ::kRpcbindAbsentOriginNfsPort) +
    "&mountport=" + std::to_string(integ::kRpcbindAbsentOriginMountPort);

std::string rpcbind_map() { return integ::run({"rpcinfo", "-p", "127.0.0.1"}, 10s).output; }

/// True when rpcbind maps (prog, vers, tcp) to `port`.
bool mapped(const std::string& map, int prog, int vers, int port) {
  const std::regex row("\\s*" + std::to_string(prog) + "\\s+" + std::to_string(vers) +
                       "\\s+tcp\\s+" + std::to_string(port) + "\\b");
  std::istringstream lines(map);
  for (std::string line; std::getline(lines, line);)
    if (std::regex_search(line, row)) return true;
  return false;
}

class Rpcbind : public ::testing::Test {
 protected:
  void SetUp() override {
    if (integ::run({"rpcinfo", "-p", "127.0.0.1"}, 10s).exit_code != 0) {
      integ::run({"mkdir", "-p", "/run/rpcbind"}, 10s);
      integ::run({"rpcbind", "-w"}, 10s);
    }
    ASSERT_EQ(integ::run({"rpcinfo", "-p", "127.0.0.1"}, 10s).exit_code, 0)
        << "rpcbind is not running and could not be started";
    // Only one server can hold these entries: take them from whoever has them.
    for (const auto& [prog, vers] : {std::pair{"100003", "3"}, {"100005", "3"}, {"100005", "1"}})
      integ::run({"rpcinfo", "-d", prog, vers}, 10s);
  }
};

TEST_F(Rpcbind, RegistersWhileRunningAndUnregistersOnStop) {
  integ::TempDir work("rpcbind");
  integ::GatewayConfig cfg;
  cfg.port = kPort;
  cfg.origin_url = kAbsentOrigin;
  integ::Gateway gw(cfg, work.path());
  // The shared launcher writes register_rpcbind = false; this test wants it on.
  std::string toml = integ::read_file(gw.config_path());
  const auto at = toml.find("register_rpcbind = false");
  ASSERT_NE(at, std::string::npos) << toml;
  toml.replace(at, std::string("register_rpcbind = false").size(), "register_rpcbind = true");
  std::ofstream(gw.config_path()) << toml;

  ASSERT_NO_THROW(gw.start());
  std::string map;
  // Registration follows the listen by a moment.
  EXPECT_TRUE(nfsgw::test::wait_until(
      [&] {
        map = rpcbind_map();
        return mapped(map, 100005, 1, kPort);
      },
      10s, "the registration of MOUNT v1", 100ms));
  EXPECT_TRUE(mapped(map, 100003, 3, kPort)) << map << gw.log();
  EXPECT_TRUE(mapped(map, 100005, 3, kPort)) << map;
  EXPECT_TRUE(mapped(map, 100005, 1, kPort)) << map;
  // A client that asks rpcbind reaches nfsgw: NULL through the looked-up port.
  EXPECT_EQ(integ::run({"rpcinfo", "-t", "127.0.0.1", "100003", "3"}, 10s).exit_code, 0);

  EXPECT_EQ(gw.stop(), 0) << gw.log();
  map = rpcbind_map();
  EXPECT_FALSE(mapped(map, 100003, 3, kPort)) << map;
  EXPECT_FALSE(mapped(map, 100005, 3, kPort)) << map;
  EXPECT_FALSE(mapped(map, 100005, 1, kPort)) << map;
}

TEST_F(Rpcbind, NoRegistrationWhenSwitchedOff) {
  integ::TempDir work("rpcbind-off");
  integ::GatewayConfig cfg;
  cfg.port = kPort;
  cfg.origin_url = kAbsentOrigin;
  integ::Gateway gw(cfg, work.path());
  ASSERT_NO_THROW(gw.start());
  const std::string map = rpcbind_map();
  EXPECT_FALSE(mapped(map, 100003, 3, kPort)) << map;
  EXPECT_FALSE(mapped(map, 100005, 3, kPort)) << map;
  EXPECT_EQ(gw.stop(), 0) << gw.log();
}

}  // namespace
