// HostStatd and the restart notice (gateway/upstream/host_statd.h) against the
// host's real rpc.statd (nfs-common) and rpcbind on 127.0.0.1, started by
// scripts/host-services.sh when they are not registered; they need root. No origin
// is started.
//
// statd's callback: Linux's statd accepts SM_MON only with my_prog 100021 and calls
// back over UDP on the loopback at the port rpcbind gives for (100021, my_vers,
// udp). Registering 100021 version 4 here would take the place of (or be refused
// beside) a real NLM on this host (the origin tests' ganesha registers it), so the
// test's my_id uses a private version, kTestVersion, registered for the test's own
// UDP listener (port 25701) and unregistered at the end: nothing else on the host
// is disturbed. Monitored names are loopback addresses of 127.66.0.0/16 no other
// test uses, unmonitored at the end (SM_UNMON_ALL of the test's my_id).
//
// A "reboot" of a monitored host is played by sending statd SM_NOTIFY for that
// name with a new state, as the rebooted host's statd would.
//
// Ports: 25701 (UDP, the callback listener), 25702 (TCP, a stand-in for a client's
// statd), 25703 (nobody listens), 25704 (a silent statd: FakeOrigin, frozen).
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "gateway/nlm/nsm_record.h"
#include "gateway/upstream/host_statd.h"
#include "protocol/nlm_nsm_types.h"
#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"
#include "tests/support/waiting.h"
#include "tests/upstream/fake_origin.h"

namespace nfsgw::upstream::test {
namespace host_statd_test {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using asio::ip::tcp;
using asio::ip::udp;

constexpr std::int32_t kTestVersion = 0x6e6667;  // "nfg": a private NLM version
constexpr std::uint16_t kCallbackPort = 25701;
constexpr std::uint16_t kClientStatdPort = 25702;
constexpr std::uint16_t kNobodyListens = 25703;
// The bound of calls to the real statd. Generous: statd resolves each monitored
// name, which on a machine whose DNS server does not answer waits 5 s (seen in CI:
// a 2 s bound failed UnmonitorAllForgetsEveryHostOfThisMyId). The tests of the
// bound itself (no statd, a silent one) use kSilentBound.
constexpr auto kTimeout = 12000ms;
constexpr auto kSilentBound = 2000ms;
constexpr auto kWait = 30s;

/// An io_context on two threads, with bounded synchronous waits.
class Loop {
 public:
  Loop() : work_(io_.get_executor()) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  ~Loop() {
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  asio::io_context& io() { return io_; }

  template <typename F>
  auto run(F make) {
    auto fut = asio::co_spawn(io_, std::move(make), asio::use_future);
    if (fut.wait_for(kWait) != std::future_status::ready) {
      throw std::runtime_error("call did not complete within 30 s");
    }
    return fut.get();
  }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

std::vector<std::uint8_t> pmap_call(std::uint32_t xid, std::uint32_t proc, std::uint32_t prog,
                                    std::uint32_t vers, std::uint32_t prot, std::uint32_t port) {
  std::vector<std::uint8_t> out;
  xdr::Writer w(out);
  rpc::CallHeader h;
  h.xid = xid;
  h.prog = 100000;
  h.vers = 2;
  h.proc = proc;
  rpc::encode_call_header(w, h);
  w.u32(prog);
  w.u32(vers);
  w.u32(prot);
  w.u32(port);
  return out;
}

/// PMAPPROC_SET (1) or UNSET (2) at the host's rpcbind over UDP: its boolean answer.
bool pmap(std::uint32_t proc, std::uint32_t prog, std::uint32_t vers, std::uint32_t port) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(111);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const std::uint32_t xid = 0x6e660000u + proc;
  auto msg = pmap_call(xid, proc, prog, vers, IPPROTO_UDP, port);
  bool answer = false;
  if (::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
      static_cast<ssize_t>(msg.size())) {
    std::uint8_t buf[512];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      try {
        xdr::Reader r({buf, static_cast<std::size_t>(n)});
        auto rh = rpc::decode_reply_header(r);
        answer = rh.xid == xid && rh.stat == rpc::ReplyStat::Accepted &&
                 rh.accept == rpc::AcceptStat::Success && r.u32() == 1;
      } catch (const xdr::DecodeError&) {
      }
    }
  }
  ::close(fd);
  return answer;
}

/// The test's my_id program: a UDP RPC server on 127.0.0.1:kCallbackPort, registered
/// with rpcbind as (100021, kTestVersion, udp), that records statd's callbacks.
class CallbackListener {
 public:
  explicit CallbackListener(asio::io_context& io) : socket_(io) {
    socket_.open(udp::v4());
    socket_.bind(udp::endpoint(asio::ip::make_address_v4("127.0.0.1"), kCallbackPort));
    pmap(2, nlm::kCallbackProgram, kTestVersion, 0);  // a leftover of a killed run
    registered_ = pmap(1, nlm::kCallbackProgram, kTestVersion, kCallbackPort);
    asio::co_spawn(io, serve(), asio::detached);
  }
  ~CallbackListener() {
    if (registered_) pmap(2, nlm::kCallbackProgram, kTestVersion, 0);
    boost::system::error_code ec;
    socket_.close(ec);
    (void)nfsgw::test::wait_until([&] { return done_.load(); }, 5s, "the callback listener to stop");
  }
  bool registered() const { return registered_; }

