// Keeping glibc's malloc from holding freed memory: part of keeping RSS within
// memory_mb plus the stated overhead (docs/design.md, *Memory*).
//
// Measured in the 1,000,000-entry run with memory_mb = 64 (docs/benchmarks.md):
// what nfsgw had allocated stayed near its budget (64-76 MiB in use), but malloc
// held 75-83 MiB more, freed and not returned: one arena per thread that
// allocates (16 threads: RocksDB's, the store's, the pools', the server's), each
// keeping the chunks freed into it, and fragments left by records and blocks that
// come and go. So, at start, before the threads exist:
//   - at most two arenas (M_ARENA_MAX): fewer heaps, each reused more;
//   - a fixed mmap threshold (M_MMAP_THRESHOLD, 4 MiB): buffers of up to a few MiB
//     (READ and WRITE payloads, dirty-log frames, flush buffers) are reused from
//     the arenas; mapped afresh for every call, each of their pages was faulted in
//     and zeroed again (a WRITE-back of 1 MiB WRITEs spent 6x the CPU on it with
//     256 KiB); setting it also stops glibc from raising it after such a free;
//   - a trim threshold of 4 MiB (M_TRIM_THRESHOLD): the top of the heap is given
//     back beyond it;
// and every 10 s, on its own thread, malloc_trim(0), which gives back the
// free pages inside every arena (not only its top).
#pragma once

#include <malloc.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace nfsgw {

/// Sets malloc's arena count and thresholds; call before any thread starts.
inline void tune_malloc() {
  (void)::mallopt(M_ARENA_MAX, 2);
  (void)::mallopt(M_MMAP_THRESHOLD, 4 * 1024 * 1024);
  (void)::mallopt(M_TRIM_THRESHOLD, 4 * 1024 * 1024);
}

/// A thread that gives free memory back to the system every `period`, until destroyed.
class MemoryTrimmer {
 public:
  explicit MemoryTrimmer(std::chrono::milliseconds period) : thread_([this, period] { run(period); }) {}
  ~MemoryTrimmer() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

 private:
  void run(std::chrono::milliseconds period) {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      (void)::malloc_trim(0);
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace nfsgw
