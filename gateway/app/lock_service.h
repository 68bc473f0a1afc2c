// [server] nlm_port (issue 21): nfsgw's NLM v4 service, composed. One NlmService
// for every export (the handle names the export); per export an OriginNlm, the
// origin's lock manager (gateway/upstream/origin_nlm.h) at the export's origin
// host, [[export]] origin_nlm_port and origin_statd_port (0: the origin's
// rpcbind); the handle check is the translator's (HandleTranslator::check_handle);
// a granted lock drops the file's cached attributes (forget_attributes). A timer
// asks the origin again for waiters every nlm_retry_interval.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "config/config.h"
#include "gateway/nlm/nlm_service.h"

namespace nfsgw {

class HandleTranslator;

/// Makes the origin lock manager of an export (gateway/upstream's OriginNlm in
/// the server), given nfsgw's caller name at the origin; nullptr: none.
using OriginLocksFactory =
    std::function<std::unique_ptr<nlm::OriginLocks>(const config::ExportConfig&, const std::string& caller_name)>;
/// Stops an origin lock manager's calls (OriginNlm::stop).
using OriginLocksStop = std::function<void(nlm::OriginLocks&)>;

class LockService {
 public:
  /// `forget_attributes(export_id, origin handle)`: the export's cached attributes
  /// of the file are dropped (nothing when the export caches none).
  LockService(boost::asio::io_context& io, const config::Config& cfg, HandleTranslator& translator,
              std::function<void(std::uint32_t, const nfs3::FileHandle&)> forget_attributes,
              const OriginLocksFactory& make_origin, OriginLocksStop stop_origin);
  ~LockService();

  nlm::NlmService& service() { return *service_; }
  /// Begins the grace period and the waiters' timer.
  void start();
  /// Stops the timer and every origin call.
  void stop();

 private:
  void arm();

  boost::asio::io_context& io_;
  std::unordered_map<std::uint32_t, std::unique_ptr<nlm::OriginLocks>> origins_;
  OriginLocksStop stop_origin_;
  std::unique_ptr<nlm::NlmService> service_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::steady_timer timer_;  // on strand_
  std::chrono::milliseconds interval_;
  std::atomic<bool> stopped_{false};
};

}  // namespace nfsgw
