#pragma once
// What the driver runs: a source of "units" of work. A unit is one call for
// most modes, a chain of calls for php (one PHP-like request), and one task of
// a finite queue for setup and walk. The driver keeps --inflight units
// outstanding per connection and knows nothing about NFS.
#include <functional>
#include <string>

#include "tools/nfsgw-bench/nfs_connection.h"

namespace nfsgw::bench {

class Workload {
 public:
  virtual ~Workload() = default;
  /// Calls one unit makes; reserved against --count before the unit starts.
  virtual unsigned calls_per_unit() const { return 1; }
  /// A unit can be started now.
  virtual bool has_work() const { return true; }
  /// Starts one unit on c; done() runs exactly once when the unit is over
  /// (after its last reply). Returns false, without calling done(), when the
  /// first call could not be queued.
  virtual bool start(Connection& c, std::function<void()> done) = 0;
  /// Non-empty when the workload hit a condition that makes its result void
  /// (setup could not create a file, walk lost a directory, ...).
  virtual std::string failure() const { return {}; }
};

}  // namespace nfsgw::bench
