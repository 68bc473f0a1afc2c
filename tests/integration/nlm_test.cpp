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
//     NLM4_STALE_FH and lock nothing at the origin.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "gateway/upstream/origin_nlm.h"
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

// The shared origin serves NLM on its own port (read by origin-ganesha.sh).
const bool kNlmOn = [] {
  ::setenv("ORIGIN_NLM_PORT", std::to_string(kNlmOriginPort).c_str(), 1);
  return true;
}();
auto* const kEnv = ::testing::AddGlobalTestEnvironment(new OriginEnvironment);

/// Runs NLM client calls (OriginNlm coroutines) on two threads of their own.
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
  boost::asio::io_context& io() { return io_; }
  template <typename F>
  auto run(F make) {
    auto fut = boost::asio::co_spawn(io_, std::move(make), boost::asio::use_future);
    if (fut.wait_for(60s) != std::future_status::ready) throw std::runtime_error("NLM call not done in 60 s");
    return fut.get();
  }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
};

Credentials user() {
  Credentials c;
  c.uid = 1000;
  c.gid = 1000;
  c.machine_name = "nlm-test";
  return c;
}

/// A lock owner of a client host.
struct Owner {
  std::string host;
  std::string oh;
  std::int32_t svid = 0;
};

nlm4::Lock lock_of(const Owner& o, const Handle& fh, std::uint64_t off, std::uint64_t len) {
  nlm4::Lock l;
  l.caller_name = o.host;
  l.fh = nfs3::FileHandle(fh);
  l.oh.assign(o.oh.begin(), o.oh.end());
  l.svid = o.svid;
  l.offset = off;
  l.length = len;
  return l;
}

/// An NLM client of one server (nfsgw's NLM port, or the origin's).
class Client {
 public:
  Client(Loop& loop, std::uint16_t port)
      : loop_(loop), nlm_(loop.io(), "127.0.0.1", port, 0, std::chrono::milliseconds(10000), "nlm-test") {}
  ~Client() { nlm_.stop(); }

  /// The server's status, or 999 when it did not answer.
  std::uint32_t lock(const Owner& o, const Handle& fh, std::uint64_t off, std::uint64_t len, bool block = false) {
    nlm4::LockArgs a;
    a.cookie = {1, 2};
    a.block = block;
    a.exclusive = true;
    a.lock = lock_of(o, fh, off, len);
    a.state = 1;
    return stat(loop_.run([this, a]() { return nlm_.lock(user(), a); }));
  }
  std::uint32_t unlock(const Owner& o, const Handle& fh, std::uint64_t off, std::uint64_t len) {
    nlm4::UnlockArgs a;
    a.cookie = {3};
    a.lock = lock_of(o, fh, off, len);
    return stat(loop_.run([this, a]() { return nlm_.unlock(user(), a); }));
  }
  std::uint32_t test(const Owner& o, const Handle& fh, std::uint64_t off, std::uint64_t len) {
    nlm4::TestArgs a;
    a.cookie = {4};
    a.exclusive = true;
    a.lock = lock_of(o, fh, off, len);
    return stat(loop_.run([this, a]() { return nlm_.test(user(), a); }));
  }

 private:
  template <typename R>
  static std::uint32_t stat(const nfsgw::nlm::OriginReply<R>& r) {
    if (r.outcome != Outcome::Answered || !r.reply) return 999;
    return static_cast<std::uint32_t>(r.reply->stat);
  }
  Loop& loop_;
  nfsgw::upstream::OriginNlm nlm_;
};

/// A client of the origin. Its caller name must resolve: ganesha's NLM has the
/// host's statd monitor it (SM_MON) and refuses the lock (or does not answer a
/// TEST) when statd cannot.
Owner origin_client() { return Owner{"localhost", "b-owner", 22}; }

constexpr std::uint32_t kGranted = 0, kDenied = 1, kBlocked = 3, kStaleFh = 7;

/// Whether a process of this host sees a write lock on the range of the origin's
/// file: ganesha's VFS FSAL holds NLM locks as real locks on it.
bool locked_at_origin(const std::string& path, off_t start, off_t len) {
  const int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) return false;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  const bool locked = ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  ::close(fd);
  return locked;
}

/// The file's handle on a server (`nfs_port`, `mount_port`, export `path`).
Handle handle_of(std::uint16_t nfs_port, std::uint16_t mount_port, const std::string& path, const std::string& name) {
  RawMount m = mount_root(mount_port, path);
  EXPECT_TRUE(m.transport_ok && m.status == 0) << m.error;
  RawNfsConnection c;
  EXPECT_TRUE(c.connect(nfs_port, kNfsProgram, 3)) << c.error();
  RawLookup l = c.lookup(m.root, name);
  EXPECT_TRUE(l.transport_ok && l.status == 0) << l.error << " status " << l.status;
  return l.handle;
}

class NlmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("nlm");
    GatewayConfig cfg;
    cfg.port = kNlmGatewayPort;
    cfg.origin_url = shared_origin().url();
    cfg.server_extra = {{"nlm_port", std::to_string(kNlmGatewayNlmPort)},
                        {"nlm_grace", "\"0\""},
                        {"nlm_retry_interval", "\"200ms\""}};
    cfg.export_extra = {{"origin_nlm_port", std::to_string(kNlmOriginPort)}};
    gw_ = new Gateway(cfg, dir_->path());
    gw_->start();
    ASSERT_TRUE(wait_for_port(kNlmGatewayNlmPort, 30000)) << gw_->log();
  }
  static void TearDownTestSuite() {
    if (gw_) gw_->stop();
    delete gw_;
    gw_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  /// A file on the origin, with its gateway handle and origin handle.
  struct File {
    std::string path;
    Handle via_gw, at_origin;
  };
  static File make(const std::string& name) {
    File f;
    f.path = shared_origin().export_dir() + "/" + name;
    std::ofstream(f.path) << "locked content\n";
    ::chmod(f.path.c_str(), 0666);
    f.via_gw = handle_of(gw_->port(), gw_->port(), "/export", name);
    f.at_origin = handle_of(shared_origin().nfs_port(), shared_origin().mount_port(), shared_origin().export_dir(), name);
    return f;
  }
  static TempDir* dir_;
  static Gateway* gw_;
};
TempDir* NlmTest::dir_ = nullptr;
Gateway* NlmTest::gw_ = nullptr;

TEST_F(NlmTest, ALockThroughNfsgwIsHeldAtTheOriginAndTheOtherWayRound) {
  INTEG_REQUIRE_NFSGW();
  const File f = make("both_ways");
  Loop loop;
  Client via_gw(loop, kNlmGatewayNlmPort), direct(loop, kNlmOriginPort);
  const Owner a{"client-a", "a-owner", 11}, c{"client-c", "c-owner", 33};
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
  const Owner a{"client-a", "a-owner", 11};
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
  const Owner a{"client-a", "a-owner", 11};
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

}  // namespace
}  // namespace nlm_test
