// The lock service's own peers on the network (issue 21), against stand-ins on
// the loopback; no origin, no statd:
//   - ClientNlm (gateway/upstream/client_nlm.h): NLM4 GRANTED to a client's NLM:
//     the client's answer GRANTED -> true, with the lock as sent; DENIED -> false;
//     a silent client ends within the bound; a closed port -> false at once;
//   - StatdCallback (gateway/upstream/statd_callback.h): statd's reboot callback
//     over UDP: registered with rpcbind for UDP at its port and unregistered at
//     stop; a callback from a privileged port answered (void) and handed on; one
//     from an unprivileged port dropped unanswered; another version
//     PROG_MISMATCH, another procedure PROC_UNAVAIL, bad arguments GARBAGE_ARGS.
// Root is needed (privileged source ports, rpcbind SET). Ports: 25720 (a stand-in
// client NLM), 25721 (nobody listens), 25722 (a silent client), 900-1000 (the
// test's privileged source ports, the first free ones).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "gateway/upstream/client_nlm.h"
#include "gateway/upstream/statd_callback.h"
#include "protocol/nlm4_types.h"
#include "protocol/nlm_nsm_types.h"
#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"
#include "tests/support/waiting.h"

namespace nfsgw::upstream::test {
namespace nlm_peers_test {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

constexpr std::uint16_t kClientNlmPort = 25720;
constexpr std::uint16_t kNobodyListens = 25721;
constexpr std::uint16_t kSilentPort = 25722;

/// An io_context on two threads.
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
    if (fut.wait_for(30s) != std::future_status::ready) throw std::runtime_error("not done in 30 s");
    return fut.get();
  }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

/// A client's NLM: answers GRANTED with `answer` (or never, when silent).
class StandInNlm {
 public:
  StandInNlm(asio::io_context& io, std::uint16_t port, nlm4::Stat answer, bool silent = false)
      : io_(io), acceptor_(io), answer_(answer), silent_(silent) {
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), port));
    acceptor_.listen();
    asio::co_spawn(io, accept_loop(), asio::detached);
  }
  ~StandInNlm() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    (void)nfsgw::test::wait_until([&] { return done_.load(); }, 5s, "the stand-in to stop");
  }
  std::vector<std::pair<rpc::CallHeader, nlm4::TestArgs>> calls() const {
    std::lock_guard g(mu_);
    return calls_;
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
      std::uint8_t mark[4];
      co_await asio::async_read(s, asio::buffer(mark), asio::use_awaitable);
      const std::uint32_t len = ((mark[0] & 0x7fu) << 24) | (mark[1] << 16) | (mark[2] << 8) | mark[3];
      if (len > 65536) co_return;
      std::vector<std::uint8_t> body(len);
      co_await asio::async_read(s, asio::buffer(body), asio::use_awaitable);
      xdr::Reader r(body);
      const rpc::CallHeader h = rpc::decode_call_header(r);
      nlm4::TestArgs a;
      nlm4::decode(r, a);
      {
        std::lock_guard g(mu_);
        calls_.emplace_back(h, a);
      }
      if (silent_) {
        std::uint8_t more[1];
        co_await asio::async_read(s, asio::buffer(more), asio::use_awaitable);  // until the caller closes
        co_return;
      }
      std::vector<std::uint8_t> reply(4);
      xdr::Writer w(reply);
      rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
      nlm4::encode(w, nlm4::Res{a.cookie, answer_});
      rpc::write_record_header(reply.data(), static_cast<std::uint32_t>(reply.size() - 4));
      co_await asio::async_write(s, asio::buffer(reply), asio::use_awaitable);
    } catch (const std::exception&) {
    }
  }

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  nlm4::Stat answer_;
  bool silent_;
  std::atomic<bool> done_{false};
  mutable std::mutex mu_;
  std::vector<std::pair<rpc::CallHeader, nlm4::TestArgs>> calls_;
};

nlm4::TestArgs granted_args() {
  nlm4::TestArgs a;
  a.cookie = {7, 7};
  a.exclusive = true;
  a.lock.caller_name = "nfsgw-host";
  const std::vector<std::uint8_t> fh = {1, 2, 3, 4, 5};
  a.lock.fh = nfs3::FileHandle(fh);
  a.lock.oh = {0x10, 0x20};
  a.lock.svid = 4242;
  a.lock.offset = 100;
  a.lock.length = 50;
  return a;
}

ClientNlm::Options on_port(std::uint16_t port, std::chrono::milliseconds timeout = 2000ms) {
  ClientNlm::Options o;
  o.port = port;
  o.timeout = timeout;
  return o;
}

