// gateway/nlm/client_monitor.h: client hosts monitored once, recorded on disk
// before a hold succeeds, unmonitored and removed once unused, never while a
// request holds them; the start's SM_UNMON_ALL goes before any SM_MON; the last
// run's hosts leave the record once told, unless monitored again.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

#include "fake_statd.h"
#include "gateway/nlm/client_monitor.h"
#include "run_awaitable.h"

namespace nfsgw::nlm::nlm_client_monitor_test {
namespace {

namespace fs = std::filesystem;
using fake_statd::FakeStatd;
using nfsgw::test::run_awaitable;
using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("client-monitor-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path file() const { return path_ / "nsm"; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

MonitoredHost host(const std::string& name) { return MonitoredHost{name, "10.0.0." + name.substr(4), "10.0.0.100"}; }

/// What the record on disk holds.
NsmRecord on_disk(const fs::path& p) {
  NsmRecordFile::Loaded l = NsmRecordFile(p).load();
  EXPECT_TRUE(l.ok) << l.error;
  return l.record;
}

TEST(NlmClientMonitor, AHostIsMonitoredOnceAndRecordedBeforeTheHoldSucceeds) {
  TempDir d;
  FakeStatd statd;
  ClientMonitor m(statd, NsmRecordFile(d.file()), NsmRecord{5, {}});
  EXPECT_FALSE(fs::exists(d.file())) << "control: nothing saved yet";
  ASSERT_TRUE(run_awaitable(m.hold(host("host1"))));
  ASSERT_TRUE(run_awaitable(m.hold(host("host1"))));
  EXPECT_EQ(statd.calls, (std::vector<std::string>{"MON host1"}));
  const NsmRecord r = on_disk(d.file());
  EXPECT_EQ(r.state, 5);
  ASSERT_EQ(r.hosts.size(), 1u);
  EXPECT_EQ(r.hosts[0], host("host1"));
  EXPECT_TRUE(m.monitored("host1"));
  EXPECT_EQ(m.counts().monitored, 1u);
}

TEST(NlmClientMonitor, UnusedHostsAreUnmonitoredAndLeaveTheRecord) {
  TempDir d;
  FakeStatd statd;
  ClientMonitor m(statd, NsmRecordFile(d.file()), NsmRecord{5, {}});
  ASSERT_TRUE(run_awaitable(m.hold(host("host1"))));
  ASSERT_TRUE(run_awaitable(m.hold(host("host2"))));
  ASSERT_TRUE(run_awaitable(m.hold(host("host3"))));
  m.unhold("host1");
  m.unhold("host2");
  // host2 still holds a lock (in use); host3's request is still running (held).
  std::set<std::string> in_use = {"host2"};
  auto names = m.take_unused([&](const std::string& n) { return in_use.contains(n); });
  EXPECT_EQ(names, (std::vector<std::string>{"host1"}));
  run_awaitable(m.unmonitor(names));
  EXPECT_EQ(statd.calls.back(), "UNMON host1");
  EXPECT_FALSE(m.monitored("host1"));
  EXPECT_TRUE(m.monitored("host2"));
  EXPECT_TRUE(m.monitored("host3"));
  NsmRecord r = on_disk(d.file());
  EXPECT_EQ(r.find("host1"), nullptr);
  EXPECT_NE(r.find("host2"), nullptr);
  EXPECT_NE(r.find("host3"), nullptr);
  // host2 once it holds nothing; host3 never while its request runs; each taken once.
  EXPECT_EQ(m.take_unused([](const std::string&) { return false; }), (std::vector<std::string>{"host2"}));
  EXPECT_TRUE(m.take_unused([](const std::string&) { return false; }).empty());
}

TEST(NlmClientMonitor, AHostIsMonitoredAgainAfterItWasUnmonitored) {
  TempDir d;
  FakeStatd statd;
  ClientMonitor m(statd, NsmRecordFile(d.file()), NsmRecord{5, {}});
  ASSERT_TRUE(run_awaitable(m.hold(host("host1"))));
  m.unhold("host1");
  run_awaitable(m.unmonitor(m.take_unused([](const std::string&) { return false; })));
  ASSERT_TRUE(run_awaitable(m.hold(host("host1"))));
  EXPECT_EQ(statd.calls, (std::vector<std::string>{"MON host1", "UNMON host1", "MON host1"}));
  EXPECT_NE(on_disk(d.file()).find("host1"), nullptr);
}

TEST(NlmClientMonitor, AHostStatdRefusesIsNotHeldNorRecorded) {
  TempDir d;
  FakeStatd statd;
  statd.agree = false;
  ClientMonitor m(statd, NsmRecordFile(d.file()), NsmRecord{5, {}});
  EXPECT_FALSE(run_awaitable(m.hold(host("host1"))));
  EXPECT_FALSE(m.monitored("host1"));
  EXPECT_FALSE(fs::exists(d.file()));
  EXPECT_EQ(m.counts().refused, 1u);
  // statd agrees again: the next request monitors it.
  statd.agree = true;
  EXPECT_TRUE(run_awaitable(m.hold(host("host1"))));
  EXPECT_EQ(statd.count("MON host1"), 2u);
}

TEST(NlmClientMonitor, ARecordThatCannotBeSavedRefusesTheHold) {
  TempDir d;
  FakeStatd statd;
  ClientMonitor m(statd, NsmRecordFile(d.file() / "no" / "such" / "dir"), NsmRecord{5, {}});
  EXPECT_FALSE(run_awaitable(m.hold(host("host1"))));
  EXPECT_FALSE(m.monitored("host1"));
  EXPECT_EQ(m.counts().refused, 1u);
}

TEST(NlmClientMonitor, NoMonitorGoesBeforeTheStartsUnmonitorAll) {
  TempDir d;
  FakeStatd statd;
  ClientMonitor m(statd, NsmRecordFile(d.file()), NsmRecord{5, {}}, 30ms);
  m.wait_for_start();
  EXPECT_FALSE(run_awaitable(m.hold(host("host1")))) << "waited its bound for the SM_UNMON_ALL";
  EXPECT_TRUE(statd.calls.empty());
  EXPECT_TRUE(run_awaitable(m.unmonitor_all()).ok);
  EXPECT_TRUE(run_awaitable(m.hold(host("host1"))));
  EXPECT_EQ(statd.calls, (std::vector<std::string>{"UNMON_ALL", "MON host1"}));
}

TEST(NlmClientMonitor, HostsOfTheLastRunLeaveTheRecordOnceToldUnlessMonitoredAgain) {
  TempDir d;
  FakeStatd statd;
  const NsmRecord last{9, {host("host1"), host("host2"), host("host3")}};
  ClientMonitor m(statd, NsmRecordFile(d.file()), last);
  EXPECT_EQ(m.recorded().size(), 3u);
  // host2 reclaims (monitored again) before the notices are done; host3 was not told.
  ASSERT_TRUE(run_awaitable(m.hold(host("host2"))));
  m.forget_told({host("host1"), host("host2")});
  const NsmRecord r = on_disk(d.file());
  EXPECT_EQ(r.state, 9);
  EXPECT_EQ(r.find("host1"), nullptr);
  EXPECT_NE(r.find("host2"), nullptr);
  EXPECT_NE(r.find("host3"), nullptr) << "not told: told at the next start";
  EXPECT_EQ(m.save_down(), "");
  EXPECT_EQ(on_disk(d.file()).state, 10);
}

}  // namespace
}  // namespace nfsgw::nlm::nlm_client_monitor_test
