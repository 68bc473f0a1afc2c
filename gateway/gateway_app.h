// Composes nfsgw from its configuration: the stores, the per-export layer stacks,
// the RPC programs, the listeners and the rpcbind registration.
#pragma once

#include <utility>

#include <memory>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

#include "config/config.h"

namespace nfsgw {

class GatewayApp {
 public:
  /// Opens the cache and binds the ports; throws std::exception with a clear message
  /// when that is impossible (the origin being down is not such a case).
  explicit GatewayApp(config::Config cfg);
  ~GatewayApp();

  /// Serves until stop() (or SIGINT/SIGTERM when `handle_signals`).
  void run(bool handle_signals);
  void stop();

  std::uint16_t nfs_port() const { return nfs_port_; }

 private:
  struct Parts;
  /// Opens the data cache's block store when an export wants one; on failure logs
  /// and leaves it closed (the exports then forward their READs).
  void open_block_store();
  /// After the io_context has stopped: runs what is still queued until it has no
  /// work left (bounded), so nothing outlives the layers it refers to.
  void drain();
  config::Config cfg_;
  boost::asio::io_context io_;
  std::unique_ptr<Parts> parts_;
  std::uint16_t nfs_port_ = 0;
};

}  // namespace nfsgw