  std::vector<nsm::Status> received() const {
    std::lock_guard lock(mu_);
    return received_;
  }
  /// The first callback for `mon_name`, if any.
  std::optional<nsm::Status> for_name(const std::string& mon_name) const {
    std::lock_guard lock(mu_);
    for (const auto& s : received_) {
      if (s.mon_name == mon_name) return s;
    }
    return std::nullopt;
  }
  /// The call header of the first callback for `mon_name`. statd calls back every
  /// entry that matches a notice by name or by address, so other callbacks (stale
  /// registrations of killed gateways that once had this port) may come here too.
  std::optional<rpc::CallHeader> header_for(const std::string& mon_name) const {
    std::lock_guard lock(mu_);
    for (const auto& [h, name] : headers_) {
      if (name == mon_name) return h;
    }
    return std::nullopt;
  }

 private:
  asio::awaitable<void> serve() {
    std::vector<std::uint8_t> buf(65536);
    for (;;) {
      udp::endpoint from;
      boost::system::error_code ec;
      std::size_t n = 0;
      try {
        n = co_await socket_.async_receive_from(asio::buffer(buf), from, asio::use_awaitable);
      } catch (const boost::system::system_error&) {
        break;
      }
      std::vector<std::uint8_t> reply;
      try {
        xdr::Reader r({buf.data(), n});
        rpc::CallHeader h = rpc::decode_call_header(r);
        nsm::Status st;
        nsm::decode(r, st);
        {
          std::lock_guard lock(mu_);
          headers_.emplace_back(h, st.mon_name);
          // statd retries until answered: keep each (name, state) once.
          bool seen = false;
          for (const auto& s : received_) seen = seen || (s.mon_name == st.mon_name && s.state == st.state);
          if (!seen) received_.push_back(st);
        }
        xdr::Writer w(reply);
        rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
      } catch (const xdr::DecodeError&) {
        continue;
      }
      socket_.send_to(asio::buffer(reply), from, 0, ec);
    }
    done_ = true;
  }

  udp::socket socket_;
  bool registered_ = false;
  std::atomic<bool> done_{false};
  mutable std::mutex mu_;
  std::vector<nsm::Status> received_;
  std::vector<std::pair<rpc::CallHeader, std::string>> headers_;
};

/// A stand-in for a client's statd: TCP on 127.0.0.1:kClientStatdPort, answers
/// SM_NOTIFY (void) and records each.
class ClientStatd {
 public:
  explicit ClientStatd(asio::io_context& io) : io_(io), acceptor_(io) {
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), kClientStatdPort));
    acceptor_.listen();
    asio::co_spawn(io, accept_loop(), asio::detached);
  }
  ~ClientStatd() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    (void)nfsgw::test::wait_until([&] { return done_.load(); }, 5s, "the stand-in statd to stop");
  }
  std::vector<nsm::StatChange> received() const {
    std::lock_guard lock(mu_);
    return received_;
  }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      try {
        tcp::socket s = co_await acceptor_.async_accept(asio::use_awaitable);
        asio::co_spawn(io_, serve(std::move(s)), asio::detached);
      } catch (const boost::system::system_error&) {
        break;
      }
    }
    done_ = true;
  }
  asio::awaitable<void> serve(tcp::socket s) {
    try {
      for (;;) {
        std::uint8_t mark[4];
        co_await asio::async_read(s, asio::buffer(mark), asio::use_awaitable);
        const std::uint32_t len = ((mark[0] & 0x7fu) << 24) | (mark[1] << 16) | (mark[2] << 8) | mark[3];
        if (len > 65536) co_return;
        std::vector<std::uint8_t> body(len);
        co_await asio::async_read(s, asio::buffer(body), asio::use_awaitable);
        xdr::Reader r(body);
        rpc::CallHeader h = rpc::decode_call_header(r);
        std::vector<std::uint8_t> reply(4);
        xdr::Writer w(reply);
        if (h.prog == nsm::kProgram && h.vers == nsm::kVersion &&
            h.proc == static_cast<std::uint32_t>(nsm::Proc::Notify)) {
          nsm::StatChange c;
          nsm::decode(r, c);
          {
            std::lock_guard lock(mu_);
            received_.push_back(c);
          }
          rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
        } else {
          rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::ProcUnavail);
        }
        rpc::write_record_header(reply.data(), static_cast<std::uint32_t>(reply.size() - 4));
        co_await asio::async_write(s, asio::buffer(reply), asio::use_awaitable);
      }
    } catch (const std::exception&) {
    }
  }

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  std::atomic<bool> done_{false};
  mutable std::mutex mu_;
  std::vector<nsm::StatChange> received_;
};

