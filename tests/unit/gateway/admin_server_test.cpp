// AdminServer over a real Unix socket in a temporary folder, with a fake gateway
// behind it: round trips through the client and the CLI, the socket file's mode,
// life cycle and stale files, bad requests, limits, and commands running off the
// io thread.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <utility>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

#include "gateway/cli/admin_cli.h"
#include "gateway/admin/admin_client.h"
#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/admin_server.h"
#include "gateway/admin/flush_wire.h"
#include "gateway/cli/flush_cli.h"
#include "tests/support/waiting.h"

namespace nfsgw::admin {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct Invalidation {
  std::string export_path;
  std::string subpath;
  bool recursive = false;
};

class FakeCommands : public AdminCommands {
 public:
  ~FakeCommands() override {
    finish_flush();
    if (flush_thread_.joinable()) flush_thread_.join();
  }

  /// "/ex port": 2 files, 4 KiB left, 1 KiB flushed until finish_flush(), then
  /// done; "/ex port/deep": fails at once with 1 file left; others: done at once.
  void flush(const std::string& export_path, const std::string& subpath,
             std::shared_ptr<writeback::FlushProgress> progress,
             std::function<void(writeback::FlushOutcome)> done) override {
    if (export_path == "/unknown") throw std::invalid_argument("no export /unknown; exports: /ex port");
    {
      std::lock_guard lock(mu_);
      flushes_.push_back({export_path, subpath, false});
    }
    if (export_path == "/ex port/deep") {
      progress->files_left = 1;
      progress->bytes_left = 2048;
      done({false, "the origin answered NFS3ERR_ROFS"});
      return;
    }
    if (export_path != "/ex port") {
      done({true, "nothing dirty"});
      return;
    }
    progress->files_left = 2;
    progress->bytes_left = 4096;
    progress->bytes_flushed = 1024;
    flush_thread_ = std::thread([this, progress, done = std::move(done)] {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return flush_finished_; });
      }
      progress->files_left = 0;
      progress->bytes_left = 0;
      progress->bytes_flushed = 5120;
      done({true, "2 files committed"});
    });
  }
  void finish_flush() {
    {
      std::lock_guard lock(mu_);
      flush_finished_ = true;
    }
    cv_.notify_all();
  }
  std::vector<Invalidation> flushes() {
    std::lock_guard lock(mu_);
    return flushes_;
  }

  stats::Report report() override {
    std::unique_lock lock(mu_);
    threads_.push_back(std::this_thread::get_id());
    ++entered_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !gated_; });
    stats::Report r;
    metacache::ExportReport e;
    e.path = "/export";
    e.cache_enabled = true;
    e.consistency = "ttl";
    e.procs[static_cast<std::size_t>(nfs3::Proc::Getattr)] = {10, 9, 1, 0, 1};
    r.exports.push_back({e});
    r.store.tables.push_back({"attr", 1, 100, 2, 200});
    return r;
  }

  std::string invalidate(const std::string& export_path, const std::string& subpath,
                         bool recursive) override {
    std::lock_guard lock(mu_);
    threads_.push_back(std::this_thread::get_id());
    calls_.push_back({export_path, subpath, recursive});
    if (subpath == "/missing") throw std::invalid_argument("no cached entry for " + export_path + subpath);
    if (subpath == "/boom") throw std::runtime_error("disk on fire");
    return "dropped 3 entries under " + export_path + subpath;
  }

  std::string reload(const std::string& config_path) override {
    std::lock_guard lock(mu_);
    threads_.push_back(std::this_thread::get_id());
    reloads_.push_back(config_path);
    if (refuse_reload_) throw std::invalid_argument("invalid configuration: bad file (the running configuration is kept)");
    return "applied: export /ex port: dir_ttl: \"30s\" -> \"1s\"\nneeds a restart: [server] threads: 4 -> 8\n";
  }
  std::vector<std::string> reloads() {
    std::lock_guard lock(mu_);
    return reloads_;
  }
  void refuse_reload() {
    std::lock_guard lock(mu_);
    refuse_reload_ = true;
  }

  void gate() {
    std::lock_guard lock(mu_);
    gated_ = true;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      gated_ = false;
    }
    cv_.notify_all();
  }
  bool wait_entered(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 5s, [&] { return entered_ >= n; });
  }
  std::vector<std::thread::id> threads() {
    std::lock_guard lock(mu_);
    return threads_;
  }
  std::vector<Invalidation> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool gated_ = false;
  int entered_ = 0;
  std::vector<std::thread::id> threads_;
  std::vector<Invalidation> calls_;
  std::vector<std::string> reloads_;
  bool refuse_reload_ = false;
  std::vector<Invalidation> flushes_;  // export and subpath asked for
  bool flush_finished_ = false;
  std::thread flush_thread_;
};

