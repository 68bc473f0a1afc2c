// `nfsgw warm` and `nfsgw exports` over a real admin socket, with a fake gateway
// whose warm counts on a thread of its own: the streamed progress, failures and
// summary as the CLI shows them, its exit codes, the manifest reaching the
// gateway, and a warm cancelled when its client goes away or nfsgw stops.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <utility>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

#include "gateway/cli/admin_cli.h"
#include "gateway/admin/admin_client.h"
#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/admin_server.h"
#include "gateway/cli/warm_cli.h"
#include "tests/support/waiting.h"

namespace nfsgw::admin {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// A warm that counts 10 entries every 5 ms on its own thread, until it has
/// counted `entries` (then it ends) or is cancelled.
class FakeWarmCommands : public AdminCommands {
 public:
  ~FakeWarmCommands() override { join(); }

  stats::Report report() override { return {}; }
  std::string invalidate(const std::string&, const std::string&, bool) override { return ""; }
  std::string exports_table() override { return "export /ex port\n  origin        nfs://filer/vol\n"; }

  void warm(const WarmRequest& request, std::shared_ptr<warm::WarmProgress> progress,
            std::function<void(warm::WarmOutcome)> done) override {
    if (request.export_path == "/refused") throw std::invalid_argument("export /refused keeps no file data");
    {
      std::lock_guard lock(mu_);
      requests_.push_back(request);
      progress_ = progress;
    }
    changed_.notify_all();
    join();
    thread_ = std::thread([this, progress, done = std::move(done), fails = fail_paths_] {
      const auto t0 = std::chrono::steady_clock::now();
      test::Pacer pace(5ms);  // a warm that takes a while, so that its progress shows
      warm::WarmProgress::add(progress->paths_total, 1);
      for (const auto& p : fails) progress->fail(p, "NOENT at LOOKUP");
      while (!progress->cancelled() && progress->entries.load() < entries_) {
        warm::WarmProgress::add(progress->entries, 10);
        pace.next();
      }
      if (!progress->cancelled()) warm::WarmProgress::add(progress->paths_done, 1);
      warm::WarmOutcome o;
      o.figures = progress->figures();
      o.origin_calls = 42;
      o.cancelled = progress->cancelled();
      o.ms = static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
      {
        std::lock_guard lock(mu_);
        ended_ = true;
      }
      changed_.notify_all();
      done(o);
    });
  }

  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::vector<WarmRequest> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::shared_ptr<warm::WarmProgress> progress() {
    std::lock_guard lock(mu_);
    return progress_;
  }
  /// Waits until a warm has begun (has ended); false after `limit`.
  bool wait_begun(std::chrono::seconds limit) { return wait(limit, [&] { return progress_ != nullptr; }); }
  bool wait_ended(std::chrono::seconds limit) { return wait(limit, [&] { return ended_.load(); }); }

  std::uint64_t entries_ = 300;
  std::vector<std::string> fail_paths_;
  std::atomic<bool> ended_{false};

 private:
  template <typename Done>
  bool wait(std::chrono::seconds limit, Done done) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, limit, done);
  }

  std::mutex mu_;
  std::condition_variable changed_;  // a warm began or ended
  std::vector<WarmRequest> requests_;
  std::shared_ptr<warm::WarmProgress> progress_;
  std::thread thread_;
};

struct CliRun {
  int code = -1;
  std::string out, err;
};

class AdminWarmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (std::filesystem::temp_directory_path() / "nfsgw-warm-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    io_thread_ = std::thread([this] { io_.run(); });
    AdminLimits l;
    l.io_timeout = 2s;
    l.progress_interval = 20ms;
    server_ = std::make_unique<AdminServer>(io_, admin_socket_path(dir_), fake_, l);
    server_->start();
    config_ = dir_ + "/nfsgw.toml";
    std::ofstream f(config_);
    f << "[cache]\ndir = \"" << dir_ << "\"\n\n[[export]]\npath = \"/ex port\"\norigin = \"nfs://filer/vol\"\n\n"
      << "[[export]]\npath = \"/refused\"\norigin = \"nfs://filer/vol2\"\n";
  }

  void TearDown() override {
    server_.reset();
    fake_.join();
    work_.reset();
    io_.stop();
    io_thread_.join();
    std::filesystem::remove_all(dir_);
  }

  CliRun warm(std::vector<std::string> args, bool tty = false) {
    args.insert(args.begin(), {"--config", config_});
    std::ostringstream out, err;
    warm::WarmTerminal term;
    term.is_tty = tty;
    term.width = 100;
    term.log_interval_s = 0;  // every progress line
    CliRun r;
    r.code = warm::warm_main(args, out, err, term);
    r.out = out.str();
    r.err = err.str();
    return r;
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{io_.get_executor()};
  std::thread io_thread_;
  std::string dir_, config_;
  FakeWarmCommands fake_;
  std::unique_ptr<AdminServer> server_;
};