/// A loopback address no other test monitors (127.66.<pid>.<n>).
std::string test_host(int n) {
  return "127.66." + std::to_string(::getpid() % 250) + "." + std::to_string(n);
}

nsm::Priv priv_of(std::uint8_t seed) {
  nsm::Priv p{};
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(seed + i * 7);
  return p;
}

HostStatd::Options test_options() {
  HostStatd::Options o;
  o.my_vers = kTestVersion;
  o.timeout = kTimeout;
  return o;
}

/// A state number for a "reboot" that differs from anything statd recorded.
std::int32_t fresh_state(int n) {
  return static_cast<std::int32_t>(1001 + 2 * ((::getpid() % 100000) * 10 + n));
}

class HostStatdTest : public ::testing::Test {
 protected:
  /// The host's statd, started when it is not registered with rpcbind (as CI's
  /// fresh machine has it until an origin with NLM starts it).
  static void SetUpTestSuite() {
    const std::string cmd = "bash " + std::string(NFSGW_SOURCE_DIR) + "/scripts/host-services.sh statd";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << " failed: these tests need the host's rpc.statd";
  }
  void TearDown() override {
    HostStatd statd(loop_.io(), test_options());
    (void)loop_.run([&]() { return statd.unmonitor_all(); });
  }
  Loop loop_;
};

TEST_F(HostStatdTest, ARebootOfAMonitoredHostCallsBackWithItsNameStateAndPriv) {
  CallbackListener cb(loop_.io());
  ASSERT_TRUE(cb.registered()) << "rpcbind refused (100021, " << kTestVersion << ", udp)";
  HostStatd statd(loop_.io(), test_options());

  const std::string host = test_host(1);
  const nsm::Priv priv = priv_of(3);
  auto mon = loop_.run([&]() { return statd.monitor(host, priv); });
  ASSERT_TRUE(mon.ok) << mon.error;
  auto st = loop_.run([&]() { return statd.stat(host); });
  ASSERT_TRUE(st.ok) << st.error;
  EXPECT_EQ(st.state, mon.state);  // statd's own state, the same in both answers

  const std::int32_t state = fresh_state(1);
  auto n = loop_.run([&]() { return statd.notify(host, state); });
  ASSERT_TRUE(n.ok) << n.error;
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return cb.for_name(host).has_value(); }, kWait,
                                      "statd's callback"));
  const nsm::Status got = *cb.for_name(host);
  EXPECT_EQ(got.mon_name, host);
  EXPECT_EQ(got.state, state);
  EXPECT_EQ(got.priv, priv);
  const auto header = cb.header_for(host);
  ASSERT_TRUE(header.has_value());
  EXPECT_EQ(header->prog, static_cast<std::uint32_t>(nlm::kCallbackProgram));
  EXPECT_EQ(header->vers, static_cast<std::uint32_t>(kTestVersion));
  EXPECT_EQ(header->proc, static_cast<std::uint32_t>(nlm::kCallbackProc));
}