struct Reply {
  int code = -1;
  std::string out;
  std::string err;
};

/// Connects, sends `bytes` (then half-closes when asked), and reads to the end.
std::string raw_exchange(const std::string& path, const std::string& bytes, bool half_close = false) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("connect " + path + ": " + std::strerror(errno));
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  // The server may answer and close before reading everything: ignore send errors.
  if (!bytes.empty()) (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (half_close) ::shutdown(fd, SHUT_WR);
  std::string reply;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;  // EOF, or ECONNRESET after the reply
    reply.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return reply;
}

/// A connected socket that sends nothing until the test says so.
class IdleClient {
 public:
  explicit IdleClient(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  }
  ~IdleClient() { ::close(fd_); }

 private:
  int fd_;
};

/// "" when `path` accepts a connection, else the error.
std::string connect_error(const std::string& path) {
  try {
    IdleClient probe(path);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

class AdminServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (std::filesystem::temp_directory_path() / "nfsgw-admin-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = admin_socket_path(dir_);
    io_thread_ = std::thread([this] { io_.run(); });
    io_thread_id_ = io_thread_.get_id();
  }

  void TearDown() override {
    server_.reset();
    work_.reset();
    io_.stop();
    io_thread_.join();
    std::filesystem::remove_all(dir_);
  }

  static AdminLimits fast_limits() {
    AdminLimits l;
    l.io_timeout = 300ms;
    return l;
  }

  AdminServer& start_server(AdminLimits limits = fast_limits()) {
    server_ = std::make_unique<AdminServer>(io_, path_, fake_, limits);
    server_->start();
    return *server_;
  }

  Reply ask(const Request& r) { return ask_line(format_request(r)); }
  Reply ask_line(const std::string& line) {
    std::ostringstream out, err;
    Reply reply;
    reply.code = send_admin_request(path_, line, out, err, 10s);
    reply.out = out.str();
    reply.err = err.str();
    return reply;
  }

  Reply cli(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream out, err;
    Reply reply;
    reply.code = admin_main(static_cast<int>(argv.size()), argv.data(), out, err);
    reply.out = out.str();
    reply.err = err.str();
    return reply;
  }

  std::string write_config() {
    const std::string cfg = dir_ + "/nfsgw.toml";
    std::ofstream f(cfg);
    f << "[cache]\ndir = \"" << dir_ << "\"\n\n"
      << "[[export]]\npath = \"/ex port\"\norigin = \"nfs://filer/vol\"\n\n"
      << "[[export]]\npath = \"/ex port/deep\"\norigin = \"nfs://filer/vol2\"\n";
    return cfg;
  }

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{io_.get_executor()};
  std::thread io_thread_;
  std::thread::id io_thread_id_;
  std::string dir_;
  std::string path_;
  FakeCommands fake_;
  std::unique_ptr<AdminServer> server_;
};

TEST_F(AdminServerTest, StatsRoundTripRunsOffTheIoThread) {
  start_server();
  const Reply r = ask(StatsRequest{});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("export /export  cache on  consistency ttl"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GETATTR"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("90.0%"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nok\n"), std::string::npos) << "the status line is not body:\n" << r.out;
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.err, "");

  const Reply j = ask(StatsRequest{true});
  EXPECT_EQ(j.code, kExitOk) << j.err;
  EXPECT_EQ(j.out.rfind("{\"exports\":[{\"path\":\"/export\"", 0), 0u) << j.out;

  const auto threads = fake_.threads();
  ASSERT_EQ(threads.size(), 2u);
  for (const auto& id : threads) {
    EXPECT_NE(id, io_thread_id_) << "a command ran on the io_context thread";
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST_F(AdminServerTest, SocketFileIsPrivateAndRemovedOnStop) {
  start_server();
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u) << std::oct << (st.st_mode & 07777);

  server_->stop();
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(path_)));
  const Reply r = ask(StatsRequest{});
  EXPECT_EQ(r.code, kExitUnreachable);
  EXPECT_NE(r.err.find("nfsgw is not running? cannot connect to " + path_ + ": No such file or directory"),
            std::string::npos)
      << r.err;
}

