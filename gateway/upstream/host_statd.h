// The host's rpc.statd as nfsgw's status monitor (issue 21, gateway/nlm/
// status_monitor.h), and SM_NOTIFY to other hosts' statd when nfsgw restarts.
//
// HostStatd speaks NSM v1 (program 100024) to the statd of this host: its TCP port
// from rpcbind at `host` (127.0.0.1) unless given, on a libnfs context of its own
// (OriginRpcChannel: one context, touched only on its strand, made on the first
// call and again after a failure). Every call ends within `timeout`, connecting
// included: statd not running (nothing registered with rpcbind, or the port
// refuses), rpcbind not running, or statd silent give ok == false with the reason.
//
// my_id of every SM_MON / SM_UNMON / SM_UNMON_ALL is {my_name, my_prog, my_vers,
// my_proc}: by default nfsgw's NLM (100021 version 4) and the private callback
// procedure nlm::kCallbackProc (16). statd calls it back over UDP on the loopback
// (status_monitor.h says how). Linux's statd refuses any my_prog but 100021; tests
// give another my_vers so as not to collide with a real NLM registered on the host.
//
// Calls go one at a time (HostStatd::Serial says why); notify() goes beside them.
//
// Names (mon_name, my_name) are 1 to 1024 bytes without NUL (libnfs sends them as
// C strings); others are not sent ("not sent: ...").
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "gateway/nlm/nsm_record.h"
#include "gateway/nlm/status_monitor.h"

namespace nfsgw::upstream {

class OriginRpcChannel;

class HostStatd final : public nlm::StatusMonitor {
 public:
  struct Options {
    std::string host = "127.0.0.1";  // where statd runs (this host)
    std::uint16_t port = 0;          // 0: statd's TCP port from rpcbind at `host`
    std::string my_name = "127.0.0.1";
    std::int32_t my_prog = nlm::kCallbackProgram;
    std::int32_t my_vers = nlm::kCallbackVersion;
    std::int32_t my_proc = nlm::kCallbackProc;
    std::chrono::milliseconds timeout{5000};  // the bound on every call
  };

  HostStatd(boost::asio::io_context& io, Options options);
  ~HostStatd() override;
  HostStatd(const HostStatd&) = delete;
  HostStatd& operator=(const HostStatd&) = delete;

  /// Ends calls in progress and refuses later ones (ok == false). Any thread.
  void stop();

  Awaitable<nlm::MonitorReply> monitor(std::string host, nsm::Priv priv) override;
  Awaitable<nlm::MonitorReply> unmonitor(std::string host) override;
  Awaitable<nlm::MonitorReply> unmonitor_all() override;

  /// SM_STAT: statd's own state number (ok when statd answered stat_succ).
  Awaitable<nlm::MonitorReply> stat(std::string host);
  /// SM_NOTIFY to this statd: `mon_name` rebooted and is now in state `state`.
  /// What a rebooted host's statd sends; tests use it to play such a host.
  Awaitable<nlm::MonitorReply> notify(std::string mon_name, std::int32_t state);

  const Options& options() const { return options_; }

  struct Serial;

 private:
  Options options_;
  std::shared_ptr<OriginRpcChannel> channel_;
  std::shared_ptr<Serial> serial_;
};

/// SM_NOTIFY to the statd of `address` (its TCP port from rpcbind there, unless
/// `port` is given): nfsgw, known there as `mon_name`, restarted and is now in NSM
/// state `state`. ok once that statd answered. Ends within `timeout`.
Awaitable<nlm::MonitorReply> notify_statd(boost::asio::io_context& io, std::string address,
                                          std::uint16_t port, std::string mon_name,
                                          std::int32_t state, std::chrono::milliseconds timeout);

/// The restart notice (design.md, issue 21, item 8): SM_NOTIFY {host.my_name,
/// state} to the statd of every host of `hosts`, at most `parallel` at a time,
/// each bounded by `timeout`. Answers, in the order of `hosts`, each host's reply.
/// `port` 0 asks each host's rpcbind (tests give the port of a stand-in statd).
Awaitable<std::vector<nlm::MonitorReply>> notify_restart(boost::asio::io_context& io,
                                                         std::vector<nlm::MonitoredHost> hosts,
                                                         std::int32_t state, std::uint16_t port,
                                                         std::chrono::milliseconds timeout,
                                                         std::size_t parallel = 16);

}  // namespace nfsgw::upstream
