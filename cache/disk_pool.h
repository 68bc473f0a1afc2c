// A few threads that run queued jobs: the metadata store's disk reads, kept off
// the Asio threads. Jobs queued before the destructor still run; a job's
// exception is swallowed (a pool thread never dies).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nfsgw::cache {

class DiskPool {
 public:
  explicit DiskPool(unsigned threads);
  /// Runs what is queued, then joins the threads.
  ~DiskPool();
  DiskPool(const DiskPool&) = delete;
  DiskPool& operator=(const DiskPool&) = delete;

  void post(std::function<void()> job);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nfsgw::cache
