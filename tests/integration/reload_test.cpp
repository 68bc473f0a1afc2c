// Live reload of the configuration (SIGHUP and `nfsgw reload`) against a real
// ganesha origin, with libnfs clients keeping a bounded load on one export the whole
// time (connections that must not drop: libnfs does not reconnect here, so a
// dropped connection fails a call). One test walks through the reloads in order:
//   1. a shorter window on /win: a cached answer is revalidated sooner (the
//      gateway's origin-call counters), [server] threads is reported as needing a
//      restart while the rest applies;
//   2. squash on /second ("none" -> "all"): root's read of a 0600 file is refused;
//      then clients on /second (127.0.0.0/8 -> 10.0.0.0/8): the mounted client is
//      refused, a new MNT too;
//   3. a new export /added (by SIGHUP): mountable and served;
//   4. /gone removed: its handles answer STALE, MNT refuses it;
//   5. a bad file: `nfsgw reload` exits 1 with nfsgw's start-up message, SIGHUP logs
//      it, and the running configuration is kept.
// Each step checks the state before the reload too, so it fails without the reload.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/nfs_client.h"
#include "tests/support/nfs_ops.h"
#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/ports.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace integ {
namespace {

using namespace std::chrono_literals;

std::string url_of(const std::string& export_path) {
  return "nfs://127.0.0.1" + export_path + "?nfsport=" + std::to_string(kReloadGatewayPort) +
         "&mountport=" + std::to_string(kReloadGatewayPort);
}

void write_local(const std::string& path, const std::string& data, mode_t mode = 0644) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  ::chmod(path.c_str(), mode);
}

/// Sum of "origin_calls" of one export in `nfsgw stats --json`; -1 when absent.
long origin_calls_of(const std::string& json, const std::string& export_path) {
  const std::string tag = "{\"path\":\"" + export_path + "\"";
  const auto start = json.find(tag);
  if (start == std::string::npos) return -1;
  const auto end = json.find("{\"path\":", start + tag.size());
  long sum = 0;
  const std::string key = "\"origin_calls\":";
  for (auto at = json.find(key, start); at != std::string::npos && at < end; at = json.find(key, at + 1))
    sum += std::stol(json.substr(at + key.size()));
  return sum;
}

/// Two libnfs clients on /main: stat and read a small file, every few ms, until
/// stopped (bounded: 10 min or 100,000 rounds each).
class Load {
 public:
  explicit Load(const std::string& url) {
    for (int i = 0; i < 2; ++i) {
      clients_.push_back(std::make_unique<NfsClient>(url));
      if (clients_.back()->mount_status() != 0) throw std::runtime_error("load client cannot mount: " + clients_.back()->mount_error());
    }
    for (auto& c : clients_) threads_.emplace_back([this, nfs = c->get()] { run(nfs); });
  }
  ~Load() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  long ok() const { return ok_; }
  long failed() const { return failed_; }
  std::string first_failure() {
    std::lock_guard lock(mu_);
    return first_failure_;
  }

 private:
  void run(nfs_context* nfs) {
    const auto until = std::chrono::steady_clock::now() + 10min;
    nfsgw::test::Pacer pace(5ms);  // a round every few ms
    for (int round = 0; round < 100000 && !stop_ && std::chrono::steady_clock::now() < until; ++round) {
      const Attrs a = lstat_of(nfs, "/loadfile");
      int rc = 0;
      const std::string data = read_file(nfs, "/loadfile", &rc);
      if (a.rc == 0 && rc == 0 && data == std::string(4096, 'L')) {
        ++ok_;
      } else {
        ++failed_;
        std::lock_guard lock(mu_);
        if (first_failure_.empty())
          first_failure_ = "round " + std::to_string(round) + ": stat rc " + std::to_string(a.rc) + ", read rc " +
                           std::to_string(rc) + ", " + std::to_string(data.size()) + " bytes";
      }
      pace.next();
    }
  }

  std::vector<std::unique_ptr<NfsClient>> clients_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<long> ok_{0}, failed_{0};
  std::mutex mu_;
  std::string first_failure_;
};

class ReloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    INTEG_REQUIRE_NFSGW();
    origin = std::make_unique<GaneshaOrigin>(kReloadOriginNfsPort, kReloadOriginMountPort);
    origin->start();
    const std::string root = origin->export_dir();
    write_local(root + "/loadfile", std::string(4096, 'L'));
    write_local(root + "/winfile", "window");
    write_local(root + "/private", "root only", 0600);
    write_local(root + "/public", "anyone");
    dir = std::make_unique<TempDir>("reload");

    cfg.port = kReloadGatewayPort;
    cfg.origin_url = origin->url();
    cfg.export_path = "/main";
    cfg.squash = "none";
    ExportSettings win;
    win.export_path = "/win";
    win.metadata.durations = {{"attr_ttl", "10m"}, {"dir_ttl", "10m"}};
    ExportSettings second;
    second.export_path = "/second";
    second.squash = "none";
    second.metadata.enabled = false;  // every call reaches the origin with its credentials
    ExportSettings gone;
    gone.export_path = "/gone";
    cfg.extra_exports = {win, second, gone};
    gw = std::make_unique<Gateway>(cfg, dir->sub("gw"));
    gw->start();
  }

  void TearDown() override {
    if (gw && gw->running()) {
      EXPECT_EQ(gw->stop(), 0) << gw->log();
    }
    gw.reset();
    dir.reset();
    origin.reset();
  }

  /// Writes `next` as the gateway's configuration file.
  void write_config(const GatewayConfig& next) {
    std::ofstream(gw->config_path(), std::ios::trunc) << gateway_toml(next, gw->cache_dir());
  }
  ExportSettings& extra(GatewayConfig& c, const std::string& path) {
    for (auto& e : c.extra_exports)
      if (e.export_path == path) return e;
    throw std::logic_error("no export " + path);
  }
  long origin_calls(const std::string& export_path) {
    const RunResult r = gw->cli("stats", {"--json"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return origin_calls_of(r.output, export_path);
  }
  /// Writes `next` and runs `nfsgw reload` on it.
  std::string reload_cli(const GatewayConfig& next) {
    write_config(next);
    const RunResult r = gw->cli("reload");
    EXPECT_EQ(r.exit_code, 0) << r.output << "\nlog:\n" << gw->log();
    return r.output;
  }

  std::unique_ptr<GaneshaOrigin> origin;
  std::unique_ptr<TempDir> dir;
  GatewayConfig cfg;
  std::unique_ptr<Gateway> gw;
};

TEST_F(ReloadTest, EveryKindOfChangeAppliesUnderLoadWithoutDroppingACall) {
  NfsClient win(url_of("/win"));
  NfsClient second(url_of("/second"));
  NfsClient gone(url_of("/gone"));
  ASSERT_EQ(win.mount_status(), 0) << win.mount_error();
  ASSERT_EQ(second.mount_status(), 0) << second.mount_error();
  ASSERT_EQ(gone.mount_status(), 0) << gone.mount_error();
  Load load(url_of("/main"));
  GatewayConfig next = cfg;

  // 1. A window: /win's attr_ttl 10m -> 1s.
  // The origin's count for /win once it has not moved for 300 ms: what the first
  // calls learn in the background is counted.
  const auto settled_calls = [&] {
    return nfsgw::test::wait_until_settled([&] { return origin_calls("/win"); }, 300ms, 10s, std::not_equal_to<>{},
                                           100ms);
  };
  ASSERT_EQ(lstat_of(win, "/winfile").rc, 0);
  settled_calls();
  ASSERT_EQ(lstat_of(win, "/winfile").rc, 0);
  const long warm = settled_calls();
  const auto cached = std::chrono::steady_clock::now();
  ASSERT_GT(warm, 0) << "positive control: the first stat reached the origin";
  nfsgw::test::wait_past(cached + 1500ms);  // past the 1 s window /win gets below
  ASSERT_EQ(lstat_of(win, "/winfile").rc, 0);
  ASSERT_EQ(origin_calls("/win"), warm) << "cached for 10 minutes before the reload";
  extra(next, "/win").metadata.durations["attr_ttl"] = "1s";
  next.metadata.durations["attr_ttl"] = "20s";  // /main's, under the load
  next.threads = 3;
  std::string answer = reload_cli(next);
  EXPECT_NE(answer.find("applied: export /win: attr_ttl: \"10m\" -> \"1s\""), std::string::npos) << answer;
  EXPECT_NE(answer.find("needs a restart: [server] threads: 2 -> 3"), std::string::npos) << answer;
  ASSERT_EQ(lstat_of(win, "/winfile").rc, 0);
  const auto revalidated = std::chrono::steady_clock::now();
  const long after = origin_calls("/win");
  EXPECT_GT(after, warm) << "what was cached for 10 minutes is revalidated under the 1 s window";
  nfsgw::test::wait_past(revalidated + 1500ms);  // the 1 s window has certainly passed
  ASSERT_EQ(lstat_of(win, "/winfile").rc, 0);
  EXPECT_GT(origin_calls("/win"), after) << "revalidated again after 1 s";
  EXPECT_NE(gw->log().find("needs a restart: [server] threads"), std::string::npos);

  // 2. Squash, then client rules, on /second.
  int rc = -1;
  ASSERT_EQ(read_file(second, "/private", &rc), "root only");
  ASSERT_EQ(rc, 0);
  extra(next, "/second").squash = "all";
  answer = reload_cli(next);
  EXPECT_NE(answer.find("applied: export /second: squash: \"none\" -> \"all\""), std::string::npos) << answer;
  read_file(second, "/private", &rc);
  EXPECT_EQ(rc, -EACCES) << "root is now the anonymous user";
  EXPECT_EQ(read_file(second, "/public", &rc), "anyone");
  EXPECT_EQ(rc, 0);
  extra(next, "/second").clients = {"10.0.0.0/8"};
  answer = reload_cli(next);
  EXPECT_NE(answer.find("applied: export /second: clients"), std::string::npos) << answer;
  EXPECT_EQ(lstat_of(second, "/public").rc, -EACCES) << "127.0.0.1 is no longer a client of /second";
  {
    NfsClient refused(url_of("/second"));
    EXPECT_NE(refused.mount_status(), 0);
  }

  // 3. A new export, by SIGHUP.
  {
    NfsClient early(url_of("/added"));
    ASSERT_NE(early.mount_status(), 0) << "not exported before the reload";
  }
  ExportSettings added;
  added.export_path = "/added";
  next.extra_exports.push_back(added);
  write_config(next);
  ASSERT_EQ(::kill(gw->pid(), SIGHUP), 0);
  std::unique_ptr<NfsClient> fresh;
  (void)nfsgw::test::wait_until(
      [&] {
        fresh = std::make_unique<NfsClient>(url_of("/added"));
        return fresh->mount_status() == 0;
      },
      10s, "a mount of /added", 100ms);
  ASSERT_EQ(fresh->mount_status(), 0) << gw->log();
  EXPECT_EQ(read_file(*fresh, "/public", &rc), "anyone");
  EXPECT_EQ(rc, 0);
  EXPECT_NE(gw->log().find("applied: added export /added"), std::string::npos);

  // 4. /gone removed.
  ASSERT_EQ(lstat_of(gone, "/public").rc, 0);
  std::erase_if(next.extra_exports, [](const ExportSettings& e) { return e.export_path == "/gone"; });
  answer = reload_cli(next);
  EXPECT_NE(answer.find("applied: removed export /gone"), std::string::npos) << answer;
  EXPECT_EQ(lstat_of(gone, "/public").rc, -ESTALE);
  EXPECT_EQ(lstat_of(gone, "/").rc, -ESTALE);
  {
    NfsClient refused(url_of("/gone"));
    EXPECT_NE(refused.mount_status(), 0) << "MOUNT refuses a removed export";
  }

  // 5. A bad file: refused with the start-up message, the running one kept.
  write_config(next);
  std::string text;
  {
    std::ifstream in(gw->config_path());
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(gw->config_path(), std::ios::trunc)
      << text << "\n[[export]]\npath = \"/bad\"\norigin = \"nfs://127.0.0.1/x\"\nsquash = \"sometimes\"\n";
  const RunResult check = run({*nfsgw_binary(), "--check-config", gw->config_path()}, 30s);
  ASSERT_EQ(check.exit_code, 1) << check.output;
  const auto from = check.output.find("invalid configuration: ");
  ASSERT_NE(from, std::string::npos) << check.output;
  const std::string message = check.output.substr(from, check.output.find('\n', from) - from);
  const RunResult refused = gw->cli("reload");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find(message), std::string::npos) << refused.output << "\nexpected: " << message;
  ASSERT_EQ(::kill(gw->pid(), SIGHUP), 0);
  const std::string logged = "reload refused, the running configuration is kept: " + message;
  (void)nfsgw::test::wait_until([&] { return gw->log().find(logged) != std::string::npos; }, 10s, "the refusal logged",
                                100ms);
  EXPECT_NE(gw->log().find(logged), std::string::npos) << gw->log();
  EXPECT_EQ(read_file(*fresh, "/public", &rc), "anyone") << "the running configuration still serves /added";
  EXPECT_EQ(lstat_of(gone, "/public").rc, -ESTALE);
  EXPECT_EQ(lstat_of(second, "/public").rc, -EACCES);

  // The load ran throughout, and no call of it failed.
  const long before_stop = load.ok();
  EXPECT_TRUE(nfsgw::test::wait_until([&] { return load.ok() > before_stop; }, 300ms,
                                      "the load still running after the reloads"));
  load.stop();
  EXPECT_EQ(load.failed(), 0) << load.first_failure();
  EXPECT_GT(load.ok(), 100) << "positive control: the load made calls";
  EXPECT_TRUE(gw->running());
}

}  // namespace
}  // namespace integ
