// What a reload of the configuration changes: the running configuration against a
// newly read one, split into what applies live and what needs a restart.
//
// Each key's table entry (config/key.h) says which: in short, an export's access,
// clients, squash, ids and metadata cache windows apply live, exports are added and
// removed, and the rest ([server], [cache], what an export's stack is built from)
// needs a restart. An export is known by its path (its id, in clients' handles, is
// derived from the path: a renamed export is one removed and one added).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace nfsgw::config {

struct ReloadPlan {
  /// What runs after the reload: `next` with every restart-only setting kept as it
  /// runs now ([server], [cache], and those keys of exports that stay).
  Config effective;
  /// One line per change that applies now ("export /data: dir_ttl 30s -> 1s").
  std::vector<std::string> applied;
  /// One line per change that waits for a restart
  /// ("[server] threads: 4 -> 8 (needs a restart; 4 until then)").
  std::vector<std::string> needs_restart;
  std::vector<std::string> added;    // export paths
  std::vector<std::string> removed;  // export paths

  bool unchanged() const { return applied.empty() && needs_restart.empty() && added.empty() && removed.empty(); }
  /// Every line above, for the log and the reload's answer: "applied: ...",
  /// "added export /x", "removed export /y", "needs a restart: ...", or
  /// "no changes".
  std::vector<std::string> lines() const;
};

/// Compares `running` (the configuration in effect) with `next` (a valid one just
/// read). Never throws for valid configurations.
ReloadPlan plan_reload(const Config& running, const Config& next);

}  // namespace nfsgw::config
