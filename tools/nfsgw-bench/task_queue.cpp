#include "tools/nfsgw-bench/task_queue.h"

namespace nfsgw::bench {

bool TaskQueue::start(Connection& c, std::function<void()> done) {
  if (tasks_.empty()) return false;
  Task t = std::move(tasks_.front());
  tasks_.pop_front();
  return t(c, std::move(done));
}

}  // namespace nfsgw::bench