TEST_F(AdminServerTest, SlowCommandDoesNotBlockTheIoThread) {
  start_server();
  fake_.gate();
  auto slow = std::async(std::launch::async, [this] { return ask(StatsRequest{}); });
  ASSERT_TRUE(fake_.wait_entered(1));
  // While the command is blocked on the worker, the io thread still answers.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(raw_exchange(path_, "v1 nonsense\n").rfind("error unknown command 'nonsense'", 0), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(slow.wait_for(0s), std::future_status::timeout);
  fake_.release();
  const Reply r = slow.get();
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST_F(AdminServerTest, InvalidateArgumentsArriveDecoded) {
  start_server();
  const Reply r = ask(InvalidateRequest{"/ex port", "/a b/new\nline/100%", true});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "dropped 3 entries under /ex port/a b/new\\x0Aline/100%\n");
  const Reply whole = ask(InvalidateRequest{"/export", "", false});
  EXPECT_EQ(whole.code, kExitOk) << whole.err;

  const auto calls = fake_.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].export_path, "/ex port");
  EXPECT_EQ(calls[0].subpath, "/a b/new\nline/100%");
  EXPECT_TRUE(calls[0].recursive);
  EXPECT_EQ(calls[1].export_path, "/export");
  EXPECT_EQ(calls[1].subpath, "");
  EXPECT_FALSE(calls[1].recursive);
  for (const auto& id : fake_.threads()) EXPECT_NE(id, io_thread_id_);
}

