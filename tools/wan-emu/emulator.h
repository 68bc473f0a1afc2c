// The running emulator: the shared link state, one PairListener per --pair, the
// control server, and the meaning of the control commands.
//
// Single-threaded by design: everything runs on one io_context thread, so the link
// state and counters need no locks and the zero-delay path costs one read and one
// write per chunk.
#pragma once

#include <utility>  // must precede Asio with Boost 1.74 under C++20

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tools/wan-emu/control_server.h"
#include "tools/wan-emu/link_state.h"
#include "tools/wan-emu/options.h"
#include "tools/wan-emu/pair_listener.h"

namespace nfsgw::wanemu {

class Emulator {
 public:
  /// Binds every listener and the control port (throws on failure).
  Emulator(boost::asio::io_context& io, const Options& opts);

  void start();
  /// Closes listeners, the control port and every relayed connection.
  void stop();

  /// Executes one control command line (see README.md for the commands).
  ControlReply execute(const std::string& line);

  const LinkState& link() const { return *link_; }
  std::string stats_json() const;

 private:
  void set_bandwidth(std::uint64_t kbps);
  void cut_all();
  void write_stats_file(const std::string& json) const;

  boost::asio::io_context& io_;
  std::shared_ptr<LinkState> link_;  // shared with sessions that may outlive us
  std::uint64_t bandwidth_kbps_ = 0;
  std::string stats_file_;
  std::vector<std::unique_ptr<PairListener>> listeners_;
  std::unique_ptr<ControlServer> control_;
};

}  // namespace nfsgw::wanemu
