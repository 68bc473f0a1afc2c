#include "gateway/admin/command_worker.h"

namespace nfsgw::admin {

CommandWorker::CommandWorker() : thread_([this] { loop(); }) {}

CommandWorker::~CommandWorker() { stop(); }

bool CommandWorker::submit(Job job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

std::size_t CommandWorker::queued() const {
  std::lock_guard lock(mu_);
  return jobs_.size();
}

void CommandWorker::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  std::lock_guard join(join_mu_);
  if (thread_.joinable()) thread_.join();
}

void CommandWorker::loop() {
  for (;;) {
    Job job;
    bool cancelled = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
      cancelled = stopping_;
    }
    job(cancelled);
  }
}

}  // namespace nfsgw::admin
