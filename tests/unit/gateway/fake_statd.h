// A status monitor for unit tests: records every call in order ("MON host",
// "UNMON host", "UNMON_ALL") and answers as told.
#pragma once

#include <string>
#include <vector>

#include "gateway/nlm/status_monitor.h"

namespace nfsgw::nlm::fake_statd {

class FakeStatd final : public StatusMonitor {
 public:
  std::vector<std::string> calls;
  bool agree = true;  // SM_MON answered stat_succ

  Awaitable<MonitorReply> monitor(std::string host, nsm::Priv) override {
    calls.push_back("MON " + host);
    co_return MonitorReply{agree, 7, agree ? "" : "stat_fail"};
  }
  Awaitable<MonitorReply> unmonitor(std::string host) override {
    calls.push_back("UNMON " + host);
    co_return MonitorReply{true, 7, {}};
  }
  Awaitable<MonitorReply> unmonitor_all() override {
    calls.push_back("UNMON_ALL");
    co_return MonitorReply{true, 7, {}};
  }
  std::size_t count(const std::string& call) const {
    std::size_t n = 0;
    for (const auto& c : calls) n += c == call ? 1 : 0;
    return n;
  }
};

}  // namespace nfsgw::nlm::fake_statd
