// Live reload of the configuration (SIGHUP, `nfsgw reload`): reads the file,
// refuses it with the start-up message when it is not valid (the running
// configuration stays), else compares it with the running one
// (config/reload_plan.h) and hands the result to the gateway to apply.
//
// Every configuration that ever ran is kept (reloads are rare, each is a few KiB):
// the layers read their export's settings through pointers into them, published
// atomically, so a call never takes a lock or a reference count for its settings
// and a call in flight may keep using the generation it entered with.
//
//   ConfigReloader reloader(std::move(cfg), path, [&](const config::Config& now,
//                                                     const config::ReloadPlan& plan) { ...; return notes; });
//   reloader.reload(path);           // on a thread that may block (the admin worker)
//   reloader.reload_in_background();  // from a signal handler on an io thread
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/reload_plan.h"
#include "gateway/admin/command_worker.h"

namespace nfsgw::reload {

class ConfigReloader {
 public:
  /// Applies a valid new configuration `now` (kept alive by the reloader for its
  /// whole life) as `plan` says; returns more lines for the operator (what it could
  /// not apply). Called with the reloader's lock held: one reload at a time.
  using Apply = std::function<std::vector<std::string>(const config::Config& now, const config::ReloadPlan& plan)>;

  /// `initial` is the running configuration, read from `path` (SIGHUP re-reads it).
  ConfigReloader(config::Config initial, std::string path, Apply apply);
  /// stop()
  ~ConfigReloader();
  ConfigReloader(const ConfigReloader&) = delete;
  ConfigReloader& operator=(const ConfigReloader&) = delete;

  /// The configuration in effect: valid until the reloader is destroyed, even after
  /// later reloads.
  const config::Config& current() const;

  /// Reads `path` and applies it. Returns the lines for the operator ("applied:
  /// ...", "needs a restart: ...", or "no changes"), also logged. A file that
  /// cannot be read or is not valid throws std::invalid_argument with the message
  /// nfsgw gives at start-up ("invalid configuration: <file>:<line>: ..."), logged
  /// as an error; nothing changes then. May block on the disk.
  std::string reload(const std::string& path);
  /// reload() of the file the gateway started with, on the reloader's own thread
  /// (for SIGHUP); the outcome goes to the log.
  void reload_in_background();
  /// Waits for a reload in progress; later ones are not run. Idempotent.
  void stop();

 private:
  const std::string path_;
  Apply apply_;
  mutable std::mutex mu_;  // one reload at a time; guards generations_
  std::vector<std::unique_ptr<const config::Config>> generations_;
  admin::CommandWorker worker_;
};

}  // namespace nfsgw::reload
