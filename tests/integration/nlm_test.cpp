// nfsgw's NLM v4 service (issue 21) against a real origin lock manager: nfs-ganesha
// with NLM on (scripts/origin-ganesha.sh, ORIGIN_NLM_PORT) and the host's rpc.statd,
// nfsgw with [server] nlm_port, and NLM clients made of libnfs's raw NLM calls
// (gateway/upstream's OriginNlm, pointed at nfsgw's NLM port or at the origin's):
//   - a lock taken through nfsgw is held at the origin (a client of the origin is
//     refused, and the origin's file system holds the lock), and the other way
//     round; UNLOCK through nfsgw frees it for the origin's client;
//   - a blocking LOCK through nfsgw waiting on a holder at the origin is granted
//     after the holder's release (nfsgw's retry timer), and its client's retry is
//     then answered GRANTED;
//   - a forged gateway handle, and an origin handle sent to nfsgw, are refused
//     NLM4_STALE_FH and lock nothing at the origin;
//   - a granted waiter's client gets NLM_GRANTED at once (a stand-in for the
//     client's NLM counts it), whether nfsgw's client or the origin's held it;
//   - status monitoring with the host's real statd: a client host's reboot
//     (SM_NOTIFY naming it, sent to statd as its statd would) frees its locks at
//     the origin, and only its own;
//   - kill -9 of nfsgw and a restart: the origin drops the locks nfsgw held, a
//     stand-in for the client's statd is told (SM_NOTIFY with nfsgw's new state),
//     a reclaim in the grace period is granted and taken at the origin again, a
//     new lock refused NLM4_DENIED_GRACE_PERIOD.
// Client caller names are loopback addresses (127.0.0.x): statd monitors only
// names it can resolve, and nfsgw refuses the lock of a host statd will not monitor.
// The client's NLM and statd are reached on the stand-ins' ports
// (NFSGW_NLM_CLIENT_NLM_PORT, NFSGW_NLM_CLIENT_STATD_PORT): this host's rpcbind
// names other servers' NLM.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <atomic>
#include <mutex>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include "gateway/nlm/nsm_record.h"
#include "gateway/upstream/host_statd.h"
#include "gateway/upstream/origin_nlm.h"
#include "protocol/nlm4_types.h"
#include "protocol/nlm_nsm_types.h"
#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"
#include "tests/support/lock_files.h"
#include "tests/support/nlm_client.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace nlm_test {
namespace {

using namespace integ;
using namespace std::chrono_literals;
using nfsgw::Credentials;
using nfsgw::nlm::Outcome;
namespace nlm4 = nfsgw::nlm4;
namespace nfs3 = nfsgw::nfs3;

// The shared origin serves NLM on its own port (read by origin-ganesha.sh); the
// nfsgw started here reach the clients' NLM and statd at the stand-ins' ports.
const bool kNlmOn = [] {
  ::setenv("ORIGIN_NLM_PORT", std::to_string(kNlmOriginPort).c_str(), 1);
  ::setenv("NFSGW_NLM_CLIENT_NLM_PORT", std::to_string(kNlmClientNlmPort).c_str(), 1);
  ::setenv("NFSGW_NLM_CLIENT_STATD_PORT", std::to_string(kNlmClientStatdPort).c_str(), 1);
  return true;
}();
auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

using Loop = NlmLoop;
using Client = NlmClient;
using Owner = NlmOwner;

/// A stand-in for a client host's NLM and statd: TCP on 127.0.0.1:`port`, answers
/// NLM4 GRANTED with NLM4_GRANTED and NSM SM_NOTIFY (void), and keeps each call.
class StandIn {
 public:
  struct Seen {
    std::uint32_t prog = 0, proc = 0;
    std::vector<std::uint8_t> args;
    std::chrono::steady_clock::time_point at;
  };
  StandIn(boost::asio::io_context& io, std::uint16_t port) : io_(io), acceptor_(io) {
    using boost::asio::ip::tcp;
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(tcp::endpoint(boost::asio::ip::make_address_v4("127.0.0.1"), port));
    acceptor_.listen();
    boost::asio::co_spawn(io, accept_loop(), boost::asio::detached);
  }
  ~StandIn() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    (void)nfsgw::test::wait_until([&] { return done_.load(); }, 5s, "the stand-in to stop");
  }
  std::vector<Seen> seen(std::uint32_t prog, std::uint32_t proc) const {
    std::lock_guard g(mu_);
    std::vector<Seen> out;
    for (const Seen& c : seen_)
      if (c.prog == prog && c.proc == proc) out.push_back(c);
    return out;
  }
  std::vector<nlm4::TestArgs> granted() const {
    std::vector<nlm4::TestArgs> out;
    for (const Seen& c : seen(nlm4::kProgram, static_cast<std::uint32_t>(nlm4::Proc::Granted))) {
      nfsgw::xdr::Reader r(c.args);
      nlm4::TestArgs a;
      nlm4::decode(r, a);
      out.push_back(a);
    }
    return out;
  }
  std::vector<nfsgw::nsm::StatChange> notified() const {
    std::vector<nfsgw::nsm::StatChange> out;
    for (const Seen& c : seen(nfsgw::nsm::kProgram, static_cast<std::uint32_t>(nfsgw::nsm::Proc::Notify))) {
      nfsgw::xdr::Reader r(c.args);
      nfsgw::nsm::StatChange a;
      nfsgw::nsm::decode(r, a);
      out.push_back(a);
    }
    return out;
  }

