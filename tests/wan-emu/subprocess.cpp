#include "tests/wan-emu/subprocess.h"
#include "tests/support/waiting.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

extern char** environ;

namespace nfsgw::wanemu::testing {

using Clock = std::chrono::steady_clock;

Subprocess::Subprocess(const std::vector<std::string>& argv, const std::string& ready_line,
                       std::chrono::milliseconds timeout) {
  int fds[2];
  if (pipe(fds) != 0) return;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  out_fd_ = fds[0];
  if (rc != 0) {
    pid_ = -1;
    output_ = "spawn failed";
    return;
  }
  auto deadline = Clock::now() + timeout;
  std::string line;
  while (Clock::now() < deadline) {
    pollfd p{out_fd_, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (poll(&p, 1, static_cast<int>(std::max<long long>(left, 1))) <= 0) continue;
    char c;
    if (read(out_fd_, &c, 1) != 1) break;  // child exited
    output_ += c;
    if (c != '\n') {
      line += c;
      continue;
    }
    if (line == ready_line) {
      ready_ = true;
      return;
    }
    line.clear();
  }
}

int Subprocess::wait_exit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0 || reaped_) return -1;
  int status = 0;
  const auto exited = [&] { return waitpid(pid_, &status, WNOHANG) == pid_; };
  if (!nfsgw::test::wait_until(exited, timeout, "the relay's exit")) return -1;
  reaped_ = true;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGTERM);
    if (wait_exit(std::chrono::seconds(5)) < 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  if (out_fd_ >= 0) close(out_fd_);
}

int run_shell(const std::string& command) {
  int st = std::system(command.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace nfsgw::wanemu::testing