TEST(ClientNlmTest, AClientThatAnswersGrantedTakesTheLockAsSent) {
  Loop loop;
  StandInNlm client(loop.io(), kClientNlmPort, nlm4::Stat::Granted);
  ClientNlm nlm(loop.io(), on_port(kClientNlmPort));
  EXPECT_TRUE(loop.run([&] { return nlm.granted("127.0.0.1", granted_args()); }));
  const auto calls = client.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first.prog, nlm4::kProgram);
  EXPECT_EQ(calls[0].first.vers, nlm4::kVersion);
  EXPECT_EQ(calls[0].first.proc, static_cast<std::uint32_t>(nlm4::Proc::Granted));
  EXPECT_EQ(calls[0].second, granted_args());
}

TEST(ClientNlmTest, AClientThatAnswersDeniedDoesNotTakeIt) {
  Loop loop;
  StandInNlm client(loop.io(), kClientNlmPort, nlm4::Stat::Denied);
  ClientNlm nlm(loop.io(), on_port(kClientNlmPort));
  EXPECT_FALSE(loop.run([&] { return nlm.granted("127.0.0.1", granted_args()); }));
  EXPECT_EQ(client.calls().size(), 1u) << "control: it was asked";
}

TEST(ClientNlmTest, ASilentOrAbsentClientEndsWithinTheBound) {
  Loop loop;
  StandInNlm silent(loop.io(), kSilentPort, nlm4::Stat::Granted, /*silent=*/true);
  ClientNlm nlm(loop.io(), on_port(kSilentPort, 300ms));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(loop.run([&] { return nlm.granted("127.0.0.1", granted_args()); }));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return silent.calls().size() == 1; }, 5s, "the silent client's call"));
  ClientNlm nobody(loop.io(), on_port(kNobodyListens, 300ms));
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(loop.run([&] { return nobody.granted("127.0.0.1", granted_args()); }));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  nobody.stop();
  EXPECT_FALSE(loop.run([&] { return nobody.granted("127.0.0.1", granted_args()); })) << "stopped";
}

/// One datagram to 127.0.0.1:`port` from `from_port` (0: any); the reply, if any
/// comes within 500 ms.
std::optional<std::vector<std::uint8_t>> exchange(std::uint16_t port, std::uint16_t from_port,
                                                  const std::vector<std::uint8_t>& msg) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in me{};
  me.sin_family = AF_INET;
  me.sin_port = htons(from_port);
  me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A privileged port asked for: the first free one from there (rpc daemons hold some).
  bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&me), sizeof me) == 0;
  for (std::uint16_t p = from_port + 1; !bound && from_port != 0 && p < 1024; ++p) {
    me.sin_port = htons(p);
    bound = ::bind(fd, reinterpret_cast<sockaddr*>(&me), sizeof me) == 0;
  }
  if (!bound) {
    ::close(fd);
    ADD_FAILURE() << "cannot bind a UDP port from " << from_port << " (root needed)";
    return std::nullopt;
  }
  timeval tv{0, 500000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::optional<std::vector<std::uint8_t>> out;
  if (::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
      static_cast<ssize_t>(msg.size())) {
    std::vector<std::uint8_t> buf(65536);
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n > 0) {
      buf.resize(static_cast<std::size_t>(n));
      out = std::move(buf);
    }
  }
  ::close(fd);
  return out;
}

std::vector<std::uint8_t> callback_call(std::uint32_t xid, std::uint32_t vers, std::uint32_t proc,
                                        const std::optional<nsm::Status>& st) {
  std::vector<std::uint8_t> out;
  xdr::Writer w(out);
  rpc::CallHeader h;
  h.xid = xid;
  h.prog = nlm4::kProgram;
  h.vers = vers;
  h.proc = proc;
  rpc::encode_call_header(w, h);
  if (st) nsm::encode(w, *st);
  return out;
}

rpc::ReplyHeader reply_header(const std::vector<std::uint8_t>& r) {
  xdr::Reader in(r);
  return rpc::decode_reply_header(in);
}

/// PMAP GETPORT of (prog, vers, udp) at 127.0.0.1:111.
/// The UDP port rpcbind maps (prog, vers) to, exactly that version; 0 when none.
/// From PMAPPROC_DUMP, not GETPORT: rpcbind's GETPORT answers another version's
/// port when the one asked for is missing (an NLM origin's 100021 v4, in CI).
std::uint32_t udp_port_at_rpcbind(std::uint32_t prog, std::uint32_t vers) {
  std::vector<std::uint8_t> msg;
  xdr::Writer w(msg);
  rpc::CallHeader h;
  h.xid = 0x6e6700aa;
  h.prog = 100000;
  h.vers = 2;
  h.proc = 4;  // PMAPPROC_DUMP
  rpc::encode_call_header(w, h);
  auto r = exchange(111, 0, msg);
  if (!r) return 0;
  try {
    xdr::Reader in(*r);
    rpc::decode_reply_header(in);
    while (in.u32() != 0) {  // pmaplist: another mapping follows
      const std::uint32_t p = in.u32(), v = in.u32(), prot = in.u32(), port = in.u32();
      if (p == prog && v == vers && prot == 17) return port;
    }
  } catch (const xdr::DecodeError&) {
  }
  return 0;
}

