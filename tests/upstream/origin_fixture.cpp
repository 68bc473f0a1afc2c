#include "tests/upstream/origin_fixture.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

#include "tests/support/process.h"
#include "tests/support/waiting.h"

namespace nfsgw::upstream::test {

namespace fs = std::filesystem;

namespace {
void sh(const std::string& cmd) {
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("command failed: " + cmd);
}

/// Starts the origin before the first test of the process and removes it after the last.
class OriginEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    spdlog::set_level(spdlog::level::info);
    Origin::get().start();
  }
  void TearDown() override {
    Origin::get().stop();
    Origin::get().cleanup();
  }
};
[[maybe_unused]] const auto* const kEnv =
    ::testing::AddGlobalTestEnvironment(new OriginEnvironment);
}  // namespace

Origin& Origin::get() {
  static Origin origin;
  return origin;
}

Origin::Origin()
    : base_("/tmp/upstream-test-" + std::to_string(::getpid())),
      state_dir_(base_ + "/state"),
      export_dir_(base_ + "/export") {
  fs::create_directories(state_dir_);
  fs::create_directories(export_dir_);
  ::chmod(export_dir_.c_str(), 0755);
}

namespace {
/// A test process that crashed leaves its origin running on our fixed ports; stop
/// and remove the origins of /tmp/upstream-test-<pid> whose process is gone.
void reap_stale_origins() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/tmp", ec)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "upstream-test-";
    if (name.rfind(prefix, 0) != 0) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(name.c_str() + prefix.size()));
    if (pid <= 0 || pid == ::getpid() || ::kill(pid, 0) == 0) continue;
    std::system((std::string(NFSGW_SOURCE_DIR) + "/scripts/origin-ganesha.sh stop " +
                 entry.path().string() + "/state >/dev/null 2>&1")
                    .c_str());
    fs::remove_all(entry.path(), ec);
  }
}
}  // namespace

void Origin::start() {
  static const bool reaped = (reap_stale_origins(), true);
  (void)reaped;
  sh(std::string(NFSGW_SOURCE_DIR) + "/scripts/origin-ganesha.sh start " + state_dir_ + " " +
     export_dir_ + " " + std::to_string(kNfsPort) + " " + std::to_string(kMountPort) +
     " >/dev/null");
}

void Origin::stop() {
  sh(std::string(NFSGW_SOURCE_DIR) + "/scripts/origin-ganesha.sh stop " + state_dir_);
}

namespace {
pid_t ganesha_pid(const std::string& state_dir) {
  std::ifstream in(state_dir + "/ganesha.pid");
  pid_t pid = 0;
  in >> pid;
  if (pid <= 0) throw std::runtime_error("no ganesha pid file in " + state_dir);
  return pid;
}
}  // namespace

void Origin::freeze() {
  // Returns once every ganesha thread is stopped: a call sent after freeze() is
  // never answered (kill() alone only queues the signal).
  if (!integ::stop_and_wait(ganesha_pid(state_dir_)))
    throw std::runtime_error("ganesha did not stop on SIGSTOP within 5 s");
}

void Origin::kill_hard() {
  const pid_t pid = ganesha_pid(state_dir_);
  ::kill(pid, SIGKILL);
  ::kill(pid, SIGCONT);
  (void)nfsgw::test::wait_until([pid] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(5),
                                "ganesha gone after SIGKILL");
  fs::remove(state_dir_ + "/ganesha.pid");
}

void Origin::cleanup() {
  std::error_code ec;
  fs::remove_all(base_, ec);
}

config::ExportConfig Origin::export_config(unsigned connections) const {
  config::ExportConfig e;
  e.path = "/test";
  e.origin.host = "127.0.0.1";
  e.origin.path = export_dir_;
  e.origin.nfs_port = kNfsPort;
  e.origin.mount_port = kMountPort;
  e.origin.text = "nfs://127.0.0.1" + export_dir_;
  e.upstream_connections = connections;
  return e;
}

std::string test_base() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "no-test";
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::string Origin::path(const std::string& rel) const {
  return export_dir_ + "/" + test_base() + "/" + rel;
}

std::string fresh_dir(const std::string& rel, unsigned mode) {
  const std::string p = Origin::get().path(rel);
  fs::remove_all(p);
  fs::create_directories(p);
  ::chmod(p.c_str(), mode);
  return p;
}

CallContext as_user(std::uint32_t uid, std::uint32_t gid, std::vector<std::uint32_t> gids) {
  CallContext ctx;
  ctx.cred.uid = uid;
  ctx.cred.gid = gid;
  ctx.cred.gids.assign(gids.begin(), gids.end());
  ctx.cred.machine_name = "upstream-test";
  return ctx;
}

bool runs_dry(boost::asio::io_context& io,
              boost::asio::executor_work_guard<boost::asio::io_context::executor_type>& work,
              std::chrono::milliseconds bound) {
  work.reset();
  return nfsgw::test::wait_until([&] { return io.stopped(); }, bound, "the io_context out of work");
}

ForwarderHarness::ForwarderHarness(unsigned connections, bool wait_for_root)
    : work_(io_.get_executor()) {
  for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  fwd_ = std::make_unique<Forwarder>(io_, Origin::get().export_config(connections));
  fwd_->start();
  if (!wait_for_root) return;
  try {
    root_ = run_on(io_, [this] { return fwd_->root_handle(); });
    if (root_.empty()) throw std::runtime_error("no root handle");
  } catch (...) {
    shutdown();
    throw;
  }
}

ForwarderHarness::~ForwarderHarness() { shutdown(); }

void ForwarderHarness::shutdown() {
  if (!fwd_) return;
  fwd_->stop();
  // A stopped forwarder leaves nothing posted: once its connections have closed on
  // their strands, run() returns by itself. Checked here, after every test.
  EXPECT_TRUE(runs_dry(io_, work_)) << "work was still posted to the io_context 5 s after Forwarder::stop()";
  io_.stop();  // ends the threads either way
  for (auto& t : threads_) t.join();
  fwd_.reset();
}

nfs3::FileHandle ForwarderHarness::lookup_path(const std::string& test_rel) {
  const std::string rel = test_base() + "/" + test_rel;
  nfs3::FileHandle fh = root_;
  std::size_t pos = 0;
  while (pos < rel.size()) {
    std::size_t slash = rel.find('/', pos);
    if (slash == std::string::npos) slash = rel.size();
    nfs3::LookupArgs args{{fh, rel.substr(pos, slash - pos)}};
    auto res = call(&Forwarder::lookup, as_root(), args);
    if (res.status != nfs3::Status::Ok) {
      ADD_FAILURE() << "LOOKUP " << rel << " failed with status " << static_cast<int>(res.status);
      return {};
    }
    fh = res.object;
    pos = slash + 1;
  }
  return fh;
}

}  // namespace nfsgw::upstream::test
