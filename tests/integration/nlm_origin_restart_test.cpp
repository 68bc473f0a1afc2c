// The origin restarts while nfsgw holds locks there for its clients (issue 21,
// design.md "Byte-range locks", item 9). Real parts: nfs-ganesha with NLM on
// (scripts/origin-ganesha.sh, ORIGIN_NLM_PORT) and the host's rpc.statd; nfsgw
// with [server] nlm_port; NLM clients made of libnfs's raw calls.
//
// nfsgw has the host's statd watch each origin host (SM_MON, its own callback
// procedure). The origin is killed with -9 (its locks go with its process: the
// test sees them leave the origin's file system) and started again with a grace
// period. Its statd's reboot notice is then played as the origin's sm-notify
// would send it: SM_NOTIFY naming the origin host (127.0.0.1), to this host's
// statd. statd calls nfsgw back; nfsgw reclaims (LOCK, reclaim = true) every lock
// it held there, inside the origin's grace period. Checked:
//   - the lock is held at the origin's file system again, in nfsgw's name (a
//     client of the origin is refused it once the grace period is over);
//   - the locks of another file, let go through nfsgw before the restart, are not
//     taken again;
//   - the client's UNLOCK through nfsgw frees it at the origin afterwards.
// Without the notice nothing is reclaimed: the test waits for the lock at the
// origin only after playing it, and checks it is absent before.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "gateway/upstream/host_statd.h"
#include "tests/support/lock_files.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/nlm_client.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/waiting.h"

namespace nlm_origin_restart_test {
namespace {

using namespace integ;
using namespace std::chrono_literals;

// The shared origin serves NLM on a port of this binary's.
const bool kNlmOn = [] {
  ::setenv("ORIGIN_NLM_PORT", std::to_string(kNlmOrOriginNlmPort).c_str(), 1);
  return true;
}();
auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

constexpr std::uint32_t kGranted = 0, kDenied = 1, kDeniedGracePeriod = 4;
/// The origin's grace period after its restart, in seconds.
constexpr int kOriginGrace = 25;

std::int32_t fresh_state() { return static_cast<std::int32_t>((std::time(nullptr) % 100000000) * 2 + 1); }

TEST(NlmOriginRestart, TheLocksNfsgwHeldAreReclaimedInTheOriginsGracePeriod) {
  INTEG_REQUIRE_NFSGW();
  GatewayConfig cfg;
  cfg.port = kNlmOrGatewayPort;
  cfg.origin_url = shared_origin().url();
  cfg.server_extra = {{"nlm_port", std::to_string(kNlmOrGatewayNlmPort)},
                      {"nlm_grace", "\"0\""},
                      {"nlm_retry_interval", "\"200ms\""},
                      // An address no name maps to (nlm_test.cpp says why), not nlm_test's.
                      {"nlm_caller_name", "\"127.0.0.251\""}};
  cfg.export_extra = {{"origin_nlm_port", std::to_string(kNlmOrOriginNlmPort)}};
  NlmGateway gw("nlm-origin-restart", cfg, kNlmOrGatewayNlmPort);
  // nfsgw has statd watch the origin host before anything else matters here.
  ASSERT_TRUE(nfsgw::test::wait_until(
      [&] { return gw.log().find("statd watches origin host 127.0.0.1") != std::string::npos; }, 30s,
      "nfsgw's SM_MON of the origin host", 100ms))
      << gw.log();

  const NlmGateway::File kept = gw.make("kept"), let_go = gw.make("let_go");
  NlmLoop loop;
  NlmClient via_gw(loop, kNlmOrGatewayNlmPort), direct(loop, kNlmOrOriginNlmPort);
  const NlmOwner a{"127.0.0.31", "a-owner", 31};
  const NlmOwner outsider{"localhost", "o-owner", 41};  // a client of the origin
  ASSERT_EQ(via_gw.lock(a, kept.via_gw, 0, 10), kGranted);
  ASSERT_EQ(via_gw.lock(a, let_go.via_gw, 0, 10), kGranted);
  ASSERT_EQ(via_gw.unlock(a, let_go.via_gw, 0, 10), kGranted);
  ASSERT_TRUE(locked_at_origin(kept.path, 0, 10)) << "held at the origin before its restart";

  // The origin crashes and comes back in a grace period: its locks are gone.
  shared_origin().kill9();
  ::setenv("ORIGIN_GRACE_PERIOD", std::to_string(kOriginGrace).c_str(), 1);
  shared_origin().start_again();
  ::unsetenv("ORIGIN_GRACE_PERIOD");
  EXPECT_FALSE(locked_at_origin(kept.path, 0, 10)) << "a restarted origin holds none of its old locks";
  EXPECT_EQ(direct.lock(outsider, kept.at_origin, 0, 10), kDeniedGracePeriod)
      << "the origin is in its grace period: only reclaims";

  // Its statd's notice, as the origin's sm-notify sends it to the hosts that
  // held locks there: this host's statd calls nfsgw back.
  nfsgw::upstream::HostStatd::Options so;
  so.timeout = 15000ms;  // statd may wait 5 s for a lost DNS answer
  nfsgw::upstream::HostStatd statd(loop.io(), so);
  const auto told_at = std::chrono::steady_clock::now();
  const nfsgw::nlm::MonitorReply told = loop.run([&] { return statd.notify("127.0.0.1", fresh_state()); });
  ASSERT_TRUE(told.ok) << told.error;
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return locked_at_origin(kept.path, 0, 10); }, 20s,
                                      "nfsgw's reclaim at the origin", 20ms))
      << gw.log();
  const auto reclaim_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - told_at).count();
  std::printf("reclaimed at the origin %lld ms after the origin's SM_NOTIFY reached this host's statd\n",
              static_cast<long long>(reclaim_ms));
  EXPECT_NE(gw.log().find("1 reclaimed in its grace period"), std::string::npos) << gw.log();
  EXPECT_FALSE(locked_at_origin(let_go.path, 0, 10)) << "a lock let go before the restart is not taken again";

  // After the origin's grace period the lock is nfsgw's client's: the origin's
  // own client is refused it, never granted.
  std::uint32_t outside = kDeniedGracePeriod;
  ASSERT_TRUE(nfsgw::test::wait_until(
      [&] {
        outside = direct.lock(outsider, kept.at_origin, 0, 10);
        return outside != kDeniedGracePeriod;
      },
      std::chrono::seconds(kOriginGrace + 30), "the origin's grace period to end", 500ms));
  EXPECT_EQ(outside, kDenied) << "a client of the origin got the reclaimed range";
  EXPECT_EQ(direct.lock(outsider, let_go.at_origin, 0, 10), kGranted);
  EXPECT_EQ(direct.unlock(outsider, let_go.at_origin, 0, 10), kGranted);

  // The client lets it go through nfsgw: free at the origin.
  EXPECT_EQ(via_gw.unlock(a, kept.via_gw, 0, 10), kGranted);
  EXPECT_FALSE(locked_at_origin(kept.path, 0, 10));
  EXPECT_EQ(direct.lock(outsider, kept.at_origin, 0, 10), kGranted);
  EXPECT_EQ(direct.unlock(outsider, kept.at_origin, 0, 10), kGranted);
}

}  // namespace
}  // namespace nlm_origin_restart_test
