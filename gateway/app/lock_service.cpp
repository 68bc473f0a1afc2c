#include "gateway/app/lock_service.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "gateway/translator/handle_translator.h"
#include "gateway/upstream/statd_callback.h"

namespace nfsgw {

namespace asio = boost::asio;

namespace {

/// The NLM status for a handle the translator refused.
nlm4::Stat verdict(nfs3::Status s) {
  switch (s) {
    case nfs3::Status::Ok: return nlm4::Stat::Granted;
    case nfs3::Status::Acces:
    case nfs3::Status::Perm: return nlm4::Stat::Denied;
    case nfs3::Status::ServerFault: return nlm4::Stat::Failed;
    default: return nlm4::Stat::StaleFh;  // BadHandle, Stale
  }
}

/// This run of nfsgw, told apart from the one before a restart (OwnerMap).
std::string instance_name() {
  const auto s = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return std::to_string(s.count());
}

/// nfsgw's caller name at the origins: [server] nlm_caller_name, else this host's
/// name, which the origin's statd can resolve and monitor.
std::string caller_name(const std::string& configured) {
  if (!configured.empty()) return configured;
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

/// The name a client knows nfsgw by: the address it sends its calls to. The
/// address this host sends from towards the client (its route) is that address
/// unless the client came by another route, and it is right behind a DNAT too;
/// when it cannot be told, [server] listen when that is one address. "" when
/// neither.
std::string server_address_for(asio::io_context& io, const std::string& listen, const std::string& client) {
  boost::system::error_code ec;
  const asio::ip::address l = asio::ip::make_address(listen, ec);
  const std::string fallback = !ec && !l.is_unspecified() ? l.to_string() : std::string();
  const asio::ip::address c = asio::ip::make_address(client, ec);
  if (ec) return fallback;
  asio::ip::udp::socket s(io);
  s.open(c.is_v4() ? asio::ip::udp::v4() : asio::ip::udp::v6(), ec);
  if (ec) return fallback;
  s.connect(asio::ip::udp::endpoint(c, 111), ec);  // sends nothing: picks the source address
  if (ec) return fallback;
  asio::ip::address a = s.local_endpoint(ec).address();
  if (ec) return fallback;
  if (a.is_v6() && a.to_v6().is_v4_mapped()) a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  return a.to_string();
}

}  // namespace

LockService::LockService(asio::io_context& io, const config::Config& cfg, HandleTranslator& translator,
                         std::function<void(std::uint32_t, const nfs3::FileHandle&)> forget_attributes,
                         const OriginLocksFactory& make_origin, OriginLocksStop stop_origin,
                         const LockPeersFactory& make_peers)
    : io_(io), strand_(asio::make_strand(io)), timer_(strand_), interval_(cfg.server.nlm_retry_interval) {
  stop_origin_ = std::move(stop_origin);
  make_origin_ = make_origin;
  nlm::NlmSettings s;
  s.limits.max_locks = cfg.server.nlm_max_locks;
  s.limits.max_waiters = cfg.server.nlm_max_waiters;
  s.max_owners = cfg.server.nlm_max_owners;
  s.grace = cfg.server.nlm_grace;
  s.retry_interval = cfg.server.nlm_retry_interval;
  s.instance = instance_name();
  s.caller_name = caller_name(cfg.server.nlm_caller_name);
  for (const auto& e : cfg.exports) {
    if (auto o = make_origin(e, s.caller_name)) {
      origins_[e.id] = std::move(o);
      origin_hosts_[e.origin.host].insert(e.id);
    }
  }
  auto check = [&translator](const CallContext& ctx, const nfs3::FileHandle& fh) -> Awaitable<nlm::CheckedHandle> {
    HandleTranslator::CheckedHandle c = co_await translator.check_handle(ctx, fh);
    nlm::CheckedHandle out;
    out.verdict = verdict(c.status);
    out.export_id = c.export_id;
    out.origin = c.origin;
    out.cred = std::move(c.cred);
    co_return out;
  };
  auto origin_for = [this](std::uint32_t id) -> nlm::OriginLocks* {
    std::lock_guard g(origin_mu_);
    auto it = origins_.find(id);
    return it == origins_.end() ? nullptr : it->second.get();
  };
  service_ = std::make_unique<nlm::NlmService>(check, origin_for, s, [] { return std::chrono::steady_clock::now(); });
  service_->on_granted(std::move(forget_attributes));
  // SHARE / UNSHARE: the same handle check, origins, grace and caller name; at
  // most nlm_max_locks reservations (owners of a run of their own at the origin).
  nlm::ShareSettings ss;
  ss.max_shares = cfg.server.nlm_max_locks;
  ss.grace = s.grace;
  ss.caller_name = s.caller_name;
  ss.instance = s.instance;
  shares_ = std::make_unique<nlm::ShareService>(check, origin_for, ss, [] { return std::chrono::steady_clock::now(); });
  caller_name_ = s.caller_name;
  const std::uint32_t version = upstream::callback_version(cfg.server.nlm_port);
  if (make_peers) peers_ = make_peers(version);
  if (peers_.clients) service_->use_callbacks(peers_.clients.get());
  if (peers_.statd) {
    // The new state is on disk before anyone hears of it (start_run saves it).
    nlm::NsmRecordFile file(std::filesystem::path(cfg.cache.dir) / "nsm");
    // At least the seconds since 2024 (made odd): a state no earlier run under this
    // caller name used, even with a record lost or in another cache directory.
    const auto since = std::chrono::system_clock::now().time_since_epoch() - std::chrono::seconds(1704067200);
    const auto floor = std::chrono::duration_cast<std::chrono::seconds>(since).count();
    nlm::NsmRecordFile::Loaded run =
        file.start_run(static_cast<std::int32_t>(std::clamp<std::int64_t>(floor, 0, 1'000'000'000)));
    if (!run.ok) throw std::runtime_error("NLM: cannot keep nfsgw's NSM state in " + file.path().string() + ": " + run.error);
    if (!run.error.empty()) spdlog::error("NLM: NSM record {}: {} (its client hosts are not told of this restart)",
                                          file.path().string(), run.error);
    to_tell_ = run.record.hosts;
    spdlog::info("NLM: NSM state {}, {} client hosts of the last run to tell", run.record.state, to_tell_.size());
    monitor_ = std::make_unique<nlm::ClientMonitor>(*peers_.statd, std::move(file), std::move(run.record));
    monitor_->wait_for_start();
    service_->use_monitor(monitor_.get(), [&io, listen = cfg.server.listen](const std::string& client) {
      return server_address_for(io, listen, client);
    });
    callback_ = std::make_unique<upstream::StatdCallback>(io, version, [this](nsm::Status st, nlm::Rebooted who) {
      if (who == nlm::Rebooted::Origin) {
        origin_rebooted(std::move(st));
        return;
      }
      Awaitable<std::size_t> unshare = shares_->host_rebooted(st.mon_name);
      asio::co_spawn(io_, std::move(unshare), asio::detached);
      Awaitable<void> release = service_->host_rebooted(std::move(st));
      asio::co_spawn(io_, std::move(release), asio::detached);
    });
  }
  spdlog::info("NLM: lock service for {} exports (caller name {} at the origins, grace {} ms, waiters retried every {} ms)",
               origins_.size(), s.caller_name, cfg.server.nlm_grace.count(), interval_.count());
}

LockService::~LockService() = default;

void LockService::start() {
  service_->begin_grace();
  shares_->begin_grace();
  if (callback_) callback_->start();
  if (monitor_) asio::co_spawn(io_, tell_restart(), asio::detached);
  asio::post(strand_, [this] { arm(); });
}

Awaitable<void> LockService::tell_restart() {
  const std::int32_t state = monitor_->state();
  // Awaitables bound to names first: no temporary inside co_await (GCC 12).
  Awaitable<nlm::MonitorReply> unmonitor_all = monitor_->unmonitor_all();
  const nlm::MonitorReply all = co_await std::move(unmonitor_all);
  if (!all.ok) spdlog::warn("NLM: SM_UNMON_ALL at start: {}", all.error);
  if (peers_.origin_statd) {
    // The origin hosts the last run had statd watch, then this run's.
    Awaitable<nlm::MonitorReply> unmonitor_origins = peers_.origin_statd->unmonitor_all();
    const nlm::MonitorReply origins_all = co_await std::move(unmonitor_origins);
    if (!origins_all.ok) spdlog::warn("NLM: SM_UNMON_ALL of the origin hosts at start: {}", origins_all.error);
    Awaitable<void> watch = monitor_origins();
    co_await std::move(watch);
    origins_started_ = true;
  }
  // The origins first: they drop the locks nfsgw held before its clients reclaim them.
  for (const auto& [id, o] : origins_now()) {
    if (stopped_) co_return;
    Awaitable<void> tell = tell_origin(id, o, state);
    co_await std::move(tell);
  }
  if (to_tell_.empty() || !peers_.notify_hosts || stopped_) co_return;
  Awaitable<std::vector<bool>> notify_hosts = peers_.notify_hosts(to_tell_, state);
  std::vector<bool> answered = co_await std::move(notify_hosts);
  std::vector<nlm::MonitoredHost> told;
  for (std::size_t i = 0; i < to_tell_.size() && i < answered.size(); ++i) {
    if (answered[i]) {
      told.push_back(to_tell_[i]);
    } else {
      spdlog::warn("NLM: client host {} (statd at {}) not told of the restart: it stays in the record",
                   to_tell_[i].mon_name, to_tell_[i].address);
    }
  }
  monitor_->forget_told(told);
  spdlog::info("NLM: {} of {} client hosts told of the restart (state {})", told.size(), to_tell_.size(), state);
}

Awaitable<void> LockService::tell_origin(std::uint32_t id, nlm::OriginLocks* origin, std::int32_t state) {
  Awaitable<bool> notify = origin->notify_restart(caller_name_, state);
  const bool told = co_await std::move(notify);
  if (told) {
    spdlog::info("NLM: export {}'s origin told that {} restarted (state {})", id, caller_name_, state);
  } else {
    spdlog::warn("NLM: export {}'s origin statd did not answer SM_NOTIFY: it may keep the locks nfsgw held "
                 "before the restart",
                 id);
  }
}

std::vector<std::pair<std::uint32_t, nlm::OriginLocks*>> LockService::origins_now() const {
  std::lock_guard g(origin_mu_);
  std::vector<std::pair<std::uint32_t, nlm::OriginLocks*>> out;
  for (const auto& [id, o] : origins_) out.emplace_back(id, o.get());
  return out;
}

std::vector<std::string> LockService::origin_hosts_now() const {
  std::lock_guard g(origin_mu_);
  std::vector<std::string> out;
  for (const auto& [host, exports] : origin_hosts_) out.push_back(host);
  return out;
}

metrics::LockFigures LockService::figures() const {
  metrics::LockFigures f;
  f.locks = service_->lock_count();
  f.waiters = service_->waiter_count();
  f.owners = service_->owner_count();
  f.shares = shares_->share_count();
  const nlm::NlmCounts c = service_->counts();
  const nlm::ShareCounts s = shares_->counts();
  f.events = {{"granted", c.granted},
              {"denied_local", c.denied_local},
              {"denied_origin", c.denied_origin},
              {"blocked", c.blocked},
              {"waiter_granted", c.waiters_granted},
              {"unclaimed_released", c.unclaimed_dropped},
              {"grant_told", c.grants_told},
              {"grant_untold", c.grants_untold},
              {"no_answer", c.no_answer + s.no_answer},
              {"origin_call", c.origin_calls + s.origin_calls},
              {"stale_handle", c.stale + s.stale},
              {"not_monitored", c.not_monitored},
              {"client_reboot", c.reboots},
              {"reclaim_retried", c.reclaims_retried},
              {"origin_restart", c.origin_restarts},
              {"origin_reclaimed", c.origin_reclaimed},
              {"origin_reclaim_lost", c.origin_reclaims_lost},
              {"share_granted", s.granted},
              {"share_denied", s.denied},
              {"share_over_bound", s.over_bound},
              {"share_released", s.released},
              {"share_lost", s.lost}};
  return f;
}

void LockService::add_export(const config::ExportConfig& e) {
  if (!make_origin_ || stopped_) return;
  nlm::OriginLocks* added = nullptr;
  {
    std::lock_guard g(origin_mu_);
    if (origins_.contains(e.id)) return;
    std::unique_ptr<nlm::OriginLocks> o = make_origin_(e, caller_name_);
    if (!o) return;
    added = o.get();
    origins_[e.id] = std::move(o);
    origin_hosts_[e.origin.host].insert(e.id);
  }
  spdlog::info("NLM: export {} (added by a reload) locks at its origin {}", e.path, e.origin.host);
  // Its origin may hold locks of an earlier run under this caller name; this run's
  // are kept (each carries this run's state). The timer has statd watch its host.
  if (monitor_) asio::co_spawn(io_, tell_origin(e.id, added, monitor_->state()), asio::detached);
}

Awaitable<void> LockService::monitor_origins() {
  for (const std::string& host : origin_hosts_now()) {
    {
      std::lock_guard g(origin_mu_);
      if (origins_monitored_.contains(host)) continue;
    }
    if (stopped_) co_return;
    // priv is not needed (the procedure says it is an origin, mon_name which).
    Awaitable<nlm::MonitorReply> mon = peers_.origin_statd->monitor(host, nsm::Priv{});
    const nlm::MonitorReply r = co_await std::move(mon);
    if (r.ok) {
      std::lock_guard g(origin_mu_);
      origins_monitored_.insert(host);
      spdlog::info("NLM: statd watches origin host {} (its restart makes nfsgw reclaim its locks there)", host);
    } else {
      spdlog::warn("NLM: statd does not watch origin host {} yet ({}): asked again in {} ms; until then a restart "
                   "of that origin loses the locks nfsgw holds there",
                   host, r.error, interval_.count());
    }
  }
}

void LockService::origin_rebooted(nsm::Status st) {
  std::set<std::uint32_t> exports;
  {
    std::lock_guard g(origin_mu_);
    if (auto it = origin_hosts_.find(st.mon_name); it != origin_hosts_.end()) exports = it->second;
  }
  if (exports.empty()) {
    spdlog::warn("NLM: statd says {} restarted (state {}), which is no origin host of an export", st.mon_name,
                 st.state);
    return;
  }
  spdlog::warn("NLM: statd says origin host {} restarted (state {})", st.mon_name, st.state);
  Awaitable<nlm::OriginReclaim> reclaim = service_->origin_restarted(exports, st.mon_name);
  asio::co_spawn(io_, std::move(reclaim), asio::detached);
  Awaitable<std::size_t> shares_again = shares_->origin_restarted(exports);
  asio::co_spawn(io_, std::move(shares_again), asio::detached);
}

void LockService::arm() {  // on strand_
  timer_.expires_after(interval_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    asio::co_spawn(
        io_,
        [this]() -> Awaitable<void> {
          try {
            if (peers_.origin_statd && origins_started_) {
              bool all;
              {
                std::lock_guard g(origin_mu_);
                all = origins_monitored_.size() == origin_hosts_.size();
              }
              if (!all) {
                Awaitable<void> watch = monitor_origins();
                co_await std::move(watch);
              }
            }
            co_await service_->retry_waiters();
          } catch (const std::exception& e) {
            spdlog::warn("NLM: asking the origin for waiters failed: {}", e.what());
          }
          asio::post(strand_, [this] {
            if (!stopped_) arm();
          });
        },
        asio::detached);
  });
}

void LockService::stop() {
  stopped_ = true;
  asio::post(strand_, [this] { timer_.cancel(); });
  if (stop_origin_)
    for (const auto& [id, o] : origins_now()) stop_origin_(*o);
  if (callback_) callback_->stop();
  if (peers_.stop) peers_.stop();
  if (monitor_) {
    if (std::string why = monitor_->save_down(); !why.empty())
      spdlog::error("NLM: NSM record: cannot save the down state: {}", why);
  }
}

}  // namespace nfsgw
