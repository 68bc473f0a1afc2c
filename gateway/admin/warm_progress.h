// What a warm (`nfsgw warm`) has done so far, shared between the walk (which
// counts, on any io thread) and the admin session that reports it to the operator
// once a second. Counters are relaxed atomics; the failures are kept in order,
// at most kMaxKeptFailures of them (all are counted).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gateway/call_context.h"

namespace nfsgw::warm {

/// A snapshot of the counters, as the progress lines carry them.
struct WarmFigures {
  std::uint64_t entries = 0;     // objects visited (directories, files, links...)
  std::uint64_t dirs = 0;        // directories listed
  std::uint64_t bytes = 0;       // file data read (with --data)
  std::uint64_t data_total = 0;  // sizes of the regular files found so far (with --data)
  std::uint64_t failed = 0;      // paths that failed
  std::uint64_t paths_total = 0;  // paths asked for (the target, or the manifest's lines)
  std::uint64_t paths_done = 0;   // of them, warmed with everything below them
  std::uint64_t discovering = 0;  // steps still able to find more entries (0: totals are final)
  friend bool operator==(const WarmFigures&, const WarmFigures&) = default;
};

struct WarmFailure {
  std::string path;  // as the operator names it: "/export/a/b"
  std::string why;   // "NOENT", "ACCES at LOOKUP 'b'"...
};

class WarmProgress {
 public:
  static constexpr std::size_t kMaxKeptFailures = 1000;

  std::atomic<std::uint64_t> entries{0}, dirs{0}, bytes{0}, data_total{0}, failed{0};
  std::atomic<std::uint64_t> paths_total{0}, paths_done{0}, discovering{0};

  static void add(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }

  WarmFigures figures() const {
    auto v = [](const std::atomic<std::uint64_t>& c) { return c.load(std::memory_order_relaxed); };
    return {v(entries), v(dirs), v(bytes), v(data_total), v(failed), v(paths_total), v(paths_done), v(discovering)};
  }

  void fail(std::string path, std::string why) {
    add(failed);
    std::lock_guard lock(mu_);
    if (kept_ < kMaxKeptFailures) {
      ++kept_;
      fresh_.push_back({std::move(path), std::move(why)});
    }
  }
  /// The failures recorded since the last call.
  std::vector<WarmFailure> take_failures() {
    std::lock_guard lock(mu_);
    std::vector<WarmFailure> out;
    out.swap(fresh_);
    return out;
  }

  /// Asks the walk to stop: no new call starts, calls waiting for the origin are
  /// abandoned (the flag is their CallContext::caller_gone).
  void cancel() { cancelled_->raise(); }
  bool cancelled() const { return cancelled_->is_raised(); }
  /// Lives as long as this progress (the walker keeps the progress); owned by a
  /// shared_ptr, as CallerGone must be, so calls sent to the origin can share it.
  const CallerGone* cancel_flag() const { return cancelled_.get(); }

 private:
  std::shared_ptr<CallerGone> cancelled_ = std::make_shared<CallerGone>();
  std::mutex mu_;
  std::size_t kept_ = 0;
  std::vector<WarmFailure> fresh_;
};

/// How a warm ended, for its summary line.
struct WarmOutcome {
  WarmFigures figures;
  // The export's traffic to the origin during the warm (all callers', the warm's
  // and any client's at the same time): metadata calls, and file data fetched.
  std::uint64_t origin_calls = 0;
  std::uint64_t blocks_fetched = 0;
  std::uint64_t bytes_fetched = 0;
  std::uint64_t ms = 0;            // wall time
  bool cancelled = false;
};

}  // namespace nfsgw::warm
