// Which client hosts nfsgw has the host's statd monitor, kept in step with the
// NSM record on disk (issue 21, design.md "Byte-range locks", items 7 and 8).
//
// A client host is monitored (SM_MON, mon_name = its NLM caller_name) when it
// first asks for a lock, before anything of it reaches the origin, and recorded
// in the NsmRecordFile (durably, before the lock goes on) with the address of its
// statd and the server address it used, so that a restarted nfsgw can tell it.
// It is unmonitored (SM_UNMON) and removed from the record once it holds and
// waits for nothing: the service asks for that now and then (take_unused, then
// unmonitor), never while a request of that host is between hold() and unhold().
//
// One host is never monitored and unmonitored at the same time: a hold() that
// finds its SM_MON or SM_UNMON in flight waits for it (polling, bounded), so
// statd always sees them in the order they were decided.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gateway/awaitable.h"
#include "gateway/nlm/nsm_record.h"
#include "gateway/nlm/status_monitor.h"

namespace nfsgw::nlm {

struct MonitorCounts {
  std::uint64_t monitored = 0;    // SM_MON answered stat_succ
  std::uint64_t unmonitored = 0;  // SM_UNMON sent (answered or not)
  std::uint64_t refused = 0;      // SM_MON not answered stat_succ, or the record not saved
};

class ClientMonitor {
 public:
  /// `record`: the record of this run (NsmRecordFile::start_run's: the new state
  /// and the hosts the last run monitored, still to be told). `bound`: how long a
  /// hold() waits for another call about the same host.
  ClientMonitor(StatusMonitor& statd, NsmRecordFile file, NsmRecord record,
                std::chrono::milliseconds bound = std::chrono::seconds(10));

  /// Counts a request of `h.mon_name` in progress, and monitors the host first when
  /// it is not yet: SM_MON, then the record saved with `h`. True when the host is
  /// monitored and recorded; false (logged) when statd refused or did not answer,
  /// or the record could not be saved. Every hold() is followed by one unhold().
  Awaitable<bool> hold(MonitoredHost h);
  void unhold(const std::string& mon_name);

  /// The monitored hosts `in_use` says no longer hold anything, and that no
  /// request holds: marked as being unmonitored. Call it while `in_use` cannot
  /// change (the service's mutex held), then unmonitor() the result.
  std::vector<std::string> take_unused(const std::function<bool(const std::string&)>& in_use);
  /// SM_UNMON of each, then their removal from the record (one save).
  Awaitable<void> unmonitor(std::vector<std::string> names);

  /// From now until unmonitor_all() has been answered, hold() waits (bounded):
  /// no SM_MON of this run may go before the SM_UNMON_ALL that clears the last's.
  void wait_for_start();
  /// SM_UNMON_ALL: what an earlier run left monitored (at start).
  Awaitable<MonitorReply> unmonitor_all();
  /// The hosts in the record (those of the last run, until forgotten, and this run's).
  std::vector<MonitoredHost> recorded() const;
  /// Removes `told` (hosts of the last run that were told of the restart) from
  /// the record, except any this run monitors again meanwhile.
  void forget_told(const std::vector<MonitoredHost>& told);
  /// The record's state moved to down_state, saved (a clean stop). "" or the reason.
  std::string save_down();

  std::int32_t state() const;
  bool monitored(const std::string& mon_name) const;
  std::size_t monitored_count() const;
  MonitorCounts counts() const;

 private:
  enum class Phase { Monitoring, Monitored, Unmonitoring };
  struct Host {
    Phase phase = Phase::Monitoring;
    int holds = 0;
  };
  /// Saves record_ (mu_ held); "" or the reason.
  std::string save_locked();

  StatusMonitor& statd_;
  NsmRecordFile file_;
  std::chrono::milliseconds bound_;
  mutable std::mutex mu_;
  NsmRecord record_;
  std::map<std::string, Host> hosts_;
  bool started_ = true;  // false from wait_for_start() until unmonitor_all() ends
  MonitorCounts counts_;
};

}  // namespace nfsgw::nlm