 private:
  boost::asio::awaitable<void> accept_loop() {
    for (;;) {
      try {
        auto s = co_await acceptor_.async_accept(boost::asio::use_awaitable);
        boost::asio::co_spawn(io_, serve(std::move(s)), boost::asio::detached);
      } catch (const boost::system::system_error&) {
        break;
      }
    }
    done_ = true;
  }
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket s) {
    namespace rpc = nfsgw::rpc;
    try {
      for (int calls = 0; calls < 1000; ++calls) {
        std::uint8_t mark[4];
        co_await boost::asio::async_read(s, boost::asio::buffer(mark), boost::asio::use_awaitable);
        const std::uint32_t len = ((mark[0] & 0x7fu) << 24) | (mark[1] << 16) | (mark[2] << 8) | mark[3];
        if (len > 65536) co_return;
        std::vector<std::uint8_t> body(len);
        co_await boost::asio::async_read(s, boost::asio::buffer(body), boost::asio::use_awaitable);
        nfsgw::xdr::Reader r(body);
        const rpc::CallHeader h = rpc::decode_call_header(r);
        const auto rest = r.rest();
        {
          std::lock_guard g(mu_);
          seen_.push_back(Seen{h.prog, h.proc, {rest.begin(), rest.end()}, std::chrono::steady_clock::now()});
        }
        std::vector<std::uint8_t> reply(4);
        nfsgw::xdr::Writer w(reply);
        if (h.prog == nlm4::kProgram && h.proc == static_cast<std::uint32_t>(nlm4::Proc::Granted)) {
          nlm4::TestArgs a;
          nlm4::decode(r, a);
          rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
          nlm4::encode(w, nlm4::Res{a.cookie, nlm4::Stat::Granted});
        } else if (h.prog == nfsgw::nsm::kProgram &&
                   h.proc == static_cast<std::uint32_t>(nfsgw::nsm::Proc::Notify)) {
          rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
        } else {
          rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::ProcUnavail);
        }
        rpc::write_record_header(reply.data(), static_cast<std::uint32_t>(reply.size() - 4));
        co_await boost::asio::async_write(s, boost::asio::buffer(reply), boost::asio::use_awaitable);
      }
    } catch (const std::exception&) {
    }
  }

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::atomic<bool> done_{false};
  mutable std::mutex mu_;
  std::vector<Seen> seen_;
};

/// A client of the origin. Its caller name must resolve: ganesha's NLM has the
/// host's statd monitor it (SM_MON) and refuses the lock (or does not answer a
/// TEST) when statd cannot.
Owner origin_client() { return Owner{"localhost", "b-owner", 22}; }

constexpr std::uint32_t kGranted = 0, kDenied = 1, kBlocked = 3, kDeniedGracePeriod = 4, kStaleFh = 7;

class NlmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GatewayConfig cfg;
    cfg.port = kNlmGatewayPort;
    cfg.origin_url = shared_origin().url();
    // nfsgw's caller name at the origin: an address no name maps to, which this
    // host's statd matches a notice to (the host's name resolves to 127.0.0.1
    // only), and one of its own: a gateway's restart notice drops, at the origin,
    // the locks of every gateway that shares its name (each test binary has one).
    cfg.server_extra = {{"nlm_port", std::to_string(kNlmGatewayNlmPort)},
                        {"nlm_caller_name", "\"127.0.0.250\""},
                        {"nlm_grace", "\"0\""},
                        {"nlm_retry_interval", "\"200ms\""}};
    cfg.export_extra = {{"origin_nlm_port", std::to_string(kNlmOriginPort)}};
    gw_ = new NlmGateway("nlm", cfg, kNlmGatewayNlmPort);
  }
  static void TearDownTestSuite() {
    delete gw_;
    gw_ = nullptr;
  }
  using File = NlmGateway::File;
  static File make(const std::string& name) { return gw_->make(name); }
  static NlmGateway* gw_;
};
NlmGateway* NlmTest::gw_ = nullptr;

TEST_F(NlmTest, ALockThroughNfsgwIsHeldAtTheOriginAndTheOtherWayRound) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("both_ways");
  Loop loop;
  Client via_gw(loop, kNlmGatewayNlmPort), direct(loop, kNlmOriginPort);
  const Owner a{"127.0.0.11", "a-owner", 11}, c{"127.0.0.13", "c-owner", 33};
  const Owner b = origin_client();

  EXPECT_FALSE(locked_at_origin(f.path, 0, 100)) << "control: nothing locked yet";
  ASSERT_EQ(via_gw.lock(a, f.via_gw, 0, 100), kGranted) << gw_->log();
  EXPECT_TRUE(locked_at_origin(f.path, 0, 100)) << "the lock is held at the origin's file system";
  // A client of the origin is refused, by LOCK and by TEST.
  EXPECT_EQ(direct.lock(b, f.at_origin, 50, 10), kDenied);
  EXPECT_EQ(direct.test(b, f.at_origin, 50, 10), kDenied);
  // Beside the range: granted at the origin; and refused through nfsgw.
  EXPECT_EQ(direct.lock(b, f.at_origin, 200, 10), kGranted);
  EXPECT_EQ(via_gw.lock(c, f.via_gw, 205, 1), kDenied) << "a lock held by the origin's client refuses nfsgw's";
  EXPECT_EQ(via_gw.test(c, f.via_gw, 205, 1), kDenied);
  // A second client of nfsgw is refused (answered by nfsgw itself).
  EXPECT_EQ(via_gw.lock(c, f.via_gw, 0, 1), kDenied);
  // UNLOCK through nfsgw frees the range for the origin's client.
  EXPECT_EQ(via_gw.unlock(a, f.via_gw, 0, 100), kGranted);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 100));
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 100), kGranted);
  EXPECT_EQ(via_gw.lock(a, f.via_gw, 0, 1), kDenied);
  EXPECT_EQ(direct.unlock(b, f.at_origin, 0, 0), kGranted);
  EXPECT_EQ(via_gw.lock(a, f.via_gw, 0, 1), kGranted);
  EXPECT_EQ(via_gw.unlock(a, f.via_gw, 0, 0), kGranted);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0));
}

TEST_F(NlmTest, AWaiterBlockedAtTheOriginIsGrantedAfterTheRelease) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("waiter");
  Loop loop;
  Client via_gw(loop, kNlmGatewayNlmPort), direct(loop, kNlmOriginPort);
  const Owner a{"127.0.0.11", "a-owner", 11};
  const Owner b = origin_client();
  ASSERT_EQ(direct.lock(b, f.at_origin, 0, 0), kGranted);
  EXPECT_EQ(via_gw.lock(a, f.via_gw, 0, 10, /*block=*/true), kBlocked);
  EXPECT_EQ(direct.unlock(b, f.at_origin, 0, 0), kGranted);
  // nfsgw's timer (200 ms) takes the lock at the origin for the waiter.
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return locked_at_origin(f.path, 0, 10); }, 10s,
                                      "the waiter's lock taken at the origin"));
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 1), kDenied);
  // The client's retry of its LOCK finds it granted.
  EXPECT_EQ(via_gw.lock(a, f.via_gw, 0, 10, true), kGranted);
  EXPECT_EQ(via_gw.unlock(a, f.via_gw, 0, 10), kGranted);
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 1), kGranted);
  EXPECT_EQ(direct.unlock(b, f.at_origin, 0, 1), kGranted);
}

