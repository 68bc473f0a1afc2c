#include "gateway/app/origin_locks_factory.h"

#include <cstdlib>
#include <string>

#include <spdlog/spdlog.h>

#include "gateway/upstream/client_nlm.h"
#include "gateway/upstream/host_statd.h"
#include "gateway/upstream/origin_nlm.h"
#include "gateway/upstream/statd_callback.h"

namespace nfsgw {

OriginLocksFactory make_origin_locks(boost::asio::io_context& io) {
  return [&io](const config::ExportConfig& e, const std::string& caller_name) -> std::unique_ptr<nlm::OriginLocks> {
    return std::make_unique<upstream::OriginNlm>(io, e.origin.host, e.origin_nlm_port, e.origin_statd_port,
                                                 e.origin_timeout, caller_name);
  };
}

void stop_origin_locks(nlm::OriginLocks& origin) {
  if (auto* o = dynamic_cast<upstream::OriginNlm*>(&origin)) o->stop();
}

namespace {

/// A port from the environment (test hooks); 0 when unset or not a port.
std::uint16_t port_from_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long p = std::strtol(v, &end, 10);
  if (*end != '\0' || p <= 0 || p > 65535) return 0;
  spdlog::warn("NLM: {}={}: every client's {} is reached on that port (a test hook)", name, p,
               std::string(name).find("STATD") != std::string::npos ? "statd" : "NLM");
  return static_cast<std::uint16_t>(p);
}

}  // namespace

LockPeersFactory make_lock_peers(boost::asio::io_context& io) {
  return [&io](std::uint32_t callback_version) {
    LockPeers p;
    upstream::HostStatd::Options so;
    so.my_vers = static_cast<std::int32_t>(callback_version);
    // statd resolves names on every SM_MON, and the resolver waits 5 s for a lost
    // DNS answer before asking again: the bound leaves room for one such loss.
    so.timeout = std::chrono::milliseconds(15000);
    auto statd = std::make_unique<upstream::HostStatd>(io, so);
    // The origin hosts under a callback version of their own (statd_callback.h).
    upstream::HostStatd::Options oo = so;
    oo.my_vers = static_cast<std::int32_t>(upstream::origin_callback_version(callback_version));
    auto origin_statd = std::make_unique<upstream::HostStatd>(io, oo);
    upstream::ClientNlm::Options co;
    co.port = port_from_env("NFSGW_NLM_CLIENT_NLM_PORT");
    auto clients = std::make_unique<upstream::ClientNlm>(io, co);
    upstream::HostStatd* s = statd.get();
    upstream::HostStatd* os = origin_statd.get();
    upstream::ClientNlm* c = clients.get();
    p.stop = [s, os, c] {
      s->stop();
      os->stop();
      c->stop();
    };
    p.statd = std::move(statd);
    p.origin_statd = std::move(origin_statd);
    p.results = c;
    p.clients = std::move(clients);
    const std::uint16_t statd_port = port_from_env("NFSGW_NLM_CLIENT_STATD_PORT");
    p.notify_hosts = [&io, statd_port](std::vector<nlm::MonitoredHost> hosts,
                                       std::int32_t state) -> Awaitable<std::vector<bool>> {
      Awaitable<std::vector<nlm::MonitorReply>> notify =
          upstream::notify_restart(io, std::move(hosts), state, statd_port, std::chrono::milliseconds(5000));
      std::vector<nlm::MonitorReply> replies = co_await std::move(notify);
      std::vector<bool> ok;
      for (const nlm::MonitorReply& r : replies) ok.push_back(r.ok);
      co_return ok;
    };
    return p;
  };
}

}  // namespace nfsgw
