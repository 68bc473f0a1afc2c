// nfsgw's configuration: typed, validated, with defaults. Parsed from TOML by
// load_config(); a bad file throws ConfigError whose message names the key, the
// value and what is allowed.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/coherency.h"  // header-only: the settings' defaults and bounds

namespace nfsgw::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An IPv4 or IPv6 network in CIDR notation ("10.0.0.0/8", "::1/128").
struct Cidr {
  bool v6 = false;
  std::array<std::uint8_t, 16> addr{};  // first 4 bytes used for IPv4
  unsigned prefix = 0;
  std::string text;  // as written in the file
  /// Parses "a.b.c.d/n", "x::y/n" or a bare address (full prefix); throws ConfigError.
  static Cidr parse(const std::string& s);
  /// True when `address` (textual IPv4 or IPv6; IPv4-mapped IPv6 counts as IPv4)
  /// lies inside this network.
  bool contains(const std::string& address) const;
};

/// A parsed libnfs-style origin URL: nfs://host[:port]/path[?nfsport=N&mountport=M]
struct OriginUrl {
  std::string text;
  std::string host;
  std::string path;          // the origin's export path, starts with '/'
  std::uint16_t nfs_port = 0;    // 0: ask the origin's rpcbind
  std::uint16_t mount_port = 0;  // 0: ask the origin's rpcbind
  static OriginUrl parse(const std::string& s);  // throws ConfigError
};

enum class Access { ReadWrite, ReadOnly };
enum class Squash { None, Root, All };

struct ServerConfig {
  std::string listen = "0.0.0.0";
  std::uint16_t nfs_port = 2049;
  std::uint16_t mount_port = 0;      // 0: MOUNT is served on nfs_port
  unsigned threads = 0;              // 0: one per core
  bool register_rpcbind = true;
  std::uint32_t max_record_bytes = 4u << 20;  // refuse larger RPC records
  // What clients may hold of nfsgw (docs/configuration.md, [server]): a call counts
  // from when it is read until its reply is written; its bytes are its record and
  // its reply (reserved at its expected size before it runs).
  std::uint32_t max_connections = 1024;            // more are accepted and closed
  std::uint32_t max_calls_in_flight = 128;         // per connection
  std::uint32_t max_calls_in_flight_total = 4096;  // all connections
  std::uint32_t max_pending_mb = 256;              // all connections, MiB
  std::uint32_t max_pending_mb_per_connection = 16;
  /// A connection on which nothing moved for this long, no call running, is
  /// closed (clients reconnect). Zero: never.
  std::chrono::milliseconds idle_timeout = std::chrono::minutes(6);
  /// "ADDRESS:PORT" of the Prometheus endpoint (GET /metrics), such as
  /// "127.0.0.1:9464" or "[::1]:9464". Empty: no endpoint.
  std::string metrics_listen;
  /// NLM v4 (byte-range locks, issue 21): the TCP port nfsgw serves it on; 0:
  /// no lock service (clients mount with `nolock`).
  std::uint16_t nlm_port = 0;
  /// After nfsgw starts: only reclaims of locks are granted for this long.
  std::chrono::milliseconds nlm_grace{90000};
  /// How often a blocked lock is asked for at the origin again (a holder outside
  /// nfsgw released it: the grant comes at most this long plus a round trip later).
  std::chrono::milliseconds nlm_retry_interval{1000};
  std::uint32_t nlm_max_locks = 65536;    // byte ranges held through nfsgw, all clients
  std::uint32_t nlm_max_waiters = 4096;   // blocked LOCKs queued
  std::uint32_t nlm_max_owners = 16384;   // client lock owners with a lock or a waiter
  /// nfsgw's caller name at the origins' lock managers; "": this host's name.
  std::string nlm_caller_name;
};

