// The keys of [server]. Each is read once at start: listeners, threads and limits
// are built from them, so every one needs a restart.
#include <algorithm>
#include <arpa/inet.h>

#include "config/key_kinds.h"
#include "config/listen_address.h"

namespace nfsgw::config {
namespace {

using ServerKinds = Kinds<ServerConfig>;

void check_ip_address(const Input& in, const std::string& s) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) != 1 && inet_pton(AF_INET6, s.c_str(), buf) != 1) {
    in.fail(quote(s) + " is not an IP address; allowed: an IPv4 or IPv6 address such as "
                       "\"0.0.0.0\", \"127.0.0.1\" or \"::\" (host names are not resolved)");
  }
}

void check_metrics_address(const Input& in, const std::string& s) {
  std::string why;
  if (!valid_listen_address(s, &why)) {
    in.fail(quote(s) + " is not an address to listen on: " + why +
            "; allowed: \"IPv4:PORT\" or \"[IPv6]:PORT\" with a port 1..65535, such as \"127.0.0.1:9464\" "
            "or \"[::1]:9464\" (host names are not resolved; leave the key out for no endpoint)");
  }
}

/// An NLM caller name: what statd can resolve and keep in a file name.
void check_caller_name(const Input& in, const std::string& s) {
  const bool ok = !s.empty() && s.size() <= 255 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_' || c == ':';
  });
  if (!ok) {
    in.fail(quote(s) + " is not a caller name; allowed: 1 to 255 bytes of letters, digits, '.', '-', '_' and ':' "
            "(a host name or address of this host, as the origins resolve it)");
  }
}

/// A per-connection limit above the server's would never apply.
void check_limits(const Input& table, ServerConfig& s) {
  if (s.max_calls_in_flight > s.max_calls_in_flight_total) {
    table.either("max_calls_in_flight", "max_calls_in_flight_total")
        .fail(std::to_string(s.max_calls_in_flight) + " is more than server.max_calls_in_flight_total (" +
              std::to_string(s.max_calls_in_flight_total) + "); allowed: at most that");
  }
  if (s.max_pending_mb_per_connection > s.max_pending_mb) {
    table.either("max_pending_mb_per_connection", "max_pending_mb")
        .fail(std::to_string(s.max_pending_mb_per_connection) + " is more than server.max_pending_mb (" +
              std::to_string(s.max_pending_mb) + "); allowed: at most that");
  }
}

}  // namespace

