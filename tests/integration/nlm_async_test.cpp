// The asynchronous NLM forms through nfsgw (issue 21) against a real origin lock
// manager (nfs-ganesha with NLM on, the host's rpc.statd), with calls built by
// hand (tests/support/lock_files.h, nlm_wire) and a stand-in for the client's
// lock manager (TCP on NFSGW_NLM_CLIENT_NLM_PORT) that keeps the _RES calls nfsgw
// sends it:
//   - TEST_MSG, LOCK_MSG, CANCEL_MSG, UNLOCK_MSG and GRANTED_MSG are answered
//     void, and their results come to the client's NLM as TEST_RES, LOCK_RES,
//     CANCEL_RES, UNLOCK_RES and GRANTED_RES; a lock taken by LOCK_MSG is held at
//     the origin (its file system shows it) and UNLOCK_MSG frees it there;
//   - a client NLM that never answers a _RES (FreeBSD's lockd) still gets each;
//   - a forged handle is answered LOCK_RES NLM4_STALE_FH and locks nothing;
//   - _RES calls sent to nfsgw are answered void, malformed ones GARBAGE_ARGS;
//   - SHARE and UNSHARE through nfsgw get the origin's answers (ganesha's NLM
//     SHARE); a forged handle is answered NLM4_STALE_FH. (Here for the origin with
//     NLM this binary already starts.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "protocol/nlm4_types.h"
#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"
#include "tests/support/lock_files.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/rpc_wire.h"
#include "tests/support/waiting.h"

namespace nlm_async_test {
namespace {

using namespace integ;
using namespace integ::nlm_wire;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace nlm4 = nfsgw::nlm4;

// The shared origin serves NLM on its own port (read by origin-ganesha.sh); nfsgw
// reaches the client's NLM at the stand-in's port (this host's rpcbind names
// other servers' NLM).
const bool kNlmOn = [] {
  ::setenv("ORIGIN_NLM_PORT", std::to_string(kNlmOriginPort).c_str(), 1);
  ::setenv("NFSGW_NLM_CLIENT_NLM_PORT", std::to_string(kNlmClientNlmPort).c_str(), 1);
  return true;
}();
auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

/// A stand-in for a client's lock manager on 127.0.0.1:`port` (TCP): keeps every
/// NLM call it gets, and answers it void unless `silent`.
class ClientNlmStandIn {
 public:
  struct Seen {
    std::uint32_t proc = 0;
    std::vector<std::uint8_t> args;
  };
  ClientNlmStandIn(std::uint16_t port, bool silent)
      : silent_(silent), acceptor_(io_), work_(io_.get_executor()) {
    using asio::ip::tcp;
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), port));
    acceptor_.listen();
    asio::co_spawn(io_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ClientNlmStandIn() {
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
    });
    work_.reset();
    io_.stop();
    thread_.join();
  }
  std::vector<Seen> seen(std::uint32_t proc) const {
    std::lock_guard g(mu_);
    std::vector<Seen> out;
    for (const Seen& s : seen_)
      if (s.proc == proc) out.push_back(s);
    return out;
  }
  std::size_t count() const {
    std::lock_guard g(mu_);
    return seen_.size();
  }
  /// The n-th `proc` call's nlm4_res (TEST_RES: its nlm4_testres), waited for up to 30 s.
  template <typename Res>
  std::optional<Res> result(std::uint32_t proc, std::size_t n = 0) const {
    if (!nfsgw::test::wait_until([&] { return seen(proc).size() > n; }, 30s, "a _RES call at the client's NLM"))
      return std::nullopt;
    const std::vector<std::uint8_t> args = seen(proc)[n].args;  // the Reader keeps a view of it
    nfsgw::xdr::Reader r(args);
    Res out;
    nlm4::decode(r, out);
    return out;
  }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      try {
        auto s = co_await acceptor_.async_accept(asio::use_awaitable);
        asio::co_spawn(io_, serve(std::move(s)), asio::detached);
      } catch (const boost::system::system_error&) {
        co_return;
      }
    }
  }
  asio::awaitable<void> serve(asio::ip::tcp::socket s) {
    namespace rpc = nfsgw::rpc;
    try {
      for (int calls = 0; calls < 100; ++calls) {
        std::uint8_t mark[4];
        co_await asio::async_read(s, asio::buffer(mark), asio::use_awaitable);
        const std::uint32_t len = ((mark[0] & 0x7fu) << 24) | (mark[1] << 16) | (mark[2] << 8) | mark[3];
        if (len > 65536) co_return;
        std::vector<std::uint8_t> body(len);
        co_await asio::async_read(s, asio::buffer(body), asio::use_awaitable);
        nfsgw::xdr::Reader r(body);
        const rpc::CallHeader h = rpc::decode_call_header(r);
        const auto rest = r.rest();
        {
          std::lock_guard g(mu_);
          if (h.prog == nlm4::kProgram) seen_.push_back(Seen{h.proc, {rest.begin(), rest.end()}});
        }
        if (silent_) continue;
        std::vector<std::uint8_t> reply(4);
        nfsgw::xdr::Writer w(reply);
        rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
        rpc::write_record_header(reply.data(), static_cast<std::uint32_t>(reply.size() - 4));
        co_await asio::async_write(s, asio::buffer(reply), asio::use_awaitable);
      }
    } catch (const std::exception&) {
      // nfsgw closes a one-way _RES call's connection once it is sent.
    }
  }

  bool silent_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<Seen> seen_;
};

