// Composes nfsgw from its configuration: the stores, the per-export layer stacks,
// the RPC programs, the listeners and the rpcbind registration.
#pragma once

#include "cache/memory_budget.h"
#include <utility>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

#include "cache/monotonic_clock.h"
#include "config/config.h"
#include "config/reload_plan.h"

namespace nfsgw {

class GatewayApp {
 public:
  /// Opens the cache and binds the ports; throws std::exception with a clear message
  /// when that is impossible (the origin being down is not such a case).
  /// `config_path`: the file `cfg` was read from, which SIGHUP reads again.
  /// `timer_clock`: what the idle sweep and the drain at stop measure time with.
  explicit GatewayApp(config::Config cfg, std::string config_path = {},
                      const cache::MonotonicClock& timer_clock = cache::monotonic_clock());
  ~GatewayApp();

  /// Serves until stop() (or SIGINT/SIGTERM when `handle_signals`; then SIGHUP
  /// reloads the configuration file, see gateway/reload/config_reloader.h).
  void run(bool handle_signals);
  void stop();

  std::uint16_t nfs_port() const { return nfs_port_; }

 private:
  struct Parts;
  struct Stack;
  /// One export's layer stack: translator -> [data cache] -> [write-back] ->
  /// [metadata cache] -> forwarder, kept in parts_ for the gateway's life.
  Stack& build_export(const config::ExportConfig& e);
  /// Starts the stack's forwarder and keeps its root handle once the origin answers.
  void start_export(Stack& s);
  /// A reload: publishes `now` to the layers (gateway/reload/config_reloader.h).
  std::vector<std::string> apply(const config::Config& now, const config::ReloadPlan& plan);
  /// Opens the data cache's block store when an export wants one; on failure logs
  /// and leaves it closed (the exports then forward their READs).
  /// Opens the change journal and drops what a crash of the last run may have left
  /// stale (cache/change_journal.h), before any export is served.
  void recover_journal();
  void open_block_store();
  /// Opens the dirty log when an export writes back or it holds dirty data from an
  /// earlier run; throws when it cannot (nothing acknowledged may be skipped).
  void open_dirty_log();
  /// After the drain: the log's orderly stop (the write verifier is kept).
  void close_dirty_log();
  /// A reload's `writes` for a served export; switching to through flushes.
  void switch_writes(Stack& st, const config::ExportConfig& e, std::vector<std::string>& notes);
  /// After the io_context has stopped: runs what is still queued until it has no
  /// work left (bounded), so nothing outlives the layers it refers to.
  void drain();
  /// The configuration at start; later generations live in parts_->reloader.
  config::Config cfg_;
  std::string config_path_;
  const cache::MonotonicClock& timer_clock_;
  /// memory_mb, split once between its users (cache/memory_budget.h).
  cache::MemoryBudget budget_;
  boost::asio::io_context io_;
  std::unique_ptr<Parts> parts_;
  std::uint16_t nfs_port_ = 0;
};

}  // namespace nfsgw