TEST_F(AdminServerTest, CliSplitsTheTargetAgainstTheConfiguredExports) {
  start_server();
  const std::string cfg = write_config();
  Reply r = cli({"nfsgw", "invalidate", "--config", cfg, "/ex port/a b//c d/", "--recursive"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "dropped 3 entries under /ex port/a b/c d\n");
  r = cli({"nfsgw", "invalidate", "--config", cfg, "/ex port/deep/x"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  r = cli({"nfsgw", "invalidate", "--config", cfg, "/ex port"});
  EXPECT_EQ(r.code, kExitOk) << r.err;

  r = cli({"nfsgw", "invalidate", "--config", cfg, "/nope/x"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("/ex port, /ex port/deep"), std::string::npos) << r.err;

  const auto calls = fake_.calls();
  ASSERT_EQ(calls.size(), 3u) << "the unknown export must not reach nfsgw";
  EXPECT_EQ(calls[0].export_path, "/ex port");
  EXPECT_EQ(calls[0].subpath, "/a b/c d");
  EXPECT_TRUE(calls[0].recursive);
  EXPECT_EQ(calls[1].export_path, "/ex port/deep");
  EXPECT_EQ(calls[1].subpath, "/x");
  EXPECT_FALSE(calls[1].recursive);
  EXPECT_EQ(calls[2].export_path, "/ex port");
  EXPECT_EQ(calls[2].subpath, "");

  r = cli({"nfsgw", "stats", "--config", cfg, "--json"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("{\"exports\":", 0), 0u) << r.out;

  EXPECT_EQ(cli({"nfsgw", "stats"}).code, 2);  // usage
  EXPECT_EQ(cli({"nfsgw", "invalidate", "--config", cfg}).code, 2);
  EXPECT_EQ(cli({"nfsgw", "stats", "--config", dir_ + "/missing.toml"}).code, kExitError);
}

TEST_F(AdminServerTest, FlushStreamsProgressUntilDoneThenTheSummary) {
  AdminLimits limits = fast_limits();
  limits.progress_interval = 5ms;
  start_server(limits);
  std::vector<std::string> lines;
  std::ostringstream err;
  const int code = stream_admin_request(
      path_, format_request(FlushRequest{"/ex port", "/a"}),
      [&](std::string_view line) {
        lines.emplace_back(line);
        // What is left is shown while the flush runs; then it may end.
        if (parse_flush_progress(line)) fake_.finish_flush();
      },
      err, 10s);
  EXPECT_EQ(code, kExitOk) << err.str();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "progress files_left=2 bytes_left=4096 bytes_flushed=1024");
  const auto summary = parse_flush_summary(lines[lines.size() - 2]);
  ASSERT_TRUE(summary) << lines[lines.size() - 2];
  EXPECT_EQ(summary->figures, (FlushFigures{0, 0, 5120}));
  EXPECT_EQ(lines.back(), "flushed 2 files committed");
  ASSERT_EQ(fake_.flushes().size(), 1u);
  EXPECT_EQ(fake_.flushes()[0].export_path, "/ex port");
  EXPECT_EQ(fake_.flushes()[0].subpath, "/a");
}

TEST_F(AdminServerTest, FlushCliPrintsTheOutcomeAndExitsWithIt) {
  start_server();
  const std::string cfg = write_config();
  // Every export: the gateway's message on the one line on stdout.
  Reply r = cli({"nfsgw", "flush", "--config", cfg});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("flushed every export: 0 B in ", 0), 0u) << r.out;
  EXPECT_TRUE(r.out.ends_with(" s; nothing dirty\n")) << r.out;
  // A failure: the message and what is still dirty, exit 1.
  r = cli({"nfsgw", "flush", "--config", cfg, "/ex port/deep"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("nfsgw: the origin answered NFS3ERR_ROFS\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nfsgw: /ex port/deep: 1 files (2.0 KiB) still dirty; 0 B flushed\n"), std::string::npos)
      << r.err;
  // An unknown export is refused by the CLI, from the configuration...
  r = cli({"nfsgw", "flush", "--config", cfg, "/nope"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("/ex port, /ex port/deep"), std::string::npos) << r.err;
  // ...and by the gateway, when asked directly.
  const Reply direct = ask(FlushRequest{"/unknown", ""});
  EXPECT_EQ(direct.code, kExitError);
  EXPECT_EQ(direct.err, "nfsgw: no export /unknown; exports: /ex port\n");
  EXPECT_EQ(cli({"nfsgw", "flush"}).code, 2);  // usage
  EXPECT_EQ(cli({"nfsgw", "flush", "--config", cfg, "/ex port", "/ex port/deep"}).code, 2);
  const auto flushes = fake_.flushes();
  ASSERT_EQ(flushes.size(), 2u) << "the unknown exports reach no flush";
  EXPECT_EQ(flushes[0].export_path, "");
  EXPECT_EQ(flushes[1].export_path, "/ex port/deep");
  EXPECT_EQ(flushes[1].subpath, "");
}

TEST_F(AdminServerTest, ReloadSendsTheAbsolutePathAndPrintsTheAnswer) {
  start_server();
  const std::string cfg = write_config();
  Reply r = cli({"nfsgw", "reload", "--config", cfg});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "applied: export /ex port: dir_ttl: \"30s\" -> \"1s\"\nneeds a restart: [server] threads: 4 -> 8\n");
  ASSERT_EQ(fake_.reloads(), std::vector<std::string>{cfg});
  for (const auto& id : fake_.threads()) EXPECT_NE(id, io_thread_id_);

  fake_.refuse_reload();
  r = cli({"nfsgw", "reload", "--config", cfg});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("invalid configuration: bad file (the running configuration is kept)"), std::string::npos)
      << r.err;

  // A file the command itself cannot read never reaches nfsgw, and says why.
  std::ofstream(dir_ + "/bad.toml") << "[[export]]\npath = \"/x\"\norigin = \"nfs://f/x\"\nsquash = \"maybe\"\n";
  r = cli({"nfsgw", "reload", "--config", dir_ + "/bad.toml"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("invalid configuration: " + dir_ + "/bad.toml:4: export[0].squash"), std::string::npos) << r.err;
  EXPECT_EQ(fake_.reloads().size(), 2u);
  EXPECT_EQ(cli({"nfsgw", "reload"}).code, 2);  // usage
  EXPECT_EQ(cli({"nfsgw", "reload", "--config", cfg, "extra"}).code, 2);
}

TEST_F(AdminServerTest, CommandErrorsBecomeErrorLines) {
  start_server();
  Reply r = ask(InvalidateRequest{"/export", "/missing", false});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "nfsgw: no cached entry for /export/missing\n");
  EXPECT_EQ(raw_exchange(path_, format_request(InvalidateRequest{"/export", "/missing", false})),
            "error no cached entry for /export/missing\n");

  r = ask(InvalidateRequest{"/export", "/boom", true});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("internal error: disk on fire"), std::string::npos) << r.err;
  // The server goes on.
  EXPECT_EQ(ask(StatsRequest{}).code, kExitOk);
}

TEST_F(AdminServerTest, GarbageAndOversizedRequestsAreAnsweredAndTheServerGoesOn) {
  start_server();
  EXPECT_EQ(raw_exchange(path_, "hello\n").rfind("error bad request", 0), 0u);
  EXPECT_EQ(raw_exchange(path_, "v9 stats\n").rfind("error unsupported protocol version 'v9'", 0), 0u);
  EXPECT_EQ(raw_exchange(path_, "v1 invalidate /export /a%zz 0\n").rfind("error bad percent-encoding", 0), 0u);
  EXPECT_EQ(raw_exchange(path_, std::string("\x00\xff\x01\n", 4)).rfind("error bad request", 0), 0u);
  const std::string big(kMaxRequestBytes + 100, 'a');
  EXPECT_EQ(raw_exchange(path_, big), "error request line longer than 8192 bytes\n");
  EXPECT_EQ(raw_exchange(path_, "v1 stats " + big + "\n"), "error request line longer than 8192 bytes\n");
  // Empty connection: closed without a word.
  EXPECT_EQ(raw_exchange(path_, "", /*half_close=*/true), "");
  // A request ended by end-of-file rather than '\n' is served.
  const std::string eof_ended = raw_exchange(path_, "v1 stats", /*half_close=*/true);
  EXPECT_GE(eof_ended.size(), 3u);
  EXPECT_EQ(eof_ended.substr(eof_ended.size() - 3), "ok\n") << eof_ended;
  // A broken reply is not an `ok` for the client.
  EXPECT_EQ(ask_line("v1 stats\n").code, kExitOk);
  EXPECT_EQ(ask_line("v1 stats json\n").code, kExitOk);
  EXPECT_EQ(ask_line("v1 stats yaml\n").code, kExitError);
}

TEST_F(AdminServerTest, SilentClientTimesOut) {
  start_server();  // io_timeout 300 ms
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(raw_exchange(path_, "v1 sta"), "error timed out waiting for the request line\n");
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 4s);
  EXPECT_EQ(ask(StatsRequest{}).code, kExitOk);
}

TEST_F(AdminServerTest, ConnectionsBeyondTheLimitAreTurnedAway) {
  AdminLimits limits = fast_limits();
  limits.io_timeout = 5s;
  limits.max_connections = 2;
  start_server(limits);
  {
    IdleClient a(path_), b(path_);
    EXPECT_EQ(raw_exchange(path_, "v1 stats\n"), "error busy: at most 2 admin connections at a time\n");
  }
  // The idle clients went away: their slots come back.
  EXPECT_TRUE(test::wait_until([&] { return ask(StatsRequest{}).code == kExitOk; }, 3s,
                               "a command answered once the idle clients' slots came back"));
}

TEST_F(AdminServerTest, StaleSocketFileIsReplaced) {
  // A socket file nobody listens on, as a crashed nfsgw leaves behind.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  struct stat before {};
  ASSERT_EQ(::lstat(path_.c_str(), &before), 0);
  ASSERT_TRUE(S_ISSOCK(before.st_mode));
  EXPECT_NE(connect_error(path_), "") << "the stale socket must refuse connections";

  start_server();
  struct stat after {};
  ASSERT_EQ(::lstat(path_.c_str(), &after), 0);
  // The old file had the umask's mode; the new one is the server's.
  EXPECT_NE(before.st_mode & 07777, 0600u);
  EXPECT_EQ(after.st_mode & 07777, 0600u);
  EXPECT_EQ(ask(StatsRequest{}).code, kExitOk);
}

TEST_F(AdminServerTest, SecondServerOnALiveSocketIsRefused) {
  start_server();
  FakeCommands other;
  {
    AdminServer second(io_, path_, other);
    try {
      second.start();
      FAIL() << "a second server took over a live admin socket";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("another nfsgw is already serving"), std::string::npos) << e.what();
    }
  }  // its destructor must not remove the first server's socket
  EXPECT_EQ(ask(StatsRequest{}).code, kExitOk);
  EXPECT_EQ(other.threads().size(), 0u);
}

