#include "config/reload_plan.h"

#include <functional>

#include "config/duration.h"

namespace nfsgw::config {
namespace {

std::string show(const std::string& s) { return "\"" + s + "\""; }
std::string show(bool b) { return b ? "true" : "false"; }
std::string show(std::chrono::milliseconds d) { return show(format_duration(d)); }
template <typename Int>
  requires std::is_integral_v<Int>
std::string show(Int i) {
  return std::to_string(i);
}
std::string show(Access a) { return a == Access::ReadOnly ? "\"ro\"" : "\"rw\""; }
std::string show(Squash s) {
  return s == Squash::None ? "\"none\"" : s == Squash::Root ? "\"root\"" : "\"all\"";
}
std::string show(cache::Consistency c) { return show(std::string(cache::consistency_name(c))); }
std::string show(cache::AccessCheck a) {
  return a == cache::AccessCheck::Origin ? "\"origin\"" : "\"local\"";
}
std::string show(const std::vector<Cidr>& clients) {
  std::string out = "[";
  for (const auto& c : clients) out += (out.size() > 1 ? ", " : "") + show(c.text);
  return out + "]";
}
bool same(const std::vector<Cidr>& a, const std::vector<Cidr>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].text != b[i].text) return false;
  return true;
}
template <typename T>
bool same(const T& a, const T& b) {
  return a == b;
}

/// Collects the lines of one section; `live` changes are taken from `next`,
/// restart-only ones are put back to `running` in the effective configuration.
class Differ {
 public:
  Differ(ReloadPlan& plan, std::string section) : plan_(plan), section_(std::move(section)) {}

  template <typename T>
  void live(const std::string& key, const T& running, const T& next) {
    if (!same(running, next)) plan_.applied.push_back(section_ + key + ": " + show(running) + " -> " + show(next));
  }
  /// `effective` is the field in the effective configuration (a copy of next's).
  template <typename T>
  void restart(const std::string& key, const T& running, T& effective) {
    if (same(running, effective)) return;
    plan_.needs_restart.push_back(section_ + key + ": " + show(running) + " -> " + show(effective) +
                                  " (needs a restart; " + show(running) + " until then)");
    effective = running;
  }

 private:
  ReloadPlan& plan_;
  std::string section_;
};

void diff_server(ReloadPlan& plan, const ServerConfig& r, ServerConfig next) {
  Differ d(plan, "[server] ");
  d.restart("listen", r.listen, next.listen);
  d.restart("nfs_port", r.nfs_port, next.nfs_port);
  d.restart("mount_port", r.mount_port, next.mount_port);
  d.restart("threads", r.threads, next.threads);
  d.restart("register_rpcbind", r.register_rpcbind, next.register_rpcbind);
  d.restart("max_record_bytes", r.max_record_bytes, next.max_record_bytes);
  d.restart("max_connections", r.max_connections, next.max_connections);
  d.restart("max_calls_in_flight", r.max_calls_in_flight, next.max_calls_in_flight);
  d.restart("max_calls_in_flight_total", r.max_calls_in_flight_total, next.max_calls_in_flight_total);
  d.restart("max_pending_mb", r.max_pending_mb, next.max_pending_mb);
  d.restart("max_pending_mb_per_connection", r.max_pending_mb_per_connection, next.max_pending_mb_per_connection);
  d.restart("idle_timeout", r.idle_timeout, next.idle_timeout);
  d.restart("metrics_listen", r.metrics_listen, next.metrics_listen);
}

void diff_cache(ReloadPlan& plan, const CacheConfig& r, CacheConfig next) {
  Differ d(plan, "[cache] ");
  d.restart("dir", r.dir, next.dir);
  d.restart("memory_mb", r.memory_mb, next.memory_mb);
  d.restart("metadata_max_gb", r.metadata_max_gb, next.metadata_max_gb);
  d.restart("block_kb", r.block_kb, next.block_kb);
  d.restart("data_max_gb", r.data_max_gb, next.data_max_gb);
  d.restart("secret_file", r.secret_file, next.secret_file);
}

/// `e` starts as next's export and ends as the effective one.
void diff_export(ReloadPlan& plan, const ExportConfig& r, ExportConfig& e) {
  Differ d(plan, "export " + e.path + ": ");
  d.live("access", r.access, e.access);
  d.live("clients", r.clients, e.clients);
  d.live("squash", r.squash, e.squash);
  d.live("anon_uid", r.anon_uid, e.anon_uid);
  d.live("anon_gid", r.anon_gid, e.anon_gid);
  d.live("consistency", r.coherency.consistency, e.coherency.consistency);
  d.live("access_check", r.coherency.access_check, e.coherency.access_check);
  for (const auto& s : cache::kDurationSettings) d.live(s.key, r.coherency.*s.field, e.coherency.*s.field);
  d.restart("origin", r.origin.text, e.origin.text);
  if (e.origin.text == r.origin.text) e.origin = r.origin;
  d.restart("upstream_connections", r.upstream_connections, e.upstream_connections);
  d.restart("origin_timeout", r.origin_timeout, e.origin_timeout);
  d.restart("metadata_cache", r.coherency.enabled, e.coherency.enabled);
  d.restart("data_cache", r.data_cache, e.data_cache);
  d.restart("readahead_kb", r.readahead_kb, e.readahead_kb);
  e.id = r.id;  // derived from the path: the same
}

}  // namespace

ReloadPlan plan_reload(const Config& running, const Config& next) {
  ReloadPlan plan;
  plan.effective = next;
  plan.effective.server = running.server;
  plan.effective.cache = running.cache;
  diff_server(plan, running.server, next.server);
  diff_cache(plan, running.cache, next.cache);
  for (auto& e : plan.effective.exports) {
    const ExportConfig* r = nullptr;
    for (const auto& x : running.exports)
      if (x.path == e.path) r = &x;
    if (r) {
      diff_export(plan, *r, e);
    } else {
      plan.added.push_back(e.path);
    }
  }
  for (const auto& x : running.exports) {
    bool kept = false;
    for (const auto& e : next.exports) kept = kept || e.path == x.path;
    if (!kept) plan.removed.push_back(x.path);
  }
  return plan;
}

std::vector<std::string> ReloadPlan::lines() const {
  std::vector<std::string> out;
  for (const auto& a : applied) out.push_back("applied: " + a);
  for (const auto& p : added) out.push_back("applied: added export " + p);
  for (const auto& p : removed) out.push_back("applied: removed export " + p + " (its handles answer STALE)");
  for (const auto& n : needs_restart) out.push_back("needs a restart: " + n);
  if (out.empty()) out.push_back("no changes");
  return out;
}

}  // namespace nfsgw::config
