// Locks and write-back (issue 21, design item 10): on a writes = "back" export,
// what a client wrote under a lock reaches the origin before the lock is released
// there, so the lock's next owner (through this nfsgw, another gateway or the
// origin itself) reads it. Real parts: nfs-ganesha with NLM on and the host's
// rpc.statd, nfsgw with a write-back export (write_back_delay 1 h: nothing is
// flushed on its own), a libnfs client writing, NLM calls built by hand.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/lock_files.h"
#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/temp_dir.h"

namespace nlm_write_back_test {
namespace {

using namespace integ;
using namespace integ::nlm_wire;

const bool kNlmOn = [] {
  ::setenv("ORIGIN_NLM_PORT", std::to_string(kNlmWbOriginNlmPort).c_str(), 1);
  return true;
}();
auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

std::string on_disk(const std::string& name) {
  std::ifstream in(shared_origin().export_dir() + "/" + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class NlmWriteBack : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GatewayConfig cfg;
    cfg.port = kNlmWbGatewayPort;
    cfg.export_path = "/back";
    cfg.origin_url = shared_origin().url();
    cfg.writes = "back";
    cfg.write_back_delay = "1h";
    cfg.server_extra = {{"nlm_port", std::to_string(kNlmWbGatewayNlmPort)},
                        {"nlm_grace", "\"0\""},
                        {"nlm_caller_name", "\"127.0.0.254\""}};  // its own: nlm_test's comment
    cfg.export_extra = {{"origin_nlm_port", std::to_string(kNlmWbOriginNlmPort)}};
    gw_ = new NlmGateway("nlm-wb", cfg, kNlmWbGatewayNlmPort);
  }
  static void TearDownTestSuite() {
    delete gw_;
    gw_ = nullptr;
  }
  static NlmGateway* gw_;
};
NlmGateway* NlmWriteBack::gw_ = nullptr;

TEST_F(NlmWriteBack, WritesUnderALockReachTheOriginBeforeItsUnlockIsAnswered) {
  INTEG_REQUIRE_NFSGW();
  const std::string path = shared_origin().export_dir() + "/counter";
  std::ofstream(path) << "old";
  ::chmod(path.c_str(), 0666);
  WireLock l;
  l.fh = bytes_of(handle_of(gw_->port(), gw_->port(), "/back", "counter"));
  l.length = 0;
  TcpConn c(kNlmWbGatewayNlmPort);
  ASSERT_TRUE(c.connected());
  std::uint32_t xid = 1;
  for (int round = 1; round <= 3; ++round) {
    ASSERT_EQ(stat_of(call(c, call_of(++xid, kLock, l).bytes)), kStatGranted) << gw_->log();
    EXPECT_TRUE(locked_at_origin(path));
    const std::string data = "written under lock, round " + std::to_string(round);
    {
      NfsClient back(gw_->gateway().url());
      ASSERT_EQ(back.mount_status(), 0) << back.mount_error();
      ASSERT_EQ(write_file(back, "/counter", data), 0) << back.error();
    }
    // Positive control: absorbed by the write-back export, not at the origin yet.
    EXPECT_NE(on_disk("counter"), data) << "round " << round;
    ASSERT_EQ(stat_of(call(c, call_of(++xid, kUnlock, l).bytes)), kStatGranted) << gw_->log();
    // Once the UNLOCK is answered: the origin has the data and no lock.
    EXPECT_EQ(on_disk("counter"), data) << "round " << round;
    EXPECT_FALSE(locked_at_origin(path));
  }
}

}  // namespace
}  // namespace nlm_write_back_test