struct CacheConfig {
  std::string dir = "/var/lib/nfsgw";
  /// RAM in MiB for the metadata cache's memory layer plus RocksDB's block cache
  /// and memtables (write buffers), shared by every export.
  std::uint32_t memory_mb = 256;
  /// Disk budget of the metadata cache (RocksDB under `dir`), in GiB, all exports.
  std::uint32_t metadata_max_gb = 4;
  /// Block size of the data cache in KiB: a power of two, 64..16384.
  std::uint32_t block_kb = 1024;
  /// Disk budget of the data cache (block files under `dir`/data), in GiB, all exports.
  std::uint32_t data_max_gb = 16;
  /// Bound of the dirty log (write-back exports' acknowledged, unflushed writes
  /// under `dir`/dirty), in GiB, all exports; apart from data_max_gb.
  std::uint32_t dirty_max_gb = 4;
  std::string secret_file;  // default: <dir>/secret
  /// Answer repeated calls from a per-thread memo of whole answers
  /// (gateway/rpc/answer_memo.h); off only for measurements.
  bool answer_memo = true;
  /// Serve the metadata store's hot records from a per-thread copy
  /// (cache/peek_memo.h, MetadataStoreOptions::thread_memo); off only for measurements.
  bool peek_memo = true;
};

/// Bounds of [[export]] origin_timeout: the Linux client's TCP timeo is 60 s by
/// default and at most 600 s.
inline constexpr std::chrono::milliseconds kMinOriginTimeout{1000};
inline constexpr std::chrono::milliseconds kMaxOriginTimeout{600000};

/// How an export's WRITEs reach the origin: at once (the client gets the origin's
/// answer), or from nfsgw's dirty log after write_back_delay (gateway/writeback/).
enum class Writes { Through, Back };

struct ExportConfig {
  std::string path;  // what clients mount, starts with '/'
  OriginUrl origin;
  Access access = Access::ReadWrite;
  std::vector<Cidr> clients;  // default: everyone (0.0.0.0/0 and ::/0)
  Squash squash = Squash::Root;
  std::uint32_t anon_uid = 65534;
  std::uint32_t anon_gid = 65534;
  /// The ids `nfsgw warm` walks this export as (then squashed like any caller's);
  /// unset: anon_uid / anon_gid.
  std::optional<std::uint32_t> warm_uid;
  std::optional<std::uint32_t> warm_gid;
  unsigned upstream_connections = 4;
  /// How long a call toward the origin may go unanswered, while the connection
  /// receives nothing else either, before the connection is declared dead (then
  /// reconnected; see gateway/upstream/upstream_pool.h). Also the TCP user timeout
  /// and the bound of one connection attempt.
  std::chrono::milliseconds origin_timeout{60000};
  /// The metadata cache's promise for this export: keys metadata_cache,
  /// consistency, access_check and the durations of cache::kDurationSettings.
  cache::CoherencySettings coherency;
  /// Keep this export's file data in the data cache.
  bool data_cache = true;
  /// How far ahead of a sequential reader to fetch, in KiB; 0: no read-ahead.
  std::uint32_t readahead_kb = 4096;
  Writes writes = Writes::Through;
  /// Write-back: how long written data may stay only in nfsgw before its flush
  /// to the origin starts.
  std::chrono::milliseconds write_back_delay{30000};
  /// The origin's NLM v4 port and rpc.statd port ([server] nlm_port set); 0: ask
  /// the origin's rpcbind.
  std::uint16_t origin_nlm_port = 0;
  std::uint16_t origin_statd_port = 0;
  /// Stable id embedded in file handles: derived from `path`, so that reordering
  /// exports in the file does not invalidate clients' handles.
  std::uint32_t id = 0;
  /// Where the metadata cache keeps this export's records: derived from the origin
  /// server (host and NFS port), not from the export, because an origin names an
  /// object by the same handle whichever of its paths it was reached through.
  /// Exports of one origin (the same tree, overlapping subtrees, read-write beside
  /// read-only) therefore share their records, and a change made through one of
  /// them is seen at once through the others.
  std::uint32_t cache_space = 0;
  /// True when `address` may use this export.
  bool allows(const std::string& address) const;
};

struct Config {
  ServerConfig server;
  CacheConfig cache;
  std::vector<ExportConfig> exports;
};

/// Reads and validates a TOML file. Throws ConfigError.
Config load_config(const std::string& path);
/// Same, from TOML text (for tests). `origin_name` appears in error messages.
Config parse_config(const std::string& toml_text, const std::string& origin_name = "<string>");

}  // namespace nfsgw::config
