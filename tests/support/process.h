// Child processes for tests (the nfsgw binary, nfs-cp, the origin script): started
// with fork/exec, output captured to a file, every wait bounded by a deadline so a
// hung child fails the test instead of hanging ctest.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace integ {

class Process {
 public:
  /// Starts argv[0] (searched in PATH) with stdout and stderr appended to `log_path`.
  /// Throws when fork/exec set-up fails.
  Process(const std::vector<std::string>& argv, const std::string& log_path);
  ~Process();  // kills (SIGKILL) a child still running
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  /// Waits for the exit; returns the exit code (128+signal when killed by a signal)
  /// or nullopt when `timeout` passed first.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  /// SIGTERM, then waits up to `grace`; SIGKILL after that. Returns the exit code.
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(15));
  void signal(int sig);
  const std::string& log_path() const { return log_path_; }
  std::string log() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string log_path_;
};

struct RunResult {
  int exit_code = -1;  // -1: timed out (and killed)
  std::string output;  // stdout and stderr, interleaved
};

/// Runs a command to completion (killed after `timeout`) and captures its output.
RunResult run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

/// Reads a whole file (empty string when missing).
std::string read_file(const std::string& path);

/// Sends SIGSTOP to `pid` and waits (at most 5 s) until every one of its threads is
/// stopped. kill() only queues the signal: a thread running on another CPU may still
/// answer a request that arrives just after it returns. False when a thread was
/// still running at the deadline.
bool stop_and_wait(pid_t pid);

/// Resident memory of process `pid` in bytes (VmRSS in /proc/<pid>/status);
/// nullopt when the process or the field is gone.
std::optional<std::uint64_t> resident_bytes(pid_t pid);

}  // namespace integ
