// The host's statd calls nfsgw back here when a monitored client host rebooted
// (issue 21, design.md "Byte-range locks", item 7; gateway/nlm/status_monitor.h).
//
// Linux's statd calls my_id's (my_prog, my_vers, my_proc) over UDP on the
// loopback, at the port the host's rpcbind gives for (my_prog, my_vers, udp), from
// a privileged port, with AUTH_NULL, and sends again until answered. So nfsgw
// listens on UDP 127.0.0.1 (a port of the kernel's choosing), registers it with
// rpcbind as (100021, version, udp), and answers:
//   - procedure 16 (nlm::kCallbackProc): its argument is nsm::Status; the reply
//     is void, sent before `on_reboot` runs (statd's retries of the same
//     notice release nothing more);
//   - the same procedure at version origin_callback_version(version), also
//     registered: the callback for an origin host nfsgw monitors (on_reboot is
//     told which: nlm::Rebooted);
//   - NULL: void; any other procedure PROC_UNAVAIL, another version
//     PROG_MISMATCH, another program PROG_UNAVAIL; arguments that do not decode
//     GARBAGE_ARGS.
// Datagrams from an unprivileged port (any local user could forge a reboot and
// free another host's locks) or from outside the loopback are dropped unanswered.
//
// `version` is nfsgw's private callback version (callback_version()), not NLM's
// 4: (100021, 4, udp) belongs to the host's own lock manager (knfsd's lockd, an
// nfs-ganesha origin on the same host), which statd would call instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "gateway/nlm/status_monitor.h"
#include "protocol/nlm_nsm_types.h"

namespace nfsgw::upstream {

/// nfsgw's callback version for an NLM service on TCP port `nlm_port`: one per
/// nfsgw on a host (their NLM ports differ), none of them a real NLM version.
std::uint32_t callback_version(std::uint16_t nlm_port);

/// The version of the callback for origin hosts: statd keeps one entry per
/// (mon_name, my_id) and accepts only my_proc 16 (checked: stat_fail for 17), so
/// the origin hosts are monitored under a my_vers of their own, and SM_UNMON of a
/// client host named like an origin (127.0.0.1 on a test host) cannot drop the
/// origin's entry.
std::uint32_t origin_callback_version(std::uint32_t client_version);

class StatdCallback {
 public:
  using OnReboot = std::function<void(nsm::Status, nlm::Rebooted)>;

  /// Binds UDP 127.0.0.1:0 (throws when it cannot).
  StatdCallback(boost::asio::io_context& io, std::uint32_t version, OnReboot on_reboot);
  ~StatdCallback();

  /// Registers (100021, version, udp) with rpcbind (a leftover of a killed run
  /// is unset first) and serves. False when rpcbind refused (logged): statd's
  /// callbacks will not reach nfsgw.
  bool start();
  /// Unregisters and stops serving. Any thread.
  void stop();

  std::uint16_t port() const { return port_; }
  std::uint32_t version() const { return version_; }

 private:
  void receive();
  void serve(std::size_t n);

  boost::asio::ip::udp::socket socket_;
  boost::asio::ip::udp::endpoint from_;
  std::vector<std::uint8_t> buf_;
  std::uint32_t version_;
  std::uint16_t port_ = 0;
  OnReboot on_reboot_;
  std::atomic<bool> registered_{false};
};

/// PMAP SET / UNSET of (prog, vers, udp, port) at 127.0.0.1:111 over UDP, bounded
/// by 2 s: rpcbind's boolean answer (false when it did not answer).
bool pmap_udp(bool set, std::uint32_t prog, std::uint32_t vers, std::uint16_t port);

}  // namespace nfsgw::upstream
