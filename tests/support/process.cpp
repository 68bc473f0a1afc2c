#include "tests/support/process.h"
#include "tests/support/waiting.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace integ {
namespace {

int decode_status(int st) {
  if (WIFEXITED(st)) return WEXITSTATUS(st);
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return -1;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const std::string& log_path)
    : log_path_(log_path) {
  if (argv.empty()) throw std::invalid_argument("empty argv");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open log " + log_path);
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(fd);
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec.
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(fd);
}

Process::~Process() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

bool Process::running() {
  if (status_) return false;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    status_ = decode_status(st);
    return false;
  }
  return r == 0;
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  if (!nfsgw::test::wait_until([this] { return !running(); }, timeout, "the process's exit")) return std::nullopt;
  return status_;
}

void Process::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

int Process::stop(std::chrono::milliseconds grace) {
  signal(SIGTERM);
  if (auto code = wait(grace)) return *code;
  signal(SIGKILL);
  return wait(std::chrono::seconds(10)).value_or(-1);
}

std::string Process::log() const { return read_file(log_path_); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {
/// True when every thread of `pid` is in state T (stopped); /proc/<pid>/task/<tid>/stat
/// reads "tid (comm) S ...", the comm possibly holding spaces or parentheses.
bool all_threads_stopped(pid_t pid) {
  std::error_code ec;
  bool any = false;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    const std::string stat = read_file(task.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) continue;  // thread gone
    if (stat[close + 2] != 'T') return false;
    any = true;
  }
  return any;
}
}  // namespace

bool stop_and_wait(pid_t pid) {
  if (::kill(pid, SIGSTOP) != 0) return false;
  return nfsgw::test::wait_until([pid] { return all_threads_stopped(pid); }, std::chrono::seconds(5),
                                 "every thread stopped");
}

std::optional<std::uint64_t> resident_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

RunResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  char tmpl[] = "/tmp/integ-run-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  ::close(fd);
  RunResult result;
  {
    Process p(argv, tmpl);
    if (auto code = p.wait(timeout)) {
      result.exit_code = *code;
    } else {
      p.signal(SIGKILL);
      p.wait(std::chrono::seconds(10));
      result.exit_code = -1;
    }
  }
  result.output = read_file(tmpl);
  ::unlink(tmpl);
  return result;
}

}  // namespace integ
