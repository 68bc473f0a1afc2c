// One thread that runs the admin commands in order, so that nothing which may
// block on the disk ever runs on an io_context thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace nfsgw::admin {

class CommandWorker {
 public:
  /// `cancelled` is true for jobs still queued when the worker stops: they must
  /// only report that, not do their work.
  using Job = std::function<void(bool cancelled)>;

  CommandWorker();
  /// stop()
  ~CommandWorker();
  CommandWorker(const CommandWorker&) = delete;
  CommandWorker& operator=(const CommandWorker&) = delete;

  /// Queues `job`; false (and `job` is not run) once stop() has begun.
  bool submit(Job job);
  /// Jobs queued behind the one running.
  std::size_t queued() const;
  /// Waits for the running job, runs the queued ones with cancelled = true, and
  /// joins the thread. Idempotent; not from a job.
  void stop();

 private:
  void loop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::mutex join_mu_;  // stop() may race with the destructor's
  std::thread thread_;
};

}  // namespace nfsgw::admin
