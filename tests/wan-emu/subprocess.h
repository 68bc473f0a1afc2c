// Starts wan-emu (or any program) as a child process for end-to-end tests, waits
// for a readiness line on its stdout, and always kills it on destruction.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace nfsgw::wanemu::testing {

class Subprocess {
 public:
  /// Spawns argv[0] with `argv`; waits up to `timeout` for a stdout line equal to
  /// `ready_line`. Check ready() afterwards.
  Subprocess(const std::vector<std::string>& argv, const std::string& ready_line,
             std::chrono::milliseconds timeout = std::chrono::seconds(10));
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  bool ready() const { return ready_; }
  /// What the child printed before becoming ready (for failure messages).
  const std::string& output() const { return output_; }
  /// Waits up to `timeout` for the child to exit; returns its exit status or -1.
  int wait_exit(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  bool ready_ = false;
  bool reaped_ = false;
  std::string output_;
};

/// Runs a shell command line, returning its exit status (for the origin script).
int run_shell(const std::string& command);

}  // namespace nfsgw::wanemu::testing
