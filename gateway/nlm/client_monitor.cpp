// ClientMonitor (client_monitor.h): SM_MON / SM_UNMON of client hosts, in step
// with the NSM record.
#include "gateway/nlm/client_monitor.h"

#include <algorithm>
#include <utility>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

namespace nfsgw::nlm {

namespace client_monitor_cpp {

/// How often a hold() looks again at a host whose SM_MON or SM_UNMON is in flight.
constexpr std::chrono::milliseconds kPoll{5};

/// statd gives priv back in its callback; nfsgw finds the host by mon_name, so
/// priv only says the callback is nfsgw's.
nsm::Priv nfsgw_priv() {
  nsm::Priv p{};
  const char tag[] = "nfsgw-nlm";
  std::copy(tag, tag + sizeof tag - 1, p.begin());
  return p;
}

}  // namespace client_monitor_cpp

ClientMonitor::ClientMonitor(StatusMonitor& statd, NsmRecordFile file, NsmRecord record,
                             std::chrono::milliseconds bound)
    : statd_(statd), file_(std::move(file)), bound_(bound), record_(std::move(record)) {}

std::string ClientMonitor::save_locked() { return file_.save(record_); }

Awaitable<bool> ClientMonitor::hold(MonitoredHost h) {
  using namespace client_monitor_cpp;
  const std::string name = h.mon_name;
  const long polls = std::max<long>(1, static_cast<long>(bound_ / kPoll));
  for (long i = 0;; ++i) {
    {
      std::lock_guard g(mu_);
      auto it = hosts_.find(name);
      if (!started_) {
        // The start's SM_UNMON_ALL is not answered yet: wait.
      } else if (it == hosts_.end()) {
        hosts_[name] = Host{Phase::Monitoring, 1};
        break;  // this request monitors it
      } else if (it->second.phase == Phase::Monitored) {
        ++it->second.holds;
        // The same caller name from another address: the record follows it.
        const MonitoredHost* kept = record_.find(name);
        if (kept == nullptr || !(*kept == h)) {
          record_.add(h);
          if (std::string why = save_locked(); !why.empty())
            spdlog::error("NLM: NSM record {}: cannot save {}'s new address: {}", file_.path().string(), name, why);
        }
        co_return true;
      }
    }
    // Its SM_MON or SM_UNMON (or the start's SM_UNMON_ALL) is in flight: wait for it.
    if (i >= polls) {
      std::lock_guard g(mu_);
      ++counts_.refused;
      spdlog::warn("NLM: {} is still being (un)monitored after {} ms; lock refused", name, bound_.count());
      co_return false;
    }
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, kPoll);
    co_await t.async_wait(boost::asio::use_awaitable);
  }
  if (std::string why = invalid_host(h); !why.empty()) {
    std::lock_guard g(mu_);
    hosts_.erase(name);
    ++counts_.refused;
    spdlog::warn("NLM: client host '{}' cannot be monitored: {}", name, why);
    co_return false;
  }
  Awaitable<MonitorReply> call = statd_.monitor(name, nfsgw_priv());  // no temporary inside co_await (GCC 12)
  const MonitorReply r = co_await std::move(call);
  std::lock_guard g(mu_);
  if (!r.ok) {
    hosts_.erase(name);
    ++counts_.refused;
    spdlog::warn("NLM: statd did not monitor client host {} ({}): its locks are refused", name, r.error);
    co_return false;
  }
  record_.add(h);
  if (std::string why = save_locked(); !why.empty()) {
    // statd monitors it, but a restart could not tell it: no lock for it. (statd
    // keeps it until the next start's SM_UNMON_ALL, or a later hold's save.)
    record_.remove(name);
    hosts_.erase(name);
    ++counts_.refused;
    spdlog::error("NLM: NSM record {}: cannot save client host {}: {}; its locks are refused",
                  file_.path().string(), name, why);
    co_return false;
  }
  ++counts_.monitored;
  hosts_[name].phase = Phase::Monitored;
  spdlog::info("NLM: client host {} monitored (statd at {}, knows nfsgw as {})", name, h.address, h.my_name);
  co_return true;
}

void ClientMonitor::unhold(const std::string& mon_name) {
  std::lock_guard g(mu_);
  auto it = hosts_.find(mon_name);
  if (it != hosts_.end() && it->second.holds > 0) --it->second.holds;
}

std::vector<std::string> ClientMonitor::take_unused(const std::function<bool(const std::string&)>& in_use) {
  std::vector<std::string> out;
  std::lock_guard g(mu_);
  for (auto& [name, host] : hosts_) {
    if (host.phase != Phase::Monitored || host.holds > 0 || in_use(name)) continue;
    host.phase = Phase::Unmonitoring;
    out.push_back(name);
  }
  return out;
}

Awaitable<void> ClientMonitor::unmonitor(std::vector<std::string> names) {
  for (const std::string& name : names) {
    Awaitable<MonitorReply> call = statd_.unmonitor(name);
    const MonitorReply r = co_await std::move(call);
    if (!r.ok) spdlog::warn("NLM: SM_UNMON of client host {}: {}", name, r.error);
  }
  if (names.empty()) co_return;
  std::lock_guard g(mu_);
  for (const std::string& name : names) {
    hosts_.erase(name);
    record_.remove(name);
    ++counts_.unmonitored;
  }
  if (std::string why = save_locked(); !why.empty())
    spdlog::error("NLM: NSM record {}: cannot save after unmonitoring: {}", file_.path().string(), why);
  spdlog::info("NLM: {} client hosts unmonitored (they hold no locks)", names.size());
}

void ClientMonitor::wait_for_start() {
  std::lock_guard g(mu_);
  started_ = false;
}

Awaitable<MonitorReply> ClientMonitor::unmonitor_all() {
  Awaitable<MonitorReply> call = statd_.unmonitor_all();
  MonitorReply r = co_await std::move(call);
  std::lock_guard g(mu_);
  started_ = true;
  co_return r;
}

std::vector<MonitoredHost> ClientMonitor::recorded() const {
  std::lock_guard g(mu_);
  return record_.hosts;
}

void ClientMonitor::forget_told(const std::vector<MonitoredHost>& told) {
  std::lock_guard g(mu_);
  bool changed = false;
  for (const MonitoredHost& h : told) {
    if (hosts_.contains(h.mon_name)) continue;  // monitored again by this run
    const MonitoredHost* kept = record_.find(h.mon_name);
    if (kept != nullptr && *kept == h) changed = record_.remove(h.mon_name) || changed;
  }
  if (!changed) return;
  if (std::string why = save_locked(); !why.empty())
    spdlog::error("NLM: NSM record {}: cannot save: {}", file_.path().string(), why);
}

std::string ClientMonitor::save_down() {
  std::lock_guard g(mu_);
  record_.state = down_state(record_.state);
  return save_locked();
}

std::int32_t ClientMonitor::state() const {
  std::lock_guard g(mu_);
  return record_.state;
}

bool ClientMonitor::monitored(const std::string& mon_name) const {
  std::lock_guard g(mu_);
  auto it = hosts_.find(mon_name);
  return it != hosts_.end() && it->second.phase == Phase::Monitored;
}

std::size_t ClientMonitor::monitored_count() const {
  std::lock_guard g(mu_);
  return static_cast<std::size_t>(
      std::count_if(hosts_.begin(), hosts_.end(), [](const auto& e) { return e.second.phase == Phase::Monitored; }));
}

MonitorCounts ClientMonitor::counts() const {
  std::lock_guard g(mu_);
  return counts_;
}

}  // namespace nfsgw::nlm
