#include "cache/metadata_disk_health.h"

namespace nfsgw::cache {

bool MetadataDiskHealth::fail(const std::string& message, ErrorHook& report) {
  std::lock_guard lock(mu_);
  if (failed_) return false;
  failed_ = true;
  failure_ = message;
  failures_.fetch_add(1);
  degraded_.store(true);
  retry_at_ = timers_.now() + retry_;
  if (error_hook_) {
    reported_ = true;
    report = error_hook_;
  }
  return true;
}

MonotonicClock::time_point MetadataDiskHealth::retry_due() const {
  if (!degraded_.load() || retry_.count() <= 0) return MonotonicClock::time_point::max();
  std::lock_guard lock(mu_);
  return retry_at_;
}

void MetadataDiskHealth::retry_failed() {
  std::lock_guard lock(mu_);
  retry_at_ = timers_.now() + retry_;
}

void MetadataDiskHealth::recovered() {
  RecoveredHook call;
  {
    std::lock_guard lock(mu_);
    degraded_.store(false);
    failed_ = false;
    reported_ = false;
    failure_.clear();
    call = recovered_hook_;
  }
  if (call) call();
}

void MetadataDiskHealth::on_error(ErrorHook hook) {
  std::string message;
  {
    std::lock_guard lock(mu_);
    error_hook_ = hook;
    if (!failed_ || reported_ || !hook) return;
    reported_ = true;
    message = failure_;
  }
  hook(message);
}

void MetadataDiskHealth::on_recovered(RecoveredHook hook) {
  std::lock_guard lock(mu_);
  recovered_hook_ = std::move(hook);
}

}  // namespace nfsgw::cache