TEST_F(NlmTest, AForgedHandleLocksNothing) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("forged");
  Loop loop;
  Client via_gw(loop, kNlmGatewayNlmPort);
  const Owner a{"127.0.0.11", "a-owner", 11};
  Handle forged = f.via_gw;
  ASSERT_FALSE(forged.empty());
  forged.back() ^= 0x01;
  EXPECT_EQ(via_gw.lock(a, forged, 0, 0), kStaleFh);
  EXPECT_EQ(via_gw.test(a, forged, 0, 0), kStaleFh) << gw_->log();
  // The origin's own handle is no gateway handle either.
  EXPECT_EQ(via_gw.lock(a, f.at_origin, 0, 0), kStaleFh);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0)) << "nothing reached the origin";
  // Control: the genuine handle locks.
  EXPECT_EQ(via_gw.lock(a, f.via_gw, 0, 0), kGranted);
  EXPECT_TRUE(locked_at_origin(f.path, 0, 0));
  EXPECT_EQ(via_gw.unlock(a, f.via_gw, 0, 0), kGranted);
}

/// nfsgw's NSM record (<cache dir>/nsm).
nfsgw::nlm::NsmRecord record_of(const Gateway& gw) {
  const auto l = nfsgw::nlm::NsmRecordFile(gw.cache_dir() + "/nsm").load();
  EXPECT_TRUE(l.ok) << l.error;
  return l.record;
}

/// An NSM state a played reboot can use: odd, and new to statd.
std::int32_t fresh_state() {
  return static_cast<std::int32_t>((std::time(nullptr) % 100000000) * 2 + 1);
}

TEST_F(NlmTest, AGrantedWaitersClientGetsNlmGrantedAtOnce) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("granted");
  Loop loop;
  StandIn client_nlm(loop.io(), kNlmClientNlmPort);
  Client via_gw(loop, kNlmGatewayNlmPort), direct(loop, kNlmOriginPort);
  const Owner a{"127.0.0.11", "a-owner", 11}, c{"127.0.0.13", "c-owner", 33};
  const Owner b = origin_client();
  using Clock = std::chrono::steady_clock;

  // Held by another client of nfsgw: the waiter is granted at that client's UNLOCK.
  ASSERT_EQ(via_gw.lock(a, f.via_gw, 0, 100), kGranted) << gw_->log();
  EXPECT_EQ(via_gw.lock(c, f.via_gw, 10, 20, /*block=*/true), kBlocked);
  EXPECT_TRUE(client_nlm.granted().empty()) << "control: nothing granted while a holds the range";
  const auto released = Clock::now();
  EXPECT_EQ(via_gw.unlock(a, f.via_gw, 0, 100), kGranted);
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return client_nlm.granted().size() == 1; }, 10s,
                                      "NLM_GRANTED for c's waiter"))
      << gw_->log();
  const nlm4::TestArgs g = client_nlm.granted()[0];
  EXPECT_TRUE(g.exclusive);
  EXPECT_EQ(g.lock.svid, 33);
  EXPECT_EQ(std::string(g.lock.oh.begin(), g.lock.oh.end()), "c-owner");
  EXPECT_EQ(g.lock.offset, 10u);
  EXPECT_EQ(g.lock.length, 20u);
  EXPECT_EQ(g.lock.fh, nfs3::FileHandle(f.via_gw)) << "the client's own (gateway) handle";
  const auto local_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      client_nlm.seen(nlm4::kProgram, 5)[0].at - released).count();
  EXPECT_TRUE(locked_at_origin(f.path, 10, 20)) << "taken at the origin before the client was told";

  // Held at the origin by its own client: granted by nfsgw's retry (200 ms).
  ASSERT_EQ(direct.lock(b, f.at_origin, 200, 10), kGranted);
  EXPECT_EQ(via_gw.lock(a, f.via_gw, 200, 10, /*block=*/true), kBlocked);
  const auto released2 = Clock::now();
  EXPECT_EQ(direct.unlock(b, f.at_origin, 200, 10), kGranted);
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return client_nlm.granted().size() == 2; }, 10s,
                                      "NLM_GRANTED for a's waiter"));
  const nlm4::TestArgs g2 = client_nlm.granted()[1];
  EXPECT_EQ(g2.lock.svid, 11);
  EXPECT_EQ(g2.lock.offset, 200u);
  const auto origin_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      client_nlm.seen(nlm4::kProgram, 5)[1].at - released2).count();
  std::printf("release-to-NLM_GRANTED: holder a client of nfsgw %lld ms, holder at the origin %lld ms "
              "(retry interval 200 ms)\n",
              static_cast<long long>(local_ms), static_cast<long long>(origin_ms));
  EXPECT_LT(origin_ms, 5000);

  EXPECT_EQ(via_gw.unlock(c, f.via_gw, 0, 0), kGranted);
  EXPECT_EQ(via_gw.unlock(a, f.via_gw, 0, 0), kGranted);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0));
}