class NlmAsync : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    GatewayConfig cfg;
    cfg.port = kNlmGatewayPort;
    cfg.origin_url = shared_origin().url();
    cfg.server_extra = {{"nlm_port", std::to_string(kNlmGatewayNlmPort)},
                        {"nlm_grace", "\"0\""},
                        {"nlm_caller_name", "\"127.0.0.252\""}};  // its own: nlm_test's comment
    cfg.export_extra = {{"origin_nlm_port", std::to_string(kNlmOriginPort)}};
    gw_ = new NlmGateway("nlm-async", cfg, kNlmGatewayNlmPort);
  }
  static void TearDownTestSuite() {
    delete gw_;
    gw_ = nullptr;
  }
  static NlmGateway* gw_;
};
NlmGateway* NlmAsync::gw_ = nullptr;

/// A client owner's lock on `fh` (caller names are loopback addresses: the host's
/// statd monitors them).
WireLock owner_lock(const Handle& fh, int n, std::uint64_t off, std::uint64_t len) {
  WireLock l;
  l.caller_name = "127.0.0." + std::to_string(n);
  l.fh = bytes_of(fh);
  l.oh = {'o', static_cast<std::uint8_t>('0' + n % 10)};
  l.svid = static_cast<std::uint32_t>(n);
  l.offset = off;
  l.length = len;
  return l;
}

const nlm4::Netobj kCookie = {0xc0, 0x01};  // call_of's

TEST_F(NlmAsync, EachMsgIsAnsweredVoidAndItsResultComesAsARes) {
  INTEG_REQUIRE_NFSGW();
  const NlmGateway::File f = gw_->make("async_lock");
  ClientNlmStandIn client(kNlmClientNlmPort, /*silent=*/false);
  TcpConn c(kNlmGatewayNlmPort);
  ASSERT_TRUE(c.connected());
  std::uint32_t xid = 100;
  const WireLock a = owner_lock(f.via_gw, 21, 0, 100), b = owner_lock(f.via_gw, 22, 50, 10);

  const auto sent = std::chrono::steady_clock::now();
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kLockMsg, a).bytes))) << gw_->log();
  const auto lock_res = client.result<nlm4::Res>(kLockRes);
  ASSERT_TRUE(lock_res) << gw_->log();
  std::printf("LOCK_MSG sent to LOCK_RES at the client's NLM: %lld ms\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent)
                      .count()));
  EXPECT_EQ(lock_res->stat, nlm4::Stat::Granted);
  EXPECT_EQ(lock_res->cookie, kCookie);
  EXPECT_TRUE(locked_at_origin(f.path, 0, 100)) << "LOCK_MSG's lock is held at the origin";

  // Another owner: TEST_MSG and LOCK_MSG are refused, by _RES.
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kTestMsg, b).bytes)));
  const auto test_res = client.result<nlm4::TestRes>(kTestRes);
  ASSERT_TRUE(test_res);
  EXPECT_EQ(test_res->stat, nlm4::Stat::Denied);
  EXPECT_EQ(test_res->holder.svid, 21) << "the holder as its client names it";
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kLockMsg, b).bytes)));
  const auto denied = client.result<nlm4::Res>(kLockRes, 1);
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->stat, nlm4::Stat::Denied);
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kCancelMsg, b, /*block=*/true).bytes)));
  ASSERT_TRUE(client.result<nlm4::Res>(kCancelRes));

  // UNLOCK_MSG frees the range at the origin.
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kUnlockMsg, owner_lock(f.via_gw, 21, 0, 0)).bytes)));
  const auto unlock_res = client.result<nlm4::Res>(kUnlockRes);
  ASSERT_TRUE(unlock_res);
  EXPECT_EQ(unlock_res->stat, nlm4::Stat::Granted);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0));

  // GRANTED_MSG: answered as GRANTED is (nfsgw waits for no lock of the origin's).
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kGrantedMsg, a).bytes)));
  const auto granted_res = client.result<nlm4::Res>(kGrantedRes);
  ASSERT_TRUE(granted_res);
  EXPECT_EQ(granted_res->stat, nlm4::Stat::Denied);
  EXPECT_EQ(client.count(), 6u) << "one _RES per _MSG";
}