TEST_F(AdminWarmTest, WarmStreamsProgressThenTheSummaryAndExitsZero) {
  const CliRun r = warm({"/ex port/shots", "--depth", "2", "--data", "--parallel", "8"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("warmed /ex port/shots: 300 entries (0 directories listed), 0 B of file data in ", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("origin: 42 metadata calls"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("warm: "), std::string::npos) << "progress lines on stderr:\n" << r.err;
  const auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].export_path, "/ex port");
  EXPECT_EQ(reqs[0].subpath, "/shots");
  EXPECT_EQ(reqs[0].depth, 2u);
  EXPECT_TRUE(reqs[0].data);
  EXPECT_EQ(reqs[0].parallel, 8u);
  EXPECT_TRUE(reqs[0].manifest.empty());
}

TEST_F(AdminWarmTest, OnATerminalTheBarIsRedrawnInPlace) {
  const CliRun r = warm({"/ex port"}, /*tty=*/true);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("\r"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\x1b[K"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("warm: "), std::string::npos) << "no log lines on a terminal:\n" << r.err;
  EXPECT_EQ(r.err.back(), '\n') << "the bar's line is ended";
}

TEST_F(AdminWarmTest, ManifestPathsReachTheGateway) {
  const std::string list = dir_ + "/list.txt";
  {
    std::ofstream f(list);
    f << "# job 7\nshots/a\n/ex port/shots/b c\n\nshots/a\n";
  }
  const CliRun r = warm({"/ex port", "--manifest", list});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const auto reqs = fake_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].manifest, (std::vector<std::string>{"/shots/a", "/shots/b c"}));
  EXPECT_EQ(reqs[0].manifest_count, 2u);
  EXPECT_NE(r.out.find("warmed /ex port (2 manifest paths): "), std::string::npos) << r.out;
}

TEST_F(AdminWarmTest, FailedPathsAreNamedAndTheExitIsOne) {
  fake_.fail_paths_ = {"/ex port/x", "/ex port/y z"};
  const CliRun r = warm({"/ex port"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("nfsgw: failed: /ex port/x: NOENT at LOOKUP\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nfsgw: failed: /ex port/y z: NOENT at LOOKUP\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nfsgw: 2 paths failed\n"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("2 paths failed"), std::string::npos) << r.out;
}

TEST_F(AdminWarmTest, RefusedRequestsAndBadInputSayWhy) {
  CliRun r = warm({"/refused", "--data"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, "nfsgw: export /refused keeps no file data\n");

  r = warm({"/elsewhere"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, "nfsgw: '/elsewhere' is not under any export; the exports are: /ex port, /refused\n");

  r = warm({"/ex port", "--manifest", dir_ + "/missing.txt"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("cannot read the manifest"), std::string::npos) << r.err;

  r = warm({"/ex port", "--parallel", "0"});
  EXPECT_EQ(r.code, kExitUnreachable);
  EXPECT_EQ(r.err.rfind("nfsgw: --parallel must be 1..256, not 0\nusage: nfsgw warm --config FILE", 0), 0u) << r.err;
  EXPECT_TRUE(fake_.requests().empty()) << "nothing was sent for refused input";
}

TEST_F(AdminWarmTest, GatewayNotRunningExitsTwo) {
  server_->stop();
  const CliRun r = warm({"/ex port"});
  EXPECT_EQ(r.code, kExitUnreachable);
  EXPECT_NE(r.err.find("nfsgw is not running? cannot connect to"), std::string::npos) << r.err;
}

/// Connects, sends a warm request, reads until `lines` lines came, closes.
std::string read_then_close(const std::string& path, std::size_t lines) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string req = format_request(WarmRequest{"/ex port", "", std::nullopt, false, 16, {}, 0});
  (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string got;
  char buf[1024];
  while (static_cast<std::size_t>(std::count(got.begin(), got.end(), '\n')) < lines) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return got;
}

TEST_F(AdminWarmTest, AClientThatGoesAwayCancelsTheWarm) {
  fake_.entries_ = 100'000'000;  // would run for hours
  const std::string got = read_then_close(admin_socket_path(dir_), 2);
  EXPECT_EQ(got.rfind("progress entries=", 0), 0u) << got;
  ASSERT_TRUE(fake_.wait_ended(5s)) << "the warm went on after its client left";
  EXPECT_TRUE(fake_.progress()->cancelled());
}

TEST_F(AdminWarmTest, StoppingNfsgwCancelsTheWarm) {
  fake_.entries_ = 100'000'000;
  std::thread client([&] { (void)read_then_close(admin_socket_path(dir_), 1000); });
  ASSERT_TRUE(fake_.wait_begun(5s));
  server_->stop();
  EXPECT_TRUE(fake_.wait_ended(5s));
  EXPECT_TRUE(fake_.progress()->cancelled());
  client.join();
}

TEST_F(AdminWarmTest, ManifestCutShortIsRefused) {
  const std::string got = [&] {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = admin_socket_path(dir_);
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return std::string("connect");
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const std::string req = "v1 warm /ex%20port / all 0 16 3\n/a\n/b\n";
    (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);
    std::string reply;
    char buf[1024];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) reply.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    return reply;
  }();
  EXPECT_EQ(got, "error the request ended before manifest line 3 of 3\n");
  EXPECT_TRUE(fake_.requests().empty());
}

TEST_F(AdminWarmTest, ExportsPrintsTheGatewaysTable) {
  std::vector<std::string> args = {"nfsgw", "exports", "--config", config_};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code = admin_main(static_cast<int>(argv.size()), argv.data(), out, err);
  EXPECT_EQ(code, kExitOk) << err.str();
  EXPECT_EQ(out.str(), "export /ex port\n  origin        nfs://filer/vol\n");
  EXPECT_TRUE(is_admin_subcommand("exports"));
  EXPECT_TRUE(is_admin_subcommand("warm"));
}

}  // namespace
}  // namespace nfsgw::admin