TEST_F(NlmTest, AMonitoredClientsRebootFreesItsLocksAtTheOrigin) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("reboot");
  Loop loop;
  Client via_gw(loop, kNlmGatewayNlmPort), direct(loop, kNlmOriginPort);
  const Owner x{"127.0.0.31", "x-owner", 31}, y{"127.0.0.32", "y-owner", 32};
  const Owner b = origin_client();
  ASSERT_EQ(via_gw.lock(x, f.via_gw, 0, 10), kGranted) << gw_->log();
  ASSERT_EQ(via_gw.lock(y, f.via_gw, 100, 10), kGranted) << gw_->log();
  // Both hosts recorded: where their statd is, the name they know nfsgw by.
  const nfsgw::nlm::NsmRecord rec = record_of(gw_->gateway());
  const nfsgw::nlm::MonitoredHost* hx = rec.find(x.host);
  ASSERT_NE(hx, nullptr) << gw_->log();
  EXPECT_EQ(hx->address, "127.0.0.1");
  EXPECT_EQ(hx->my_name, "127.0.0.1");
  EXPECT_NE(rec.find(y.host), nullptr);
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 10), kDenied) << "control: x's lock is held at the origin";

  // x's host reboots: its statd tells this host's statd, which calls nfsgw back.
  nfsgw::upstream::HostStatd::Options so;
  so.timeout = 15000ms;  // statd may wait 5 s for a lost DNS answer
  nfsgw::upstream::HostStatd statd(loop.io(), so);
  const nfsgw::nlm::MonitorReply told = loop.run([&] { return statd.notify(x.host, fresh_state()); });
  ASSERT_TRUE(told.ok) << told.error;
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return direct.test(b, f.at_origin, 0, 10) == kGranted; }, 15s,
                                      "x's lock to leave the origin", 200ms))
      << gw_->log();
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 10), kGranted);
  EXPECT_EQ(direct.test(b, f.at_origin, 100, 10), kDenied) << "y's lock stays";
  EXPECT_EQ(via_gw.lock(y, f.via_gw, 0, 10), kDenied) << "b holds x's old range now";
  // x holds nothing: unmonitored, and out of the record.
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return record_of(gw_->gateway()).find(x.host) == nullptr; }, 10s,
                                      "x to leave the record", 100ms));
  EXPECT_EQ(direct.unlock(b, f.at_origin, 0, 10), kGranted);
  EXPECT_EQ(via_gw.unlock(y, f.via_gw, 0, 0), kGranted);
  statd.stop();
}

/// The config of a test's own nfsgw beside the suite's (ports 75/76) in front of
/// the shared origin's NLM, under `caller_name`: a name of its own, as a gateway's
/// restart notice drops the locks of every gateway that shares its name.
GatewayConfig second_gateway(const std::string& caller_name) {
  GatewayConfig cfg;
  cfg.port = kNlmRestartGatewayPort;
  cfg.origin_url = shared_origin().url();
  cfg.server_extra = {{"nlm_port", std::to_string(kNlmRestartGatewayNlmPort)},
                      {"nlm_caller_name", "\"" + caller_name + "\""}};
  cfg.export_extra = {{"origin_nlm_port", std::to_string(kNlmOriginPort)}};
  return cfg;
}