TEST_F(HostStatdTest, AnUnmonitoredHostIsNotCalledBack) {
  CallbackListener cb(loop_.io());
  ASSERT_TRUE(cb.registered());
  HostStatd statd(loop_.io(), test_options());
  const std::string gone = test_host(2);
  const std::string control = test_host(3);
  ASSERT_TRUE(loop_.run([&]() { return statd.monitor(gone, priv_of(20)); }).ok);
  auto un = loop_.run([&]() { return statd.unmonitor(gone); });
  ASSERT_TRUE(un.ok) << un.error;
  ASSERT_TRUE(loop_.run([&]() { return statd.monitor(control, priv_of(30)); }).ok);

  ASSERT_TRUE(loop_.run([&]() { return statd.notify(gone, fresh_state(2)); }).ok);
  ASSERT_TRUE(loop_.run([&]() { return statd.notify(control, fresh_state(3)); }).ok);
  // statd handles notifications in order: once the control's callback (sent
  // after) has arrived, the unmonitored host's would have too.
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return cb.for_name(control).has_value(); }, kWait,
                                      "the control host's callback"));
  EXPECT_EQ(cb.for_name(control)->priv, priv_of(30));
  EXPECT_FALSE(cb.for_name(gone).has_value()) << "a callback for a host no longer monitored";
}

TEST_F(HostStatdTest, UnmonitorAllForgetsEveryHostOfThisMyId) {
  CallbackListener cb(loop_.io());
  ASSERT_TRUE(cb.registered());
  HostStatd statd(loop_.io(), test_options());
  const std::string a = test_host(4);
  const std::string b = test_host(5);
  const std::string control = test_host(6);
  ASSERT_TRUE(loop_.run([&]() { return statd.monitor(a, priv_of(40)); }).ok);
  ASSERT_TRUE(loop_.run([&]() { return statd.monitor(b, priv_of(50)); }).ok);
  auto all = loop_.run([&]() { return statd.unmonitor_all(); });
  ASSERT_TRUE(all.ok) << all.error;
  ASSERT_TRUE(loop_.run([&]() { return statd.monitor(control, priv_of(60)); }).ok);
  ASSERT_TRUE(loop_.run([&]() { return statd.notify(a, fresh_state(4)); }).ok);
  ASSERT_TRUE(loop_.run([&]() { return statd.notify(b, fresh_state(5)); }).ok);
  ASSERT_TRUE(loop_.run([&]() { return statd.notify(control, fresh_state(6)); }).ok);
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return cb.for_name(control).has_value(); }, kWait,
                                      "the control host's callback"));
  EXPECT_FALSE(cb.for_name(a).has_value());
  EXPECT_FALSE(cb.for_name(b).has_value());
}

TEST_F(HostStatdTest, StatdRefusesACallbackProgramOtherThanNlm) {
  HostStatd::Options o = test_options();
  o.my_prog = 0x2000c6c6;
  HostStatd statd(loop_.io(), o);
  auto mon = loop_.run([&]() { return statd.monitor(test_host(7), priv_of(70)); });
  EXPECT_FALSE(mon.ok);
  EXPECT_NE(mon.error.find("stat_fail"), std::string::npos) << mon.error;
}

TEST_F(HostStatdTest, NoStatdGivesAClearErrorWithinTheBound) {
  HostStatd::Options o = test_options();
  o.timeout = kSilentBound;
  o.port = kNobodyListens;
  HostStatd statd(loop_.io(), o);
  const auto start = std::chrono::steady_clock::now();
  auto mon = loop_.run([&]() { return statd.monitor(test_host(8), priv_of(80)); });
  EXPECT_FALSE(mon.ok);
  EXPECT_NE(mon.error.find("SM_MON"), std::string::npos) << mon.error;
  EXPECT_NE(mon.error.find(std::to_string(kNobodyListens)), std::string::npos) << mon.error;
  EXPECT_LT(std::chrono::steady_clock::now() - start, kSilentBound + 5s);
  auto all = loop_.run([&]() { return statd.unmonitor_all(); });
  EXPECT_FALSE(all.ok);
}

TEST_F(HostStatdTest, ASilentStatdEndsEveryCallWithinTheBound) {
  FakeOrigin silent;
  silent.set_mode(FakeOrigin::Mode::Frozen);
  HostStatd::Options o = test_options();
  o.timeout = kSilentBound;
  o.port = silent.port();
  HostStatd statd(loop_.io(), o);
  const auto start = std::chrono::steady_clock::now();
  auto mon = loop_.run([&]() { return statd.monitor(test_host(9), priv_of(90)); });
  EXPECT_FALSE(mon.ok);
  EXPECT_NE(mon.error.find("no answer"), std::string::npos) << mon.error;
  EXPECT_GE(std::chrono::steady_clock::now() - start, kSilentBound);  // it waited for the bound
  EXPECT_LT(std::chrono::steady_clock::now() - start, kSilentBound + 5s);
  EXPECT_GE(silent.calls(), 1);  // the control: the call did reach it
}