TEST_F(AdminServerTest, SomethingElseAtThePathIsLeftAlone) {
  { std::ofstream(path_) << "precious"; }
  AdminServer server(io_, path_, fake_);
  EXPECT_THROW(server.start(), std::runtime_error);
  std::ifstream in(path_);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

TEST_F(AdminServerTest, StopWaitsForTheRunningCommandAndRefusesQueuedOnes) {
  start_server();
  fake_.gate();
  auto first = std::async(std::launch::async, [this] { return ask(StatsRequest{}); });
  ASSERT_TRUE(fake_.wait_entered(1));
  auto queued = std::async(std::launch::async, [this] { return ask(InvalidateRequest{"/export", "/q", false}); });
  ASSERT_TRUE(test::wait_until([&] { return server_->queued_commands() == 1; }, 5s,
                               "the second request in the worker's queue"));
  auto stopper = std::async(std::launch::async, [this] { server_->stop(); });
  EXPECT_EQ(stopper.wait_for(200ms), std::future_status::timeout) << "stop() did not wait for the command";
  fake_.release();
  stopper.get();
  first.get();  // its connection was closed by stop(): any outcome but a hang
  const Reply q = queued.get();
  EXPECT_NE(q.code, kExitOk);
  EXPECT_TRUE(fake_.calls().empty()) << "a queued command ran after stop()";
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(path_)));
}

}  // namespace
}  // namespace nfsgw::admin
