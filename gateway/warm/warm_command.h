// Starting a warm in the running gateway: checks the request against the export
// (it must keep what the walk would fetch, and admit the walk), then walks it with
// a TreeWalker and reports how it ended, with the export's origin traffic meanwhile.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include <boost/asio/any_io_executor.hpp>

#include "config/config.h"
#include "gateway/admin/admin_protocol.h"
#include "gateway/nfs3_program.h"
#include "gateway/admin/warm_progress.h"

namespace nfsgw::warm {

/// The client address a warm's calls come from, for the export's `clients` rule:
/// the walk runs on the gateway's own machine.
inline constexpr const char* kWarmAddress = "127.0.0.1";

/// The origin traffic counters of one export, read before and after a warm.
struct OriginTraffic {
  std::uint64_t calls = 0, blocks = 0, bytes = 0;
};

struct WarmExport {
  const config::ExportConfig* config = nullptr;
  bool metadata_cache = false;
  bool data_cache = false;
  std::function<OriginTraffic()> traffic;  // null: reported as 0
};

struct WarmEnvironment {
  boost::asio::any_io_executor executor;
  Nfs3Program* nfs = nullptr;  // gateway handles: the HandleTranslator
  std::function<nfs3::FileHandle(std::uint32_t export_id)> root_handle;  // the gateway's root handle
  std::uint32_t read_bytes = 1u << 20;
  std::function<std::chrono::steady_clock::time_point()> now = [] { return std::chrono::steady_clock::now(); };
};

/// The credentials a warm of `e` walks with, before the export's squash.
Credentials warm_credentials(const config::ExportConfig& e);

/// Throws std::invalid_argument, saying why and what to change, when `e` cannot
/// be warmed as `request` asks; else starts the walk and returns at once. `done`
/// is called once, from an executor thread, when the walk has ended.
void start_warm(const WarmEnvironment& env, const WarmExport& e, const admin::WarmRequest& request,
                std::shared_ptr<WarmProgress> progress, std::function<void(WarmOutcome)> done);

}  // namespace nfsgw::warm