TEST_F(NlmTest, AfterKill9TheOriginDropsItsLocksAndClientsReclaimInGrace) {
  INTEG_REQUIRE_NFSGW();
  TempDir dir("nlm-restart");
  GatewayConfig cfg = second_gateway("127.0.0.249");
  cfg.server_extra.push_back({"nlm_grace", "\"60s\""});
  cfg.server_extra.push_back({"nlm_retry_interval", "\"200ms\""});
  Gateway gw(cfg, dir.path());
  gw.start();
  ASSERT_TRUE(wait_for_port(kNlmRestartGatewayNlmPort, 30000)) << gw.log();
  const File f = make("restart"), g = make("restart_new");
  const Handle f_gw = handle_of(gw.port(), gw.port(), "/export", "restart");
  const Handle g_gw = handle_of(gw.port(), gw.port(), "/export", "restart_new");
  Loop loop;
  StandIn client_statd(loop.io(), kNlmClientStatdPort);
  Client via(loop, kNlmRestartGatewayNlmPort), direct(loop, kNlmOriginPort);
  const Owner r{"127.0.0.41", "r-owner", 41}, n{"127.0.0.42", "n-owner", 42};
  const Owner b = origin_client();

  // The first run's grace period: new locks are refused, a reclaim is granted.
  EXPECT_EQ(via.lock(r, f_gw, 0, 10), kDeniedGracePeriod) << "control: in grace at start";
  ASSERT_EQ(via.lock(r, f_gw, 0, 10, false, /*reclaim=*/true), kGranted) << gw.log();
  EXPECT_TRUE(locked_at_origin(f.path, 0, 10));
  const nfsgw::nlm::NsmRecord before = record_of(gw);
  EXPECT_EQ(before.state % 2, 1);
  ASSERT_NE(before.find(r.host), nullptr);

  gw.kill9();
  EXPECT_TRUE(locked_at_origin(f.path, 0, 10)) << "control: the origin keeps what a killed nfsgw held";
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 10), kDenied);
  const auto restarted = std::chrono::steady_clock::now();
  gw.start();
  ASSERT_TRUE(wait_for_port(kNlmRestartGatewayNlmPort, 30000)) << gw.log();
  // The origin drops the locks nfsgw held before; the client's statd is told.
  // (statd resolves names on each call: this host's DNS made it wait 5 s at times.)
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return !locked_at_origin(f.path, 0, 10); }, 40s,
                                      "the origin to drop nfsgw's old locks", 100ms))
      << gw.log();
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return !client_statd.notified().empty(); }, 40s,
                                      "SM_NOTIFY at the client's statd"))
      << gw.log();
  const auto ms_since = [&](std::chrono::steady_clock::time_point t) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(t - restarted).count());
  };
  std::printf("kill -9 and start to: SM_NOTIFY at the client's statd %lld ms (the start included)\n",
              ms_since(client_statd.seen(nfsgw::nsm::kProgram, 6)[0].at));
  const nfsgw::nsm::StatChange note = client_statd.notified()[0];
  EXPECT_EQ(note.mon_name, "127.0.0.1") << "the name the client knows nfsgw by";
  EXPECT_GT(note.state, before.state);
  EXPECT_EQ(note.state % 2, 1);
  // In grace: the reclaim is granted and held at the origin again; a new lock is refused.
  EXPECT_EQ(via.lock(r, f_gw, 0, 10, false, /*reclaim=*/true), kGranted) << gw.log();
  EXPECT_TRUE(locked_at_origin(f.path, 0, 10));
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 10), kDenied) << "the reclaimed lock holds at the origin";
  EXPECT_EQ(via.lock(n, g_gw, 0, 10), kDeniedGracePeriod)
      << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - restarted).count()
      << " ms after the restart (grace 60 s)";
  EXPECT_FALSE(locked_at_origin(g.path, 0, 0));
  // (New locks after the grace period: NlmService.InGraceOnlyReclaimsAfterItNoReclaims.)

  // A late callback for this run's own restart notice (statd calls the origin back
  // after it answered nfsgw, and waited 5 s for DNS at times here) must not take
  // this run's locks: every LOCK nfsgw sends the origin carries nfsgw's NSM state,
  // and the origin (ganesha) keeps the locks of the state a notice announces.
  // Control: a lock under nfsgw's caller name and another state (as the run before
  // this one held) is dropped by the same notice.
  const Owner before_run{"127.0.0.249", "before-run", 49};
  ASSERT_EQ(direct.lock(before_run, g.at_origin, 0, 10, false, false, note.state - 2), kGranted);
  ASSERT_TRUE(locked_at_origin(g.path, 0, 10));
  nfsgw::upstream::HostStatd::Options so;
  so.timeout = 15000ms;  // statd may wait 5 s for a lost DNS answer
  nfsgw::upstream::HostStatd statd(loop.io(), so);
  const nfsgw::nlm::MonitorReply late = loop.run([&] { return statd.notify("127.0.0.249", note.state); });
  ASSERT_TRUE(late.ok) << late.error;
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return !locked_at_origin(g.path, 0, 10); }, 20s,
                                      "control: the notice to drop the other state's lock", 100ms));
  EXPECT_TRUE(locked_at_origin(f.path, 0, 10)) << "this run's reclaimed lock outlives the late notice";
  EXPECT_EQ(direct.lock(b, f.at_origin, 0, 10), kDenied);
  statd.stop();
  EXPECT_EQ(via.unlock(r, f_gw, 0, 0), kGranted);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0));
  EXPECT_EQ(gw.stop(), 0);
  EXPECT_EQ(record_of(gw).state, note.state + 1) << "a clean stop keeps the down state";
}

