// The admin socket's line protocol, version 1.
//
// A client connects to the Unix stream socket `<[cache] dir>/admin.sock` (mode 0600:
// only nfsgw's own user, and root, may use it), sends ONE request line, and reads
// the reply until the server closes the connection. One request per connection.
//
// Request: at most 8192 bytes, '\n' included. A "\r" before the '\n' is ignored; a
// request ended by end-of-file instead of '\n' is accepted; anything after the
// first line is ignored.
//
//   v1 stats [text|json]
//   v1 invalidate <export-path> <subpath> <recursive>
//   v1 reload <config-path>
//   v1 exports
//   v1 warm <export-path> <subpath> <depth> <data> <parallel> <manifest-count>
//   v1 flush <export-path|*> <subpath>
//
// Tokens are separated by single spaces. <export-path> and <subpath> are
// percent-encoded: any byte may be written %XX (two hex digits, either case), and
// space, '%', control characters and bytes >= 0x7f must be. <export-path> is a
// configured export path ("/export"); <subpath> is "/" for the whole export or a
// path below it ("/a/b"; repeated and trailing slashes are ignored, "." and ".."
// are refused); <recursive> is 0 or 1.
//
// warm: <depth> is "all" or how many levels below <subpath> to list (0: the object
// itself only); <data> is 0 or 1 (read file data too); <parallel> how many calls
// the walk keeps in flight (1..kMaxWarmParallel); <manifest-count> how many lines
// follow the request line (0..kMaxManifestPaths), each a percent-encoded path
// inside the export like <subpath>: then those paths are warmed (each with the
// tree below it, to <depth>) instead of <subpath>, which the client has already
// folded into them. The reply streams body lines while the walk runs
// (gateway/admin/warm_wire.h): progress lines about once a second, a line per
// failed path, a summary; then `ok`, or `error` when any path failed. Closing the
// connection cancels the walk.
//
// flush: commits at the origin what write-back exports hold dirty below
// <subpath> of <export-path>, or of every export for `*` (then <subpath> is "/").
// The reply streams `progress` lines about once a second while it runs, then a
// `summary` line and, when everything is committed, a `flushed` line with the
// gateway's message and `ok`; else `error <message>`
// (gateway/admin/flush_wire.h). Closing the connection does not stop the flush.
//
// Reply: zero or more body lines, then one status line, the last line before the
// server closes the connection:
//
//   ok
//   error <message>
//
// Body lines and messages never contain control characters (the server writes
// them as \xNN). A connection that closes without a status line is a failure.
// `stats` answers a table for people, `stats json` one line of JSON; `invalidate`
// answers one line ("dropped 12 entries under /export/a/b"); `reload` (of the
// configuration file <config-path>, an absolute path, percent-encoded) answers one
// line per change ("applied: ...", "needs a restart: ..."), or `error` with the
// configuration's error when the file is refused (the running one is kept).
//
// By hand:  echo 'v1 stats' | socat - UNIX-CONNECT:/var/lib/nfsgw/admin.sock
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nfsgw::admin {

inline constexpr std::string_view kProtocolVersion = "v1";
inline constexpr std::size_t kMaxRequestBytes = 8192;
inline constexpr std::uint32_t kDefaultWarmParallel = 32;
inline constexpr std::uint32_t kMaxWarmParallel = 256;
inline constexpr std::uint32_t kMaxWarmDepth = 1'000'000;
inline constexpr std::uint64_t kMaxManifestPaths = 1'000'000;

struct StatsRequest {
  bool json = false;
  friend bool operator==(const StatsRequest&, const StatsRequest&) = default;
};

struct InvalidateRequest {
  std::string export_path;  // "/export"
  std::string subpath;      // "" (the whole export) or "/a/b", normalised
  bool recursive = false;
  friend bool operator==(const InvalidateRequest&, const InvalidateRequest&) = default;
};

struct ReloadRequest {
  std::string config_path;  // absolute
  friend bool operator==(const ReloadRequest&, const ReloadRequest&) = default;
};

struct ExportsRequest {
  friend bool operator==(const ExportsRequest&, const ExportsRequest&) = default;
};

struct WarmRequest {
  std::string export_path;  // "/export"
  std::string subpath;      // "" (the whole export) or "/a/b", normalised
  std::optional<std::uint32_t> depth;  // levels to list below each path; nullopt: all
  bool data = false;
  std::uint32_t parallel = kDefaultWarmParallel;
  /// The paths to warm instead of `subpath` (normalised, inside the export). On the
  /// wire: their count on the request line, then one line each.
  std::vector<std::string> manifest;
  /// parse_request's reading of the count; the server then reads that many lines.
  std::uint64_t manifest_count = 0;
  friend bool operator==(const WarmRequest&, const WarmRequest&) = default;
};

struct FlushRequest {
  std::string export_path;  // "/export", or "" for every export
  std::string subpath;      // "" (the whole export) or "/a/b", normalised; "" for every export
  friend bool operator==(const FlushRequest&, const FlushRequest&) = default;
};

using Request =
    std::variant<StatsRequest, InvalidateRequest, ReloadRequest, ExportsRequest, WarmRequest, FlushRequest>;

/// The admin socket of a gateway whose `[cache] dir` is `cache_dir`.
std::string admin_socket_path(const std::string& cache_dir);

/// Percent-encodes every byte that is not printable ASCII, and space and '%'.
std::string percent_encode(std::string_view raw);
/// Decodes %XX sequences. Throws std::invalid_argument on a malformed escape or a
/// decoded NUL byte.
std::string percent_decode(std::string_view encoded);

/// "" for "/" (or ""), else "/a/b": repeated and trailing slashes dropped. Throws
/// std::invalid_argument for a relative path, a "." or ".." component, or a NUL.
std::string normalize_subpath(std::string_view path);

/// Parses one request line (without its '\n'; a trailing '\r' is ignored). Throws
/// std::invalid_argument with a message fit for an `error` line.
Request parse_request(std::string_view line);
/// The request line for `request`, '\n' included; for a warm with a manifest, the
/// manifest's lines follow it.
std::string format_request(const Request& request);
/// One manifest line of a warm request (without its '\n'; a trailing '\r' is
/// ignored): the normalised path. Throws std::invalid_argument.
std::string parse_manifest_line(std::string_view line);

/// `text` with control characters written as \xNN, so that it stays one line.
std::string escape_line(std::string_view text);
/// The status lines, '\n' included. The message is escaped.
std::string ok_line();
std::string error_line(std::string_view message);

}  // namespace nfsgw::admin
