#pragma once
// A finite Workload: a queue of tasks, each one unit. Tasks may push more
// tasks (a directory listing pushes its subdirectories), so the queue runs dry
// only when nothing is queued and nothing is running. Used for --setup, for
// resolving file handles before a run, and for the walk mode.
#include <deque>
#include <functional>
#include <string>

#include "tools/nfsgw-bench/workload.h"

namespace nfsgw::bench {

class TaskQueue : public Workload {
 public:
  /// A task starts its calls on c and calls done() once after its last reply;
  /// it returns false if its first call could not be queued.
  using Task = std::function<bool(Connection& c, std::function<void()> done)>;

  void push(Task t) { tasks_.push_back(std::move(t)); }
  /// Records the first failure; no task starts after it.
  void fail(const std::string& why) {
    if (failure_.empty()) failure_ = why;
  }

  bool has_work() const override { return failure_.empty() && !tasks_.empty(); }
  bool start(Connection& c, std::function<void()> done) override;
  std::string failure() const override { return failure_; }
  std::size_t queued() const { return tasks_.size(); }

 private:
  std::deque<Task> tasks_;
  std::string failure_;
};

}  // namespace nfsgw::bench