const SectionKeys<ServerConfig>& server_keys() {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  // Upper bounds of the limits are well past what one host serves: larger values
  // are mistakes.
  static const SectionKeys<ServerConfig> keys{
      "server",
      {
          ServerKinds::text("listen", &ServerConfig::listen,
                  "an IPv4 or IPv6 address (`\"::\"`, `\"127.0.0.1\"`); host names are not resolved",
                  "address the NFS and MOUNT listeners bind to", check_ip_address),
          ServerKinds::integer("nfs_port", &ServerConfig::nfs_port, 1, 65535, "TCP port for NFSv3"),
          ServerKinds::integer("mount_port", &ServerConfig::mount_port, 0, 65535,
                     "TCP port for MOUNT; `0` serves MOUNT on `nfs_port`"),
          ServerKinds::integer("threads", &ServerConfig::threads, 0, 1024, "worker threads; `0` means one per CPU core"),
          ServerKinds::boolean("register_rpcbind", &ServerConfig::register_rpcbind,
                     "register NFS and MOUNT with the local rpcbind, so clients can find them without explicit "
                     "ports"),
          ServerKinds::integer("max_record_bytes", &ServerConfig::max_record_bytes, 64 * 1024, 64 * 1024 * 1024,
                     "the largest RPC record accepted from a client; larger records close the connection. Must "
                     "cover the largest WRITE clients send (1 MiB plus headers). FSINFO tells clients no larger "
                     "`rtmax`/`wtmax` (nor preferred sizes, nor `dtpref`) than fit in one such record: the record "
                     "less 928 bytes of headers, at most 1 MiB, rounded down to 4 KiB (the default gives 1 MiB; "
                     "64 KiB gives 60 KiB), so a client never sends a WRITE nfsgw must refuse")
              .also_allowed(" (64 KiB..64 MiB)"),
          ServerKinds::integer("max_connections", &ServerConfig::max_connections, 1, 1000000,
                     "client TCP connections served at once; more are accepted and closed at once (the client "
                     "sees the connection end), with one log line every 10 s at most saying how many were "
                     "refused. Each connection takes a file descriptor: keep it under nfsgw's `ulimit -n` minus "
                     "a few hundred for the caches' files"),
          ServerKinds::integer("max_calls_in_flight", &ServerConfig::max_calls_in_flight, 1, 65536,
                     "calls of one connection in flight at once. A call counts from when it is read until its "
                     "reply is written to the socket; at this many, nfsgw reads nothing more from that "
                     "connection until a reply is written")
              .also_allowed(", at most `max_calls_in_flight_total`"),
          ServerKinds::integer("max_calls_in_flight_total", &ServerConfig::max_calls_in_flight_total, 1, 1000000,
                     "calls in flight over all connections together; at this many, every connection waits "
                     "until a reply is written"),
          ServerKinds::integer("max_pending_mb", &ServerConfig::max_pending_mb, 1, 1 << 20,
                     "memory, in MiB, that calls in flight may hold over all connections: each call's record "
                     "while it runs, and its reply, reserved before the call runs at the size the call asks for "
                     "(a READ's count plus its attributes, about 1 KiB for most procedures) and held until "
                     "written. At this much, no connection starts another call. One call always runs when "
                     "nothing else is held, however large"),
          ServerKinds::integer("max_pending_mb_per_connection", &ServerConfig::max_pending_mb_per_connection, 1, 1 << 20,
                     "the same for one connection: a client that sends calls and does not read its replies "
                     "holds at most this much (and its socket's buffers), then nfsgw stops reading from it. "
                     "Leave room for several of the largest READ replies (1 MiB each)")
              .also_allowed(", at most `max_pending_mb`"),
          ServerKinds::duration("idle_timeout", &ServerConfig::idle_timeout, seconds(1), hours(24 * 7),
                      "a connection on which nothing moved for this long (no bytes read, no reply written) while "
                      "none of its calls is running is closed (looked for every eighth of it, at most every "
                      "second); NFS clients reconnect by themselves. A client "
                      "that stops reading its replies is closed this way too. Durations are written as in "
                      "`[[export]]`, for example `\"90s\"`",
                      /*zero_too=*/true),
          ServerKinds::text("metrics_listen", &ServerConfig::metrics_listen,
                  "`\"IPv4:PORT\"` or `\"[IPv6]:PORT\"`, port 1..65535 (`\"127.0.0.1:9464\"`, `\"[::1]:9464\"`); "
                  "host names are not resolved",
                  "where nfsgw serves its Prometheus metrics (`GET /metrics`, plain HTTP, no authentication: "
                  "keep it on loopback or a management network). Unset, there is no endpoint and no call pays "
                  "for measuring. A value that is not such an address is a configuration error; an address "
                  "that cannot be bound (in use, not of this host) stops the start with "
                  "`server.metrics_listen: cannot listen on ...`. The metrics are listed in docs/operations.md",
                  check_metrics_address)
              .defaults_to("unset (no endpoint)"),
          ServerKinds::integer("nlm_port", &ServerConfig::nlm_port, 0, 65535,
                     "TCP port of nfsgw's lock service (NLM v4, program 100021), registered with rpcbind when "
                     "`register_rpcbind = true`. Locks are held at each export's origin in nfsgw's name "
                     "(docs/configuration.md, *Locks*); it needs the host's rpc.statd and rpcbind. `0`: no lock "
                     "service, the default; clients then mount with `nolock`"),
          ServerKinds::text("nlm_caller_name", &ServerConfig::nlm_caller_name,
                  "1 to 255 bytes of letters, digits, `.`, `-`, `_` and `:`",
                  "nfsgw's name at the origins' lock managers: the host name their statd monitors and "
                  "notifies when nfsgw restarts (SM_NOTIFY naming it drops every lock nfsgw held there). It "
                  "must resolve, at each origin, to an address of this host. Unset: this host's name. Set it "
                  "when several nfsgw share a host (each needs a name of its own, or one's restart drops the "
                  "others' locks) or when the host name does not resolve at the origins",
                  check_caller_name)
              .defaults_to("unset (this host's name)"),
          ServerKinds::duration("nlm_grace", &ServerConfig::nlm_grace, milliseconds(0), hours(1),
                      "after nfsgw starts, for this long only reclaims of locks are granted (new locks and TEST "
                      "are answered `NLM4_DENIED_GRACE_PERIOD`; clients retry), and after it no reclaim is"),
          ServerKinds::duration("nlm_retry_interval", &ServerConfig::nlm_retry_interval, milliseconds(100),
                      seconds(60),
                      "how often a blocked lock (a waiter) is asked for at the origin again: a lock held by a "
                      "client outside nfsgw is granted to the waiter at most this long plus one origin round "
                      "trip after its release (a release through nfsgw grants its waiters at once)"),
          ServerKinds::integer("nlm_max_locks", &ServerConfig::nlm_max_locks, 1, 10000000,
                     "byte ranges held through nfsgw, all clients and files together; a LOCK (or an UNLOCK "
                     "that would split a range) past it is answered `NLM4_DENIED_NOLOCKS` before it reaches "
                     "the origin"),
          ServerKinds::integer("nlm_max_waiters", &ServerConfig::nlm_max_waiters, 1, 1000000,
                     "blocked LOCKs queued, all clients; more are answered `NLM4_DENIED_NOLOCKS`"),
          ServerKinds::integer("nlm_max_owners", &ServerConfig::nlm_max_owners, 1, 1000000,
                     "client lock owners (host, process) holding or waiting for a lock at once; a new owner "
                     "past it is answered `NLM4_DENIED_NOLOCKS`"),
      },
      check_limits,
  };
  return keys;
}

}  // namespace nfsgw::config
