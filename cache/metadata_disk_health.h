// Whether the metadata store's disk works (metadata_store.cpp's part for it).
//
// The first failure degrades the store: it is reported once, through the error
// hook (set before or after it), and reads stop at memory and the overlay, the
// writer dropping what it is given. While degraded, the writer tries the disk again
// every `retry` (retry_due()); a try that works ends it and is reported through the
// recovered hook. Thread-safe; the hooks are called with no lock held.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "cache/monotonic_clock.h"

namespace nfsgw::cache {

class MetadataDiskHealth {
 public:
  using ErrorHook = std::function<void(const std::string&)>;
  using RecoveredHook = std::function<void()>;

  /// `retry`: how often a failed disk is tried again; zero never.
  MetadataDiskHealth(MonotonicClock& timers, std::chrono::milliseconds retry) : timers_(timers), retry_(retry) {}

  bool degraded() const { return degraded_.load(); }
  /// Disk failures so far (one per degradation).
  std::uint64_t failures() const { return failures_.load(); }

  /// Records a failure. False when the store is degraded already (nothing to do);
  /// true for the first one, with `report` set to the error hook to call (if any,
  /// and once the caller has done what it must first).
  bool fail(const std::string& message, ErrorHook& report);
  /// When the writer should next try the failed disk; far away when it works.
  MonotonicClock::time_point retry_due() const;
  /// A try of the disk failed: the next one is `retry` from now.
  void retry_failed();
  /// A try of the disk worked: not degraded any more; calls the recovered hook.
  void recovered();

  /// Sets the error hook; a failure before it was set is reported now, once.
  void on_error(ErrorHook hook);
  void on_recovered(RecoveredHook hook);

 private:
  MonotonicClock& timers_;
  const std::chrono::milliseconds retry_;
  std::atomic<bool> degraded_{false};
  std::atomic<std::uint64_t> failures_{0};  // the preload's check

  mutable std::mutex mu_;
  ErrorHook error_hook_;
  RecoveredHook recovered_hook_;
  bool failed_ = false, reported_ = false;
  std::string failure_;
  MonotonicClock::time_point retry_at_;  // degraded: when to try the disk again
};

}  // namespace nfsgw::cache