TEST_F(NlmAsync, AClientNlmThatNeverAnswersAResStillGetsEach) {
  INTEG_REQUIRE_NFSGW();
  const NlmGateway::File f = gw_->make("async_silent");
  ClientNlmStandIn client(kNlmClientNlmPort, /*silent=*/true);
  TcpConn c(kNlmGatewayNlmPort);
  std::uint32_t xid = 200;
  const WireLock a = owner_lock(f.via_gw, 23, 0, 10);
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kLockMsg, a).bytes)));
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kUnlockMsg, a).bytes)));
  const auto locked = client.result<nlm4::Res>(kLockRes), unlocked = client.result<nlm4::Res>(kUnlockRes);
  ASSERT_TRUE(locked && unlocked) << gw_->log();
  EXPECT_EQ(locked->stat, nlm4::Stat::Granted);
  EXPECT_EQ(unlocked->stat, nlm4::Stat::Granted);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0));
}

TEST_F(NlmAsync, AForgedHandleIsAnsweredStaleFhAndLocksNothing) {
  INTEG_REQUIRE_NFSGW();
  const NlmGateway::File f = gw_->make("async_forged");
  ClientNlmStandIn client(kNlmClientNlmPort, false);
  TcpConn c(kNlmGatewayNlmPort);
  std::uint32_t xid = 300;
  Handle forged = f.via_gw;
  ASSERT_FALSE(forged.empty());
  forged.back() ^= 0x01;
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kLockMsg, owner_lock(forged, 24, 0, 0)).bytes)));
  const auto stale = client.result<nlm4::Res>(kLockRes);
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->stat, nlm4::Stat::StaleFh);
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0)) << "nothing reached the origin";
  // Control: the genuine handle locks, and is let go.
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kLockMsg, owner_lock(f.via_gw, 24, 0, 0)).bytes)));
  const auto granted = client.result<nlm4::Res>(kLockRes, 1);
  ASSERT_TRUE(granted);
  EXPECT_EQ(granted->stat, nlm4::Stat::Granted);
  EXPECT_TRUE(locked_at_origin(f.path, 0, 0));
  EXPECT_TRUE(is_void(call(c, msg_call_of(++xid, kUnlockMsg, owner_lock(f.via_gw, 24, 0, 0)).bytes)));
  ASSERT_TRUE(client.result<nlm4::Res>(kUnlockRes));
  EXPECT_FALSE(locked_at_origin(f.path, 0, 0));
}

TEST_F(NlmAsync, ResCallsToNfsgwAreAnsweredVoid) {
  INTEG_REQUIRE_NFSGW();
  ClientNlmStandIn client(kNlmClientNlmPort, false);
  TcpConn c(kNlmGatewayNlmPort);
  std::uint32_t xid = 400;
  for (std::uint32_t proc : {kTestRes, kLockRes, kCancelRes, kUnlockRes, kGrantedRes}) {
    EXPECT_TRUE(is_void(call(c, res_call_of(++xid, proc, kStatGranted).bytes))) << proc;
    // Cut short (no status), and a status outside nlm4_stats.
    XdrOut cut = rpc_call(++xid, kProgram, kVersion, proc);
    cut.opaque({1});
    EXPECT_EQ(call(c, cut.bytes).accept_stat, 4u) << proc;
    EXPECT_EQ(call(c, res_call_of(++xid, proc, 99).bytes).accept_stat, 4u) << proc;
  }
  // Still serving; and nfsgw answered none of them with a call of its own.
  EXPECT_EQ(stat_of(call(c, call_of(++xid, kTest, owner_lock(gw_->make("async_res").via_gw, 25, 0, 1)).bytes)),
            kStatGranted);
  EXPECT_EQ(client.count(), 0u);
}

