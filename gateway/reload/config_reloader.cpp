#include "gateway/reload/config_reloader.h"

#include <exception>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace nfsgw::reload {

ConfigReloader::ConfigReloader(config::Config initial, std::string path, Apply apply)
    : path_(std::move(path)), apply_(std::move(apply)) {
  generations_.push_back(std::make_unique<const config::Config>(std::move(initial)));
}

ConfigReloader::~ConfigReloader() { stop(); }

const config::Config& ConfigReloader::current() const {
  std::lock_guard lock(mu_);
  return *generations_.back();
}

std::string ConfigReloader::reload(const std::string& path) {
  std::lock_guard lock(mu_);
  spdlog::info("reload: reading {}", path);
  config::Config next;
  try {
    next = config::load_config(path);
  } catch (const std::exception& e) {
    // The words nfsgw prints when it cannot start with this file.
    const std::string message = std::string("invalid configuration: ") + e.what();
    spdlog::error("reload refused, the running configuration is kept: {}", message);
    throw std::invalid_argument(message + " (the running configuration is kept)");
  }
  config::ReloadPlan plan = config::plan_reload(*generations_.back(), next);
  std::vector<std::string> lines = plan.lines();
  if (!plan.unchanged()) {
    const config::Config& now = *generations_.emplace_back(std::make_unique<const config::Config>(std::move(plan.effective)));
    for (auto& note : apply_(now, plan)) lines.push_back(std::move(note));
  }
  std::string answer;
  for (const auto& l : lines) {
    if (l.rfind("needs a restart", 0) == 0) spdlog::warn("reload: {}", l);
    else spdlog::info("reload: {}", l);
    answer += l + "\n";
  }
  spdlog::info("reload of {} done: {} applied, {} need a restart", path,
               plan.applied.size() + plan.added.size() + plan.removed.size(), plan.needs_restart.size());
  return answer;
}

void ConfigReloader::reload_in_background() {
  worker_.submit([this](bool cancelled) {
    if (cancelled) return;
    try {
      reload(path_);
    } catch (const std::invalid_argument&) {
      // Logged by reload().
    } catch (const std::exception& e) {
      spdlog::error("reload of {} failed: {}", path_, e.what());
    }
  });
}

void ConfigReloader::stop() { worker_.stop(); }

}  // namespace nfsgw::reload