TEST(StatdCallbackTest, ACallbackFromAPrivilegedPortIsAnsweredAndHandedOn) {
  Loop loop;
  const std::uint32_t version = callback_version(kClientNlmPort);
  std::mutex mu;
  std::vector<nsm::Status> seen;
  std::vector<nlm::Rebooted> who;
  StatdCallback cb(loop.io(), version, [&](nsm::Status st, nlm::Rebooted w) {
    std::lock_guard g(mu);
    seen.push_back(std::move(st));
    who.push_back(w);
  });
  ASSERT_TRUE(cb.start()) << "rpcbind refused the registration";
  EXPECT_EQ(udp_port_at_rpcbind(nlm4::kProgram, version), cb.port());
  nsm::Status st{"guest-a", 7, {}};
  st.priv[0] = 0x42;

  // From an unprivileged port: dropped, unanswered.
  EXPECT_FALSE(exchange(cb.port(), 0, callback_call(1, version, 16, st)).has_value());
  // From a privileged port (as statd calls): answered void, and handed on.
  auto r = exchange(cb.port(), 901, callback_call(2, version, 16, st));
  ASSERT_TRUE(r.has_value());
  auto h = reply_header(*r);
  EXPECT_EQ(h.xid, 2u);
  EXPECT_EQ(h.accept, rpc::AcceptStat::Success);
  ASSERT_TRUE(nfsgw::test::wait_until(
      [&] {
        std::lock_guard g(mu);
        return !seen.empty();
      },
      5s, "the callback handed on"));
  {
    std::lock_guard g(mu);
    ASSERT_EQ(seen.size(), 1u) << "the unprivileged one was not";
    EXPECT_EQ(seen[0], st);
    EXPECT_EQ(who[0], nlm::Rebooted::ClientHost) << "the client version";
  }
  // The origin callback version: an origin nfsgw monitors restarted.
  EXPECT_EQ(udp_port_at_rpcbind(nlm4::kProgram, origin_callback_version(version)), cb.port());
  nsm::Status origin{"127.0.0.1", 9, {}};
  r = exchange(cb.port(), 906, callback_call(7, origin_callback_version(version), 16, origin));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(reply_header(*r).accept, rpc::AcceptStat::Success);
  ASSERT_TRUE(nfsgw::test::wait_until(
      [&] {
        std::lock_guard g(mu);
        return seen.size() == 2;
      },
      5s, "the origin's callback handed on"));
  {
    std::lock_guard g(mu);
    EXPECT_EQ(seen[1], origin);
    EXPECT_EQ(who[1], nlm::Rebooted::Origin);
  }
  // Another version, another procedure, bad arguments, NULL.
  r = exchange(cb.port(), 902, callback_call(3, 4, 16, st));
  ASSERT_TRUE(r.has_value());
  h = reply_header(*r);
  EXPECT_EQ(h.accept, rpc::AcceptStat::ProgMismatch);
  EXPECT_EQ(h.mismatch_low, version);
  EXPECT_EQ(h.mismatch_high, origin_callback_version(version));
  r = exchange(cb.port(), 903, callback_call(4, version, 2, st));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(reply_header(*r).accept, rpc::AcceptStat::ProcUnavail);
  r = exchange(cb.port(), 907, callback_call(8, version, 18, st));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(reply_header(*r).accept, rpc::AcceptStat::ProcUnavail);
  auto cut = callback_call(5, version, 16, st);
  cut.resize(cut.size() - 3);
  r = exchange(cb.port(), 904, cut);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(reply_header(*r).accept, rpc::AcceptStat::GarbageArgs);
  r = exchange(cb.port(), 905, callback_call(6, version, 0, std::nullopt));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(reply_header(*r).accept, rpc::AcceptStat::Success);
  {
    std::lock_guard g(mu);
    EXPECT_EQ(seen.size(), 2u) << "nothing else handed on";
  }
  cb.stop();
  EXPECT_EQ(udp_port_at_rpcbind(nlm4::kProgram, version), 0u) << "unregistered at stop";
}

}  // namespace nlm_peers_test
}  // namespace nfsgw::upstream::test
