#include "tools/nfsgw-bench/event_loop.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace nfsgw::bench {

bool poll_once(const std::vector<Connection*>& conns, std::chrono::milliseconds max_wait) {
  std::vector<pollfd> fds;
  std::vector<Connection*> owners;
  fds.reserve(conns.size());
  owners.reserve(conns.size());
  for (Connection* c : conns) {
    if (c->failed()) return false;
    int fd = c->fd();
    if (fd < 0) continue;
    fds.push_back(pollfd{fd, c->events(), 0});
    owners.push_back(c);
  }
  int wait_ms = static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, max_wait.count()));
  int n = ::poll(fds.data(), fds.size(), wait_ms);
  if (n < 0) return errno == EINTR;
  bool ok = true;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    // Only sockets with events are serviced: the bench sets no libnfs RPC
    // timeouts (its own deadlines bound every wait), so idle servicing is moot.
    if (fds[i].revents != 0 && !owners[i]->service(fds[i].revents)) ok = false;
  }
  return ok;
}

LoopResult poll_until(const std::vector<Connection*>& conns, const std::function<bool()>& done,
                      Clock::time_point deadline) {
  while (true) {
    if (done()) return LoopResult::Done;
    auto now = Clock::now();
    if (now >= deadline) return LoopResult::Deadline;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                std::chrono::milliseconds(1);
    if (!poll_once(conns, std::min(left, std::chrono::milliseconds(100))))
      return LoopResult::ConnectionFailed;
  }
}

std::string first_connection_error(const std::vector<Connection*>& conns) {
  for (Connection* c : conns)
    if (c->failed()) return c->error().empty() ? "connection failed" : c->error();
  return {};
}

}  // namespace nfsgw::bench
