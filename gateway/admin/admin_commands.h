// What the admin socket asks of the running gateway. The gateway implements it
// over its metadata cache; tests implement it with fakes.
//
// AdminServer calls report, invalidate and exports on its own worker thread, one
// call at a time, never on an io_context thread: they may block on the disk. warm
// and flush only start their work and return; they are called on an io_context
// thread.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "gateway/admin/admin_protocol.h"
#include "gateway/stats/stats_report.h"
#include "gateway/admin/warm_progress.h"
#include "gateway/writeback/write_back_types.h"

namespace nfsgw::admin {

class AdminCommands {
 public:
  virtual ~AdminCommands() = default;

  /// A snapshot of every layer's counters and the stores' usage (`nfsgw stats`).
  virtual stats::Report report() = 0;

  /// Drops the cached entries of `export_path` (a configured export path, such as
  /// "/export") below `subpath` ("" for the whole export, or "/a/b": no trailing
  /// '/', no "." or ".." components, no empty components). Without `recursive`,
  /// only the object at `subpath` (and the names cached inside it, when it is a
  /// directory) is dropped; with it, everything cached beneath as well.
  /// Returns one line for the operator ("dropped 12 entries under /export/a/b"), or
  /// throws std::invalid_argument with a clear message (unknown export, path not in
  /// the cache...). Any other exception is reported as an internal error.
  virtual std::string invalidate(const std::string& export_path, const std::string& subpath,
                                 bool recursive) = 0;

  /// `nfsgw reload`: reads the configuration file `config_path` and applies what
  /// can change live. Returns the lines for the operator (one per change), or
  /// throws std::invalid_argument with the configuration's error (the running
  /// configuration is kept).
  virtual std::string reload(const std::string& config_path) {
    throw std::invalid_argument("this gateway cannot reload " + config_path);
  }

  /// `nfsgw exports`: each export's origin, windows, origin connections and the
  /// cache's sizes, as lines of text.
  virtual std::string exports_table() { throw std::invalid_argument("exports is not available here"); }

  /// `nfsgw warm`: starts walking `request`'s paths and returns at once, without
  /// blocking. The walk counts into `progress` and stops early once it is
  /// cancelled; `done` is called exactly once, from any thread, when it has ended.
  /// Throws std::invalid_argument (and does not call `done`) for a request it
  /// refuses: an unknown export, an export without a metadata cache...
  virtual void warm(const WarmRequest& request, std::shared_ptr<warm::WarmProgress> progress,
                    std::function<void(warm::WarmOutcome)> done) {
    (void)request;
    (void)progress;
    (void)done;
    throw std::invalid_argument("warm is not available here");
  }

  /// `nfsgw flush`: starts committing at the origin what is dirty below `subpath`
  /// ("" or "/a/b") of `export_path` ("" for every export) and returns at once,
  /// without blocking. The flush keeps `progress` up to date; `done` is called
  /// exactly once, from any thread, when everything dirty in that scope when it
  /// started is committed (ok) or the flush failed. Throws std::invalid_argument
  /// (and does not call `done`) for a request it refuses (an unknown export).
  virtual void flush(const std::string& export_path, const std::string& subpath,
                     std::shared_ptr<writeback::FlushProgress> progress,
                     std::function<void(writeback::FlushOutcome)> done) {
    (void)export_path;
    (void)subpath;
    (void)progress;
    (void)done;
    throw std::invalid_argument("flush is not available here");
  }
};

}  // namespace nfsgw::admin