TEST_F(NlmTest, AnExportAddedByAReloadLocksAtItsOrigin) {
  INTEG_REQUIRE_NFSGW();
  TempDir dir("nlm-reload");
  GatewayConfig cfg = second_gateway("127.0.0.248");
  cfg.server_extra.push_back({"nlm_grace", "\"0\""});
  cfg.server_extra.push_back({"metrics_listen", "\"127.0.0.1:" + std::to_string(kNlmMetricsPort) + "\""});
  Gateway gw(cfg, dir.path());
  gw.start();
  ASSERT_TRUE(wait_for_port(kNlmRestartGatewayNlmPort, 30000)) << gw.log();
  const File f = make("reload_added");

  // The same origin exported again at /added, by a reload.
  GatewayConfig next = cfg;
  ExportSettings added;
  added.export_path = "/added";
  added.origin_url = shared_origin().url();
  added.export_extra = {{"origin_nlm_port", std::to_string(kNlmOriginPort)}};
  next.extra_exports.push_back(added);
  std::ofstream(gw.config_path(), std::ios::trunc) << gateway_toml(next, gw.cache_dir());
  const RunResult reloaded = gw.cli("reload");
  ASSERT_EQ(reloaded.exit_code, 0) << reloaded.output << "\n" << gw.log();
  const Handle via_added = handle_of(gw.port(), gw.port(), "/added", "reload_added");
  ASSERT_FALSE(via_added.empty()) << gw.log();

  Loop loop;
  Client via(loop, kNlmRestartGatewayNlmPort);
  const Owner r{"127.0.0.51", "r-owner", 51};
  EXPECT_FALSE(locked_at_origin(f.path, 0, 10)) << "control: nothing locked yet";
  // The metrics endpoint's figures of the lock service, before and while held.
  const auto scrape = [] {
    const std::string url = "http://127.0.0.1:" + std::to_string(kNlmMetricsPort) + "/metrics";
    return run({"curl", "-sS", "--fail", "--max-time", "10", url}, std::chrono::seconds(15)).output;
  };
  const std::string before = scrape();
  EXPECT_NE(before.find("\nnfsgw_nlm_locks 0\n"), std::string::npos) << before;
  ASSERT_EQ(via.lock(r, via_added, 0, 10), kGranted) << "a lock on the added export\n" << gw.log();
  EXPECT_TRUE(locked_at_origin(f.path, 0, 10)) << "held at its origin";
  const std::string held = scrape();
  EXPECT_NE(held.find("\nnfsgw_nlm_locks 1\n"), std::string::npos) << held;
  EXPECT_NE(held.find("\nnfsgw_nlm_events_total{kind=\"granted\"} 1\n"), std::string::npos) << held;
  EXPECT_EQ(via.unlock(r, via_added, 0, 0), kGranted);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 10));
  EXPECT_EQ(gw.stop(), 0);
}

}  // namespace
}  // namespace nlm_test
