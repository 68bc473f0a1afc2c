// End-to-end: wan-emu runs as a subprocess in front of a real nfs-ganesha origin
// (scripts/origin-ganesha.sh), driven by a real libnfs client (wan-emu-probe's
// NfsProbe). Each test has its own origin and relay ports (22010-22097, wanemu's
// range) and state directory, so the tests can run in parallel under ctest.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "tests/wan-emu/subprocess.h"
#include "tools/wan-emu/control_client.h"
#include "tools/wan-emu/options.h"
#include "tools/wan-emu/probe/nfs_probe.h"

namespace nfsgw::wanemu {
namespace {

using namespace std::chrono_literals;
using probe::NfsProbe;
using probe::Proc;
using testing::Subprocess;

const std::string kHost = "127.0.0.1";

/// Reads the number after the sequence of keys `path` in the stats JSON: each key
/// is searched after the previous one, and all but the last must open an object
/// (so "down" finds the direction object, not "delay_ms":{"down":...}). -1 when a
/// key is missing.
long long json_field(const std::string& json, std::initializer_list<std::string> path) {
  std::size_t pos = 0, i = 0;
  for (const std::string& key : path) {
    std::string needle = "\"" + key + "\":" + (++i < path.size() ? "{" : "");
    pos = json.find(needle, pos);
    if (pos == std::string::npos) return -1;
    pos += needle.size();
  }
  return std::strtoll(json.c_str() + pos, nullptr, 10);
}

/// A loopback nfs-ganesha for one test, stopped at the end of it.
class Origin {
 public:
  Origin(const std::string& name, int nfs_port, int mount_port) : nfs_port_(nfs_port), mount_port_(mount_port) {
    dir_ = std::filesystem::temp_directory_path() / ("wanemu-e2e-" + name + "-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "export");
    std::ofstream(dir_ / "export" / "hello.txt") << "hello\n";
    started_ = testing::run_shell(std::string(WANEMU_ORIGIN_SCRIPT) + " start " + (dir_ / "state").string() + " " +
                                  export_dir() + " " + std::to_string(nfs_port) + " " + std::to_string(mount_port) +
                                  " >/dev/null") == 0;
  }
  ~Origin() {
    testing::run_shell(std::string(WANEMU_ORIGIN_SCRIPT) + " stop " + (dir_ / "state").string());
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool started() const { return started_; }
  std::string export_dir() const { return (dir_ / "export").string(); }
  int nfs_port() const { return nfs_port_; }
  int mount_port() const { return mount_port_; }
  std::filesystem::path dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  int nfs_port_, mount_port_;
  bool started_ = false;
};

std::string ep(int port) { return kHost + ":" + std::to_string(port); }

/// wan-emu relaying nfs_port/mount_port of an origin at base+1/base+2, control at base.
std::unique_ptr<Subprocess> start_emu(int base, int nfs_target, int mount_target, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {WANEMU_BINARY, "--pair", ep(base + 1) + "=" + ep(nfs_target),
                                   "--pair", ep(base + 2) + "=" + ep(mount_target), "--control", ep(base)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<Subprocess>(argv, "wan-emu ready");
}

ControlAnswer ctl(int base, const std::string& cmd) {
  return send_control_command(parse_endpoint(ep(base)), cmd, 5s);
}

TEST(WanEmuE2E, CountsExactlyTheCallsAndRepliesOfEachProcedure) {
  Origin origin("count", 22090, 22091);
  ASSERT_TRUE(origin.started());
  const int base = 22010;
  auto emu = start_emu(base, origin.nfs_port(), origin.mount_port());
  ASSERT_TRUE(emu->ready()) << emu->output();

  NfsProbe p;
  ASSERT_TRUE(p.mount(kHost, base + 2, origin.export_dir(), 10s)) << p.error();
  ASSERT_TRUE(p.connect(kHost, base + 1, 10s)) << p.error();
  auto nulls = p.run(Proc::Null, 500, 16, 30s);
  ASSERT_EQ(nulls.ok, 500u) << nulls.error;
  auto getattrs = p.run(Proc::Getattr, 37, 4, 30s);
  ASSERT_EQ(getattrs.ok, 37u) << getattrs.error;

  ControlAnswer s = ctl(base, "stats");
  ASSERT_TRUE(s.ok) << s.line;
  const std::string& j = s.line;
  EXPECT_EQ(json_field(j, {"procs", "100003:3:0", "calls"}), 500) << j;
  EXPECT_EQ(json_field(j, {"procs", "100003:3:0", "replies"}), 500) << j;
  EXPECT_EQ(json_field(j, {"procs", "100003:3:1", "calls"}), 37) << j;
  EXPECT_EQ(json_field(j, {"procs", "100003:3:1", "replies"}), 37) << j;
  EXPECT_EQ(json_field(j, {"procs", "100005:3:1", "calls"}), 1) << j;  // MOUNT3 MNT
  EXPECT_EQ(json_field(j, {"procs", "100005:3:1", "replies"}), 1) << j;
  EXPECT_EQ(json_field(j, {"up", "calls"}), 538) << j;
  EXPECT_EQ(json_field(j, {"down", "replies"}), 538) << j;
  EXPECT_EQ(json_field(j, {"down", "unmatched_replies"}), 0) << j;
  EXPECT_EQ(json_field(j, {"up", "unparsed_bytes"}), 0) << j;
  EXPECT_EQ(json_field(j, {"down", "unparsed_bytes"}), 0) << j;
  // A NULL call is at least 40 bytes + 4 of record mark; GETATTR replies carry fattr3.
  EXPECT_GE(json_field(j, {"up", "bytes"}), 538 * 44) << j;
  EXPECT_GE(json_field(j, {"down", "bytes"}), 538 * 28 + 37 * 84) << j;

  ASSERT_TRUE(ctl(base, "reset").ok);
  ControlAnswer after = ctl(base, "stats");
  EXPECT_EQ(json_field(after.line, {"up", "calls"}), 0) << after.line;
  EXPECT_EQ(after.line.find("100003:3:0"), std::string::npos) << after.line;
}

TEST(WanEmuE2E, DelayAddsToEveryRoundTripAndCanBeChangedAtRunTime) {
  Origin origin("delay", 22092, 22093);
  ASSERT_TRUE(origin.started());
  const int base = 22020;
  auto emu = start_emu(base, origin.nfs_port(), origin.mount_port(), {"--delay-ms", "50"});
  ASSERT_TRUE(emu->ready()) << emu->output();

  NfsProbe p;
  ASSERT_TRUE(p.connect(kHost, base + 1, 10s)) << p.error();
  // Sequential calls, then 200 in flight at once: each must take at least 2 x 50 ms.
  for (std::uint64_t in_flight : {1u, 200u}) {
    auto r = p.run(Proc::Null, in_flight == 1 ? 10 : 400, in_flight, 60s);
    ASSERT_EQ(r.ok, in_flight == 1 ? 10u : 400u) << r.error;
    EXPECT_GE(probe::quantile(r.rtt_ms, 0.0), 100.0);
    EXPECT_LT(probe::quantile(r.rtt_ms, 0.5), 100.0 + 2000.0);  // generous: a property, not a benchmark
  }

  ASSERT_TRUE(ctl(base, "delay 120 0").ok);  // asymmetric: only the call direction waits
  auto r = p.run(Proc::Null, 5, 1, 30s);
  ASSERT_EQ(r.ok, 5u) << r.error;
  EXPECT_GE(probe::quantile(r.rtt_ms, 0.0), 120.0);

  ASSERT_TRUE(ctl(base, "delay 0").ok);
  r = p.run(Proc::Null, 20, 1, 30s);
  ASSERT_EQ(r.ok, 20u) << r.error;
  EXPECT_LT(probe::quantile(r.rtt_ms, 0.5), 100.0);  // the delay is gone
  EXPECT_EQ(json_field(ctl(base, "stats").line, {"delay_ms", "up"}), 0);
}

TEST(WanEmuE2E, CutDropsConnectionsAndRestoreLetsNewOnesThrough) {
  Origin origin("cut", 22094, 22095);
  ASSERT_TRUE(origin.started());
  const int base = 22030;
  auto emu = start_emu(base, origin.nfs_port(), origin.mount_port());
  ASSERT_TRUE(emu->ready()) << emu->output();

  NfsProbe before;
  ASSERT_TRUE(before.connect(kHost, base + 1, 10s)) << before.error();
  ASSERT_EQ(before.run(Proc::Null, 3, 1, 10s).ok, 3u);

  ASSERT_TRUE(ctl(base, "cut").ok);
  // The established connection is gone: its next call does not complete.
  auto during = before.run(Proc::Null, 1, 1, 1500ms);
  EXPECT_EQ(during.ok, 0u);
  // A new connection is refused (accepted and closed): no call completes either.
  NfsProbe fresh;
  if (fresh.connect(kHost, base + 1, 2s)) {
    EXPECT_EQ(fresh.run(Proc::Null, 1, 1, 1500ms).ok, 0u);
  }
  ControlAnswer s = ctl(base, "stats");
  EXPECT_GE(json_field(s.line, {"connections", "refused"}), 1) << s.line;
  EXPECT_NE(s.line.find("\"cut\":true"), std::string::npos) << s.line;

  ASSERT_TRUE(ctl(base, "restore").ok);
  NfsProbe after;
  ASSERT_TRUE(after.connect(kHost, base + 1, 10s)) << after.error();
  auto r = after.run(Proc::Null, 10, 2, 10s);
  EXPECT_EQ(r.ok, 10u) << r.error;
}

/// A loopback TCP echo server on `port` serving one connection (for byte-exactness
/// checks with non-RPC bytes, which an NFS origin would reject).
class EchoServer {
 public:
  explicit EchoServer(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd_, 4) == 0;
    if (ok_) thread_ = std::thread([this] { serve(); });
  }
  ~EchoServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  bool ok() const { return ok_; }

 private:
  void serve() {
    int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char buf[16384];
    for (ssize_t n; (n = read(c, buf, sizeof buf)) > 0;)
      for (ssize_t off = 0; off < n;) {
        ssize_t w = write(c, buf + off, static_cast<std::size_t>(n - off));
        if (w <= 0) break;
        off += w;
      }
    close(c);
  }
  int fd_ = -1;
  bool ok_ = false;
  std::thread thread_;
};

int connect_to(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{30, 0};
  setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(s);
    return -1;
  }
  return s;
}

/// Sends `data` through the relay to the echo server and reads it all back.
std::vector<std::uint8_t> round_trip(int port, const std::vector<std::uint8_t>& data) {
  int s = connect_to(port);
  if (s < 0) return {};
  std::thread writer([&] {
    for (std::size_t off = 0; off < data.size();) {
      ssize_t w = write(s, data.data() + off, std::min<std::size_t>(data.size() - off, 10007));
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
    }
    shutdown(s, SHUT_WR);
  });
  std::vector<std::uint8_t> back;
  char buf[16384];
  for (ssize_t n; back.size() < data.size() && (n = read(s, buf, sizeof buf)) > 0;) back.insert(back.end(), buf, buf + n);
  writer.join();
  close(s);
  return back;
}

TEST(WanEmuE2E, NonRpcBytesPassThroughUnchangedAndAreCountedAsUnparsed) {
  const int base = 22040;
  EchoServer echo(22098);
  ASSERT_TRUE(echo.ok());
  auto emu = start_emu(base, 22098, 22099, {"--delay-ms", "5", "--bandwidth-kbps", "200000"});
  ASSERT_TRUE(emu->ready()) << emu->output();

  std::vector<std::uint8_t> data(2 << 20);
  std::uint32_t x = 7;
  for (auto& b : data) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  data[0] = 'G';  // an implausible record mark: the parser gives up at once
  auto t0 = std::chrono::steady_clock::now();
  auto back = round_trip(base + 1, data);
  auto elapsed = std::chrono::steady_clock::now() - t0;
  ASSERT_EQ(back.size(), data.size());
  // The cap is 200,000 kbit/s = 25 MB/s per direction: 2 MiB cannot cross in less
  // than 2 MiB / 25 MB/s = 83 ms (a lower bound the shaper guarantees).
  EXPECT_GE(elapsed, 83ms);
  EXPECT_TRUE(back == data) << "bytes reordered or altered by the delay line";

  ControlAnswer s = ctl(base, "stats");
  EXPECT_EQ(json_field(s.line, {"up", "bytes"}), static_cast<long long>(data.size())) << s.line;
  EXPECT_EQ(json_field(s.line, {"up", "unparsed_bytes"}), static_cast<long long>(data.size())) << s.line;
  EXPECT_EQ(json_field(s.line, {"down", "unparsed_bytes"}), static_cast<long long>(data.size())) << s.line;
  EXPECT_EQ(json_field(s.line, {"up", "calls"}), 0) << s.line;
}

TEST(WanEmuE2E, ControlErrorsStatsFileAndQuit) {
  const int base = 22050;
  auto stats_file = std::filesystem::temp_directory_path() / ("wanemu-stats-" + std::to_string(getpid()) + ".json");
  std::filesystem::remove(stats_file);
  auto emu = start_emu(base, 22098, 22099, {"--stats-file", stats_file.string()});
  ASSERT_TRUE(emu->ready()) << emu->output();

  EXPECT_FALSE(ctl(base, "frobnicate").ok);
  EXPECT_FALSE(ctl(base, "delay lots").ok);
  EXPECT_FALSE(ctl(base, "delay 999999").ok);
  EXPECT_FALSE(ctl(base, std::string(10000, 'x')).ok);  // over-long line
  ASSERT_TRUE(ctl(base, "stats").ok);
  std::ifstream f(stats_file);
  std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(json_field(content, {"up", "calls"}), 0) << content;

  // The CLI client mode exits 0 on an answer and non-zero on an error answer.
  EXPECT_EQ(testing::run_shell(std::string(WANEMU_BINARY) + " --ctl " + ep(base) + " stats >/dev/null"), 0);
  EXPECT_NE(testing::run_shell(std::string(WANEMU_BINARY) + " --ctl " + ep(base) + " bogus 2>/dev/null"), 0);

  EXPECT_TRUE(ctl(base, "quit").ok);
  EXPECT_EQ(emu->wait_exit(10s), 0);
  std::filesystem::remove(stats_file);
}

}  // namespace
}  // namespace nfsgw::wanemu
