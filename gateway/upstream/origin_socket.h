// TCP options on a socket toward the origin. TCP_NODELAY: nfsgw keeps many calls
// in flight on each connection, and libnfs 4.0 sends each call with its own send()
// and leaves Nagle's algorithm on, so a call queued behind one not yet acknowledged
// would wait for the origin's reply (a round trip) before leaving. The rest derive
// from the export's origin_timeout: keepalive (an idle connection to a host that vanished is noticed
// without waiting for a call) and TCP_USER_TIMEOUT (data the origin's kernel does
// not acknowledge, or a window it keeps shut, fails the connection). Neither can
// see an origin process that is stuck while its kernel still answers TCP: that is
// the per-call timeout's job (upstream_connection.h).
#pragma once

#include <chrono>
#include <string>

namespace nfsgw::upstream {

struct OriginSocketOptions {
  int keepalive_idle_s = 0;      // TCP_KEEPIDLE: idle time before the first probe
  int keepalive_interval_s = 0;  // TCP_KEEPINTVL: between probes
  int keepalive_count = 0;       // TCP_KEEPCNT: unanswered probes before giving up
  unsigned user_timeout_ms = 0;  // TCP_USER_TIMEOUT
};

/// The options for `timeout` (origin_timeout): the first probe after half of it,
/// three more spread over the other half, so a silent peer is dropped after about
/// `timeout`; the user timeout is `timeout` itself. Every value is at least 1.
OriginSocketOptions origin_socket_options(std::chrono::milliseconds timeout);

/// Sets TCP_NODELAY, SO_KEEPALIVE and the options above on `fd`. False (and `error` says which
/// option and why) when the kernel refuses one; the others are still set.
bool apply_origin_socket_options(int fd, const OriginSocketOptions& options, std::string* error);

}  // namespace nfsgw::upstream
