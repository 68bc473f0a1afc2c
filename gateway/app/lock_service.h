// [server] nlm_port (issue 21): nfsgw's NLM v4 service, composed. One NlmService
// for every export (the handle names the export); per export an OriginNlm, the
// origin's lock manager (gateway/upstream/origin_nlm.h) at the export's origin
// host, [[export]] origin_nlm_port and origin_statd_port (0: the origin's
// rpcbind); the handle check is the translator's (HandleTranslator::check_handle);
// a granted lock drops the file's cached attributes (forget_attributes). A timer
// asks the origin again for waiters every nlm_retry_interval, and unmonitors the
// client hosts that hold nothing any more.
//
// Status monitoring and restarts (design.md, issue 21, items 7 and 8), with the
// peers LockPeersFactory makes (gateway/upstream in the server): the host's statd
// (HostStatd) monitors client hosts (ClientMonitor) and calls back on UDP
// (StatdCallback) when one rebooted; granted waiters' clients get NLM_GRANTED
// (ClientNlm). The NSM record (<cache dir>/nsm) is moved to the next state and
// saved before the service is built, so before anyone is told; start() begins
// the grace period and then, in the background: SM_UNMON_ALL (what the last run
// left with statd; no SM_MON of this run goes before it), SM_NOTIFY to every
// origin's statd that nfsgw's caller name restarted (the origin drops the locks
// nfsgw held), then SM_NOTIFY to every client host of the record (they reclaim);
// the hosts that answered leave the record. stop() saves the record's down state.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "config/config.h"
#include "gateway/metrics/metrics_collector.h"
#include "gateway/nlm/client_results.h"
#include "gateway/nlm/nlm_service.h"
#include "gateway/nlm/share_service.h"

namespace nfsgw {

class HandleTranslator;

/// Makes the origin lock manager of an export (gateway/upstream's OriginNlm in
/// the server), given nfsgw's caller name at the origin; nullptr: none.
using OriginLocksFactory =
    std::function<std::unique_ptr<nlm::OriginLocks>(const config::ExportConfig&, const std::string& caller_name)>;
/// Stops an origin lock manager's calls (OriginNlm::stop).
using OriginLocksStop = std::function<void(nlm::OriginLocks&)>;

/// What the lock service reaches besides the origins.
struct LockPeers {
  std::unique_ptr<nlm::StatusMonitor> statd;      // the host's statd; nullptr: no monitoring
  /// The host's statd again, for the origin hosts (their own callback version, upstream::origin_callback_version):
  /// their restarts make nfsgw reclaim its locks there; nullptr: not watched.
  std::unique_ptr<nlm::StatusMonitor> origin_statd;
  std::unique_ptr<nlm::ClientCallbacks> clients;  // NLM_GRANTED to clients; nullptr: none
  nlm::ClientResults* results = nullptr;          // the _RES calls (usually `clients` too); nullptr: none
  /// SM_NOTIFY {host.my_name, state} to each host's statd: whether each answered.
  std::function<Awaitable<std::vector<bool>>(std::vector<nlm::MonitoredHost>, std::int32_t)> notify_hosts;
  std::function<void()> stop;  // ends their calls
};
/// Makes the peers, given the version of statd's callback (my_vers of SM_MON).
using LockPeersFactory = std::function<LockPeers(std::uint32_t callback_version)>;

namespace upstream {
class StatdCallback;
}

class LockService {
 public:
  /// `forget_attributes(export_id, origin handle)`: the export's cached attributes
  /// of the file are dropped (nothing when the export caches none).
  LockService(boost::asio::io_context& io, const config::Config& cfg, HandleTranslator& translator,
              std::function<void(std::uint32_t, const nfs3::FileHandle&)> forget_attributes,
              const OriginLocksFactory& make_origin, OriginLocksStop stop_origin,
              const LockPeersFactory& make_peers = {});
  ~LockService();

  nlm::NlmService& service() { return *service_; }
  /// Begins the grace period, the waiters' timer and the restart notices.
  void start();
  /// Stops the timer and every origin call; saves the NSM record's down state.
  void stop();
  /// An export added by a reload: its origin's lock manager joins (locks on the
  /// export are carried there from now on), the origin is told of this run's
  /// state and its host watched by statd (the timer asks). Nothing when the
  /// export's id has one already. From any thread.
  void add_export(const config::ExportConfig& e);

  /// nullptr without status monitoring.
  nlm::ClientMonitor* monitor() { return monitor_.get(); }
  /// The _RES calls answering clients' _MSG requests; nullptr: none.
  nlm::ClientResults* results() { return peers_.results; }
  /// SHARE and UNSHARE (DOS share reservations), carried to the same origins.
  nlm::ShareService& shares() { return *shares_; }
  /// What the metrics endpoint shows of it. From any thread.
  metrics::LockFigures figures() const;

 private:
  void arm();
  /// SM_UNMON_ALL, then the origins, then the client hosts of the record are told.
  Awaitable<void> tell_restart();
  /// SM_MON of every origin host not monitored yet (at start, then by the timer
  /// until statd has taken them all).
  Awaitable<void> monitor_origins();
  /// statd's callback for an origin host: its exports' locks are reclaimed there.
  void origin_rebooted(nsm::Status st);
  /// Tells export `id`'s origin that nfsgw's caller name is at NSM state `state`.
  Awaitable<void> tell_origin(std::uint32_t id, nlm::OriginLocks* origin, std::int32_t state);
  /// The origins and the origin hosts, as they are now (under origin_mu_).
  std::vector<std::pair<std::uint32_t, nlm::OriginLocks*>> origins_now() const;
  std::vector<std::string> origin_hosts_now() const;

  boost::asio::io_context& io_;
  /// Under origin_mu_ (a reload adds to them); an origin, once made, stays until
  /// the service ends, so the pointers handed out stay valid.
  std::unordered_map<std::uint32_t, std::unique_ptr<nlm::OriginLocks>> origins_;
  OriginLocksFactory make_origin_;
  OriginLocksStop stop_origin_;
  LockPeers peers_;
  std::string caller_name_;
  std::unique_ptr<nlm::ClientMonitor> monitor_;
  /// The client hosts the last run monitored: told of the restart by start().
  std::vector<nlm::MonitoredHost> to_tell_;
  /// The origin hosts (as in the exports' origin URLs) and their exports with locks.
  std::map<std::string, std::set<std::uint32_t>> origin_hosts_;  // under origin_mu_
  mutable std::mutex origin_mu_;
  std::set<std::string> origins_monitored_;  // under origin_mu_
  std::atomic<bool> origins_started_{false};  // monitor_origins() may run from the timer
  std::unique_ptr<nlm::NlmService> service_;
  std::unique_ptr<nlm::ShareService> shares_;
  std::unique_ptr<upstream::StatdCallback> callback_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::steady_timer timer_;  // on strand_
  std::chrono::milliseconds interval_;
  std::atomic<bool> stopped_{false};
};

}  // namespace nfsgw
