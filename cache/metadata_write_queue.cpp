#include "cache/metadata_write_queue.h"

#include <algorithm>

namespace nfsgw::cache {

MetadataWriteQueue::MetadataWriteQueue(MonotonicClock& timers)
    : timers_(timers), next_sweep_(timers.now() + kSweepPeriod), clock_moved_(timers.wake_on_advance(cv_, mu_)) {}

MetadataWriteQueue::~MetadataWriteQueue() { stop(); }

void MetadataWriteQueue::start(Writer writer) {
  writer_ = std::move(writer);
  thread_ = std::thread([this] { loop(); });
}

void MetadataWriteQueue::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();  // the writer drains the queue first
}

void MetadataWriteQueue::wake() {
  // Taking the lock first means the writer either has not yet computed when to
  // wake (and sees the new time) or is waiting (and is woken).
  { std::lock_guard lock(mu_); }
  cv_.notify_all();
}

void MetadataWriteQueue::flush() {
  std::unique_lock lock(mu_);
  const auto target = last_seq_;
  done_cv_.wait(lock, [&] { return written_seq_ >= target; });
}

void MetadataWriteQueue::sweep_now() {
  std::unique_lock lock(mu_);
  const auto target = ++sweeps_asked_;
  cv_.notify_one();
  done_cv_.wait(lock, [&] { return sweeps_done_ >= target; });
}

void MetadataWriteQueue::run_due_work() {
  std::unique_lock lock(mu_);
  const auto target = ++passes_asked_;
  cv_.notify_one();
  done_cv_.wait(lock, [&] { return passes_done_ >= target; });
}

void MetadataWriteQueue::loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    // When to wake is read again after every wake-up: a disk failure seen on
    // another thread moves the retry's time (wake()).
    auto due = std::min(next_sweep_, writer_.retry_due());
    while (!stopping_ && queue_.empty() && sweeps_asked_ <= sweeps_done_ && passes_asked_ <= passes_done_ &&
           timers_.now() < due) {
      timers_.wait_until(cv_, lock, due);
      due = std::min(next_sweep_, writer_.retry_due());
    }
    // A pass asked for by now is done once this round has looked at the timers.
    const auto passes = passes_asked_;
    if (timers_.now() >= writer_.retry_due() && !stopping_) {
      lock.unlock();
      writer_.retry();
      lock.lock();
    }
    if (!queue_.empty()) {
      std::vector<MetadataOp> ops;
      const std::size_t n = std::min(queue_.size(), kBatchOps);
      ops.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        ops.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      lock.unlock();
      writer_.write(ops);
      lock.lock();
      written_seq_ = ops.back().seq;
      done_cv_.notify_all();
      continue;
    }
    if (stopping_) return;
    if (sweeps_asked_ > sweeps_done_ || timers_.now() >= next_sweep_) {
      const auto asked = sweeps_asked_;
      lock.unlock();
      writer_.sweep();
      lock.lock();
      sweeps_done_ = asked;
      next_sweep_ = timers_.now() + kSweepPeriod;
      done_cv_.notify_all();
    }
    if (passes_done_ < passes) {
      passes_done_ = passes;
      done_cv_.notify_all();
    }
  }
}

}  // namespace nfsgw::cache
