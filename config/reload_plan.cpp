// The plan walks the key tables (config/key.h): each key says whether a reload
// applies it at once, keeps it until a restart, or (an export's path) names the
// export.
#include "config/reload_plan.h"

#include <algorithm>

#include "config/key.h"

namespace nfsgw::config {
namespace {

/// Compares one section key by key. `effective` starts as next's section: a
/// changed live key stays, a changed restart-only key is put back to `running`.
template <typename S>
void diff(ReloadPlan& plan, const std::string& prefix, const SectionKeys<S>& section, const S& running,
          S& effective) {
  for (const auto& k : section.keys) {
    const std::string was = k.show(running);
    const std::string now = k.show(effective);
    if (was == now) continue;
    const std::string change = prefix + k.name + ": " + was + " -> " + now;
    switch (k.reload) {
      case Reload::Live:
        plan.applied.push_back(change);
        break;
      case Reload::Restart:
        plan.needs_restart.push_back(change + " (needs a restart; " + was + " until then)");
        k.copy(running, effective);
        break;
      case Reload::Identity:
        break;  // exports are matched by path: it never differs here
    }
  }
}

/// `writes = "back"` needs the metadata cache; `metadata_cache` waits for a
/// restart, so a reload turning both on keeps `writes` as it runs until then too
/// (the file itself was valid: only the mix of old and new values is not). A
/// reload from "back" to "through" always applies: the gateway flushes first.
void keep_writes_with_cache(ReloadPlan& plan, const std::string& prefix, const ExportConfig& running,
                            ExportConfig& effective) {
  if (effective.writes != Writes::Back || effective.coherency.enabled) return;
  const std::string change = prefix + "writes: ";
  const auto it = std::find_if(plan.applied.begin(), plan.applied.end(),
                               [&](const std::string& l) { return l.rfind(change, 0) == 0; });
  if (it != plan.applied.end()) {
    plan.needs_restart.push_back(*it + " (needs a restart, as metadata_cache does; \"through\" until then)");
    plan.applied.erase(it);
  }
  effective.writes = running.writes;
}

}  // namespace

ReloadPlan plan_reload(const Config& running, const Config& next) {
  ReloadPlan plan;
  plan.effective = next;
  diff(plan, "[server] ", server_keys(), running.server, plan.effective.server);
  diff(plan, "[cache] ", cache_keys(), running.cache, plan.effective.cache);
  for (auto& e : plan.effective.exports) {
    const ExportConfig* r = nullptr;
    for (const auto& x : running.exports)
      if (x.path == e.path) r = &x;
    if (r) {
      diff(plan, "export " + e.path + ": ", export_keys(), *r, e);
      keep_writes_with_cache(plan, "export " + e.path + ": ", *r, e);
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