/// A SHARE or UNSHARE on its own connection to `port`: the status, or 999.
std::uint32_t share_at(std::uint16_t port, std::uint32_t proc, const WireShare& s) {
  static std::atomic<std::uint32_t> xid{1000};
  TcpConn c(port);
  if (!c.connected()) return 999;
  return stat_of(call(c, share_call_of(++xid, proc, s).bytes));
}

WireShare sharer(const Handle& fh, const std::string& host, std::uint32_t access, std::uint32_t deny) {
  WireShare s;
  s.caller_name = host;
  s.fh = bytes_of(fh);
  s.oh = {'s', static_cast<std::uint8_t>(host.back())};
  s.access = access;
  s.mode = deny;
  return s;
}

TEST_F(NlmAsync, ASharesAnswerThroughNfsgwIsTheOrigins) {
  // This origin (ganesha's VFS FSAL) refuses some SHAREs outright, to its own
  // clients too, and which ones varied here with how the file was made (write
  // access, or any deny mode): what a reservation excludes is left to the unit
  // tests' fake origin (NlmShareService*); here, that each answer through nfsgw is
  // the origin's. (A SHARE through nfsgw that denies what the origin lets its own
  // client ask for could not be made here: read and deny-read was refused, and a
  // deny-write reservation excludes only writers, whom it refused already.)
  INTEG_REQUIRE_NFSGW();
  const NlmGateway::File f = gw_->make("share");
  const std::uint16_t gw = kNlmGatewayNlmPort, origin = kNlmOriginPort;
  std::set<std::uint32_t> answers;
  for (std::uint32_t access : {kShareAccessRead, kShareAccessWrite, kShareAccessRead | kShareAccessWrite}) {
    for (std::uint32_t deny : {kShareDenyNone, kShareDenyWrite}) {
      const std::string what = "access " + std::to_string(access) + " deny " + std::to_string(deny);
      // A client of the origin (its caller name must resolve for ganesha's statd).
      const std::uint32_t direct = share_at(origin, kShare, sharer(f.at_origin, "localhost", access, deny));
      EXPECT_EQ(share_at(origin, kUnshare, sharer(f.at_origin, "localhost", access, deny)), kStatGranted) << what;
      ASSERT_NE(direct, 999u) << what;
      std::printf("SHARE %s: the origin answers %u\n", what.c_str(), direct);
      answers.insert(direct);
      const WireShare a = sharer(f.via_gw, "127.0.0.31", access, deny);
      EXPECT_EQ(share_at(gw, kShare, a), direct) << what << "\n" << gw_->log();
      EXPECT_EQ(share_at(gw, kUnshare, a), kStatGranted) << what;
    }
  }
  // Control: the origin answered both ways, so the comparison can fail.
  EXPECT_TRUE(answers.contains(kStatGranted) && answers.contains(kStatDenied));
  // FREE_ALL of a host that holds a reservation is answered (void).
  ASSERT_EQ(share_at(gw, kShare, sharer(f.via_gw, "127.0.0.31", kShareAccessRead, kShareDenyNone)), kStatGranted);
  TcpConn c(gw);
  XdrOut free_all = rpc_call(2000, kProgram, kVersion, kFreeAll);
  free_all.string("127.0.0.31").u32(5);
  EXPECT_TRUE(is_void(call(c, free_all.bytes)));
}

TEST_F(NlmAsync, AShareWithAForgedHandleIsStaleFh) {
  INTEG_REQUIRE_NFSGW();
  const NlmGateway::File f = gw_->make("share_forged");
  Handle forged = f.via_gw;
  ASSERT_FALSE(forged.empty());
  forged.back() ^= 0x01;
  // A forged gateway handle, and the origin's own handle sent to nfsgw.
  for (const Handle& h : {forged, f.at_origin}) {
    EXPECT_EQ(share_at(kNlmGatewayNlmPort, kShare, sharer(h, "127.0.0.33", kShareAccessRead, kShareDenyNone)),
              kStatStaleFh);
    EXPECT_EQ(share_at(kNlmGatewayNlmPort, kUnshare, sharer(h, "127.0.0.33", kShareAccessRead, kShareDenyNone)),
              kStatStaleFh);
  }
  // Control: the same call with the true handle is granted.
  const WireShare c = sharer(f.via_gw, "127.0.0.33", kShareAccessRead, kShareDenyNone);
  EXPECT_EQ(share_at(kNlmGatewayNlmPort, kShare, c), kStatGranted) << gw_->log();
  EXPECT_EQ(share_at(kNlmGatewayNlmPort, kUnshare, c), kStatGranted);
}

}  // namespace
}  // namespace nlm_async_test
