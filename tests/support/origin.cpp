#include "tests/support/origin.h"

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>

#include "tests/support/ports.h"
#include "tests/support/raw_nfs.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace integ {

std::string origin_script() { return std::string(NFSGW_SOURCE_DIR) + "/scripts/origin-ganesha.sh"; }

GaneshaOrigin::GaneshaOrigin(std::uint16_t nfs_port, std::uint16_t mount_port)
    : nfs_port_(nfs_port), mount_port_(mount_port) {
  base_dir_ = "/tmp/integ-origin-" + std::to_string(nfs_port);
  state_dir_ = base_dir_ + "/state";
  export_dir_ = base_dir_ + "/export";
}

GaneshaOrigin::~GaneshaOrigin() {
  stop();
  remove_tree(base_dir_);
}

void GaneshaOrigin::start() {
  // A server left over by a crashed run still holds our ports: stop it first.
  run({"bash", origin_script(), "stop", state_dir_}, std::chrono::seconds(30));
  remove_tree(export_dir_);
  make_dirs(state_dir_);
  make_dirs(export_dir_);
  ::chmod(base_dir_.c_str(), 0755);
  ::chmod(export_dir_.c_str(), 0777);  // unprivileged-uid tests create files here
  start_again();
}

void GaneshaOrigin::start_again() {
  auto r = run({"bash", origin_script(), "start", state_dir_, export_dir_, std::to_string(nfs_port_),
                std::to_string(mount_port_)},
               std::chrono::seconds(90));
  if (r.exit_code != 0) {
    throw std::runtime_error("origin did not start (exit " + std::to_string(r.exit_code) + "):\n" + r.output +
                             "\n" + read_file(state_dir_ + "/ganesha.log"));
  }
  started_ = true;
  // The script waits for the NFS port only; MOUNT may answer a moment later.
  std::string last;
  const auto mounts = [&] {
    auto m = mount_root(mount_port_, export_dir_);
    last = m.error + " status " + std::to_string(m.status);
    return m.transport_ok && m.status == 0;
  };
  if (!nfsgw::test::wait_until(mounts, std::chrono::seconds(30), "MNT answered"))
    throw std::runtime_error("origin does not answer MNT: " + last);
}

void GaneshaOrigin::stop() {
  if (!started_) return;
  run({"bash", origin_script(), "stop", state_dir_}, std::chrono::seconds(30));
  started_ = false;
}

namespace {
pid_t pid_in(const std::string& pid_file) {
  const std::string text = read_file(pid_file);
  const long pid = std::atol(text.c_str());
  if (pid <= 0) throw std::runtime_error("no ganesha pid in " + pid_file);
  return static_cast<pid_t>(pid);
}
}  // namespace

void GaneshaOrigin::freeze() {
  if (!stop_and_wait(pid_in(state_dir_ + "/ganesha.pid")))
    throw std::runtime_error("ganesha did not stop on SIGSTOP within 5 s");
}

void GaneshaOrigin::thaw() { ::kill(pid_in(state_dir_ + "/ganesha.pid"), SIGCONT); }

void GaneshaOrigin::kill9() {
  const pid_t pid = pid_in(state_dir_ + "/ganesha.pid");
  ::kill(pid, SIGKILL);
  // Not our child: gone when /proc no longer lists it (or it is a zombie of the
  // shell that started it). Bounded: 10 s.
  (void)nfsgw::test::wait_until(
      [pid] {
        const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
        return stat.empty() || stat.find(") Z") != std::string::npos;
      },
      std::chrono::seconds(10), "ganesha gone");
  // A zombie nobody reaps (a container's init may not) still answers kill -0: the
  // start script would take it for a running server.
  std::remove((state_dir_ + "/ganesha.pid").c_str());
  started_ = false;
}

std::string GaneshaOrigin::url() const {
  return "nfs://127.0.0.1" + export_dir_ + "?nfsport=" + std::to_string(nfs_port_) +
         "&mountport=" + std::to_string(mount_port_);
}

namespace {
std::unique_ptr<GaneshaOrigin>& origin_slot() {
  static std::unique_ptr<GaneshaOrigin> slot;
  return slot;
}
}  // namespace

GaneshaOrigin& shared_origin() {
  auto& slot = origin_slot();
  if (!slot) slot = std::make_unique<GaneshaOrigin>(kOriginNfsPort, kOriginMountPort);
  return *slot;
}

void OriginEnvironment::SetUp() {
  try {
    shared_origin().start();
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
}

void OriginEnvironment::TearDown() { origin_slot().reset(); }

}  // namespace integ
