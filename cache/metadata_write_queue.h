// The metadata store's queue of changes and the writer thread that applies them
// (metadata_store.cpp's part for it).
//
// Every change gets its sequence number here, under the queue's lock, so that the
// writer, and RocksDB, see changes in that order. The writer thread takes them in
// batches; when the queue is empty it runs the disk budget sweep (every
// kSweepPeriod of the timer clock, or when asked), and before all else a retry of
// a failed disk once that is due. It waits through the timer clock, so a test's
// manual clock moves it (monotonic_clock.h).
//
// Lock order: the queue's lock after a shard's lock; the writer's callbacks run
// with it released.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/monotonic_clock.h"

namespace nfsgw::cache {

/// One change for the writer, in a batch.
struct MetadataOp {
  enum Type : std::uint8_t { Put, Erase, Range, Touch };
  Type type = Put;
  std::uint8_t kind = 0;  // the record kind (Put, Erase, Touch)
  std::uint64_t seq = 0;
  std::string key;  // Put, Erase, Touch: memory key; Range: begin (disk key)
  std::string end;  // Range
  std::shared_ptr<const void> value;
  std::uint32_t used_s = 0;
  std::size_t charge = 0;  // its bytes in the store's pending budget, given back once written
};

class MetadataWriteQueue {
 public:
  /// What the writer thread does, on that thread with the queue's lock released.
  struct Writer {
    std::function<void(const std::vector<MetadataOp>&)> write;  // one batch, in order
    std::function<void()> sweep;                                // the disk budget sweep
    std::function<MonotonicClock::time_point()> retry_due;      // a failed disk's next try
    std::function<void()> retry;                                // tries the failed disk
  };
  static constexpr std::size_t kBatchOps = 1024;
  static constexpr std::chrono::seconds kSweepPeriod{30};

  explicit MetadataWriteQueue(MonotonicClock& timers);
  /// stop()
  ~MetadataWriteQueue();
  MetadataWriteQueue(const MetadataWriteQueue&) = delete;
  MetadataWriteQueue& operator=(const MetadataWriteQueue&) = delete;

  /// Starts the writer thread. Once.
  void start(Writer writer);
  /// The writer writes what is queued, then ends. Idempotent.
  void stop();

  /// Gives `op` the next sequence number and queues it; returns the number.
  std::uint64_t push(MetadataOp op) {
    return push(std::move(op), [](std::uint64_t) {});
  }
  /// The same, calling `first(seq)` under the queue's lock before the writer can
  /// see the change (erase_range registers its tombstone so).
  template <class First>
  std::uint64_t push(MetadataOp op, First&& first) {
    std::uint64_t seq;
    {
      std::lock_guard lock(mu_);
      seq = op.seq = ++last_seq_;
      first(seq);
      queue_.push_back(std::move(op));
    }
    cv_.notify_one();
    return seq;
  }
  /// Makes the writer look at its times again (a failed disk's retry is now due
  /// sooner than the sweep it sleeps until).
  void wake();

  /// Waits until every change queued before the call is written.
  void flush();
  /// Asks the writer for a sweep and waits until it is done.
  void sweep_now();
  /// Waits until the writer has looked at its timers once more.
  void run_due_work();

 private:
  void loop();

  MonotonicClock& timers_;
  Writer writer_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<MetadataOp> queue_;
  std::uint64_t last_seq_ = 0, written_seq_ = 0;
  std::uint64_t sweeps_asked_ = 0, sweeps_done_ = 0;
  std::uint64_t passes_asked_ = 0, passes_done_ = 0;  // run_due_work()
  MonotonicClock::time_point next_sweep_;
  bool stopping_ = false;
  // A manual timer clock's moves wake the writer; ends before mu_ and cv_ go.
  std::unique_ptr<MonotonicClock::Watch> clock_moved_;
  std::thread thread_;
};

}  // namespace nfsgw::cache