TEST_F(HostStatdTest, NamesThatCannotBeSentAreRefusedBeforeStatd) {
  HostStatd statd(loop_.io(), test_options());
  for (std::string bad : {std::string(), std::string(1025, 'h'), std::string("a\0b", 3)}) {
    auto r = loop_.run([&]() { return statd.monitor(bad, priv_of(1)); });
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("not sent"), std::string::npos) << r.error;
  }
  EXPECT_TRUE(loop_.run([&]() { return statd.stat(std::string(1024, 'h')); }).error.find("not sent") ==
              std::string::npos);  // at the bound it is sent
}

TEST_F(HostStatdTest, ARestartNotifiesEveryRecordedHostWithTheNewState) {
  ClientStatd client(loop_.io());
  const fs::path dir = fs::temp_directory_path() / ("host-statd-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  nlm::NsmRecordFile file(dir / "nsm");

  // First run: two client hosts lock; the second is behind an address where no
  // statd listens.
  auto first = file.start_run();
  ASSERT_TRUE(first.ok) << first.error;
  nlm::NsmRecord r = first.record;
  r.add({"client-a", "127.0.0.1", "192.0.2.10"});
  r.add({"client-b", "127.0.0.1", "nfsgw.example"});
  r.add({"client-c", "127.0.0.2", "192.0.2.10"});
  ASSERT_EQ(file.save(r), "");

  // kill -9, then the second run.
  auto second = file.start_run();
  ASSERT_TRUE(second.ok) << second.error;
  ASSERT_GT(second.record.state, first.record.state);
  ASSERT_EQ(second.record.state % 2, 1);
  auto replies = loop_.run([&]() {
    return notify_restart(loop_.io(), second.record.hosts, second.record.state, kClientStatdPort, kTimeout);
  });
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_TRUE(replies[0].ok) << replies[0].error;
  EXPECT_TRUE(replies[1].ok) << replies[1].error;
  EXPECT_FALSE(replies[2].ok);
  EXPECT_NE(replies[2].error.find("127.0.0.2"), std::string::npos) << replies[2].error;
  auto got = client.received();
  ASSERT_EQ(got.size(), 2u);
  std::sort(got.begin(), got.end(), [](const auto& x, const auto& y) { return x.mon_name < y.mon_name; });
  EXPECT_EQ(got[0], (nsm::StatChange{"192.0.2.10", second.record.state}));
  EXPECT_EQ(got[1], (nsm::StatChange{"nfsgw.example", second.record.state}));

  // A third run tells them a larger state again.
  auto third = file.start_run();
  ASSERT_TRUE(third.ok);
  (void)loop_.run([&]() {
    return notify_restart(loop_.io(), third.record.hosts, third.record.state, kClientStatdPort, kTimeout);
  });
  got = client.received();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[2].state, third.record.state);
  EXPECT_GT(third.record.state, second.record.state);
  fs::remove_all(dir);
}

TEST_F(HostStatdTest, ARealStatdUnderstandsTheRestartNotice) {
  // nfsgw's SM_NOTIFY, sent to this host's real statd (found through rpcbind),
  // reaches whoever monitors nfsgw's name there: here the test's own my_id.
  CallbackListener cb(loop_.io());
  ASSERT_TRUE(cb.registered());
  HostStatd statd(loop_.io(), test_options());
  const std::string gateway_name = test_host(10);
  ASSERT_TRUE(loop_.run([&]() { return statd.monitor(gateway_name, priv_of(100)); }).ok);
  const std::int32_t state = fresh_state(10);
  std::vector<nlm::MonitoredHost> hosts{{"this-host", "127.0.0.1", gateway_name}};
  auto replies = loop_.run([&]() { return notify_restart(loop_.io(), hosts, state, 0, kTimeout); });
  ASSERT_EQ(replies.size(), 1u);
  ASSERT_TRUE(replies[0].ok) << replies[0].error;
  ASSERT_TRUE(nfsgw::test::wait_until([&] { return cb.for_name(gateway_name).has_value(); }, kWait,
                                      "the callback for nfsgw's name"));
  EXPECT_EQ(cb.for_name(gateway_name)->state, state);
  EXPECT_EQ(cb.for_name(gateway_name)->priv, priv_of(100));
}

}  // namespace host_statd_test
}  // namespace nfsgw::upstream::test
