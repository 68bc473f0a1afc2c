// Reading nfsgw's TOML configuration into typed structs, with strict validation.
//
// Every problem becomes a ConfigError of the form
//   "<file>:<line>: <key>: <what is wrong with the value>; allowed: <...>"
// so an operator can fix the file without reading the source. Unknown keys are
// errors, not warnings: a misspelt "acess = \"ro\"" silently ignored would export
// a tree read-write.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <arpa/inet.h>

#include <toml.hpp>

#include "config/config.h"
#include "config/duration.h"
#include "config/listen_address.h"
#include "config/integer_check.h"
#include "config/nesting_check.h"
#include "config/utf8_check.h"

namespace nfsgw::config {
namespace {

using Value = toml::value;

/// 32-bit FNV-1a: tiny, fixed forever (ids are baked into clients' handles), and
/// good enough to spread export paths; collisions are detected and refused.
std::uint32_t fnv1a32(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

/// The origin server a URL names, as the key of its cache space: the host as
/// written (lower case) and its NFS port (0: found through rpcbind). Two spellings
/// of one server (a name and its address) get two spaces, which is only a cache
/// that is shared less; it never shares records between two servers.
std::string origin_server(const OriginUrl& u) {
  std::string host = u.host;
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  return "origin " + host + ":" + std::to_string(u.nfs_port);
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// A short rendering of a value for error messages.
std::string show(const Value& v) {
  switch (v.type()) {
    case toml::value_t::string: return "the string " + quote(v.as_string().str);
    case toml::value_t::integer: return "the integer " + std::to_string(v.as_integer());
    case toml::value_t::floating: {
      std::ostringstream os;
      os << v.as_floating();
      return "the float " + os.str();
    }
    case toml::value_t::boolean: return v.as_boolean() ? "true" : "false";
    case toml::value_t::table: return "a table";
    case toml::value_t::array: return "an array";
    case toml::value_t::empty: return "nothing";
    default: return "a date/time";
  }
}

/// Validates one parsed document; holds the file name for messages.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const Value* v, const std::string& key, const std::string& msg) const {
    std::string where = file_;
    if (v) {
      auto line = v->location().line();
      if (line > 0) where += ":" + std::to_string(line);
    }
    throw ConfigError(where + ": " + (key.empty() ? "" : key + ": ") + msg);
  }

  /// Refuses keys of `table` (named `name`) that are not in `allowed`.
  void only_keys(const Value& table, const std::string& name,
                 std::initializer_list<const char*> allowed) const {
    only_keys(table, name, std::vector<std::string>(allowed.begin(), allowed.end()));
  }
  void only_keys(const Value& table, const std::string& name,
                 const std::vector<std::string>& allowed) const {
    std::vector<std::string> keys;
    for (const auto& [k, _] : table.as_table()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());  // deterministic: report the first in order
    for (const auto& k : keys) {
      bool ok = std::find(allowed.begin(), allowed.end(), k) != allowed.end();
      if (!ok) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        std::string full = name.empty() ? k : name + "." + k;
        fail(&table.as_table().at(k), full,
             "unknown key " + quote(k) + " (value " + show(table.as_table().at(k)) + ")" +
                 (name.empty() ? " at top level" : " in " + name) + "; allowed: " + list);
      }
    }
  }

  const Value* find(const Value& table, const std::string& key) const {
    const auto& t = table.as_table();
    auto it = t.find(key);
    return it == t.end() ? nullptr : &it->second;
  }

  bool get_int(const Value& table, const std::string& key, const std::string& name,
               std::int64_t lo, std::int64_t hi, std::int64_t& out) const {
    const Value* v = find(table, key);
    if (!v) return false;
    std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    if (!v->is_integer()) fail(v, name, "expected an integer (" + range + "), got " + show(*v));
    std::int64_t i = v->as_integer();
    if (i < lo || i > hi) {
      fail(v, name, std::to_string(i) + " is out of range; allowed: " + range);
    }
    out = i;
    return true;
  }

  bool get_string(const Value& table, const std::string& key, const std::string& name,
                  std::string& out) const {
    const Value* v = find(table, key);
    if (!v) return false;
    if (!v->is_string()) fail(v, name, "expected a string, got " + show(*v));
    out = v->as_string().str;
    return true;
  }

  bool get_bool(const Value& table, const std::string& key, const std::string& name,
                bool& out) const {
    const Value* v = find(table, key);
    if (!v) return false;
    if (!v->is_boolean()) fail(v, name, "expected true or false, got " + show(*v));
    out = v->as_boolean();
    return true;
  }

  /// Reads a duration string ("30s", see config/duration.h) within [lo, hi].
  bool get_duration(const Value& table, const std::string& key, const std::string& name,
                    std::chrono::milliseconds lo, std::chrono::milliseconds hi,
                    std::chrono::milliseconds& out) const {
    const Value* v = find(table, key);
    if (!v) return false;
    if (!v->is_string()) {
      fail(v, name, "expected a duration string such as \"30s\", got " + show(*v) +
                        "; allowed: " + kDurationForms);
    }
    const std::string& text = v->as_string().str;
    std::string why;
    auto d = parse_duration(text, &why);
    if (!d) fail(v, name, quote(text) + " is not a duration: " + why + "; allowed: " + kDurationForms);
    if (*d < lo || *d > hi) {
      fail(v, name, quote(text) + " is out of range; allowed: " + format_duration(lo) + ".." +
                        format_duration(hi));
    }
    out = *d;
    return true;
  }

  /// Reads a sub-table; nullptr when absent.
  const Value* get_table(const Value& root, const std::string& key) const {
    const Value* v = find(root, key);
    if (v && !v->is_table()) fail(v, key, "expected a table ([" + key + "]), got " + show(*v));
    return v;
  }

  ServerConfig server(const Value& t) const {
    ServerConfig s;
    only_keys(t, "server",
              {"listen", "nfs_port", "mount_port", "threads", "register_rpcbind", "max_record_bytes",
               "max_connections", "max_calls_in_flight", "max_calls_in_flight_total", "max_pending_mb",
               "max_pending_mb_per_connection", "idle_timeout", "metrics_listen"});
    if (get_string(t, "listen", "server.listen", s.listen)) {
      unsigned char buf[16];
      if (inet_pton(AF_INET, s.listen.c_str(), buf) != 1 &&
          inet_pton(AF_INET6, s.listen.c_str(), buf) != 1) {
        fail(find(t, "listen"), "server.listen",
             quote(s.listen) + " is not an IP address; allowed: an IPv4 or IPv6 address such as "
                               "\"0.0.0.0\", \"127.0.0.1\" or \"::\" (host names are not resolved)");
      }
    }
    if (get_string(t, "metrics_listen", "server.metrics_listen", s.metrics_listen)) {
      std::string why;
      if (!valid_listen_address(s.metrics_listen, &why)) {
        fail(find(t, "metrics_listen"), "server.metrics_listen",
             quote(s.metrics_listen) + " is not an address to listen on: " + why +
                 "; allowed: \"IPv4:PORT\" or \"[IPv6]:PORT\" with a port 1..65535, such as \"127.0.0.1:9464\" "
                 "or \"[::1]:9464\" (host names are not resolved; leave the key out for no endpoint)");
      }
    }
    std::int64_t i = 0;
    if (get_int(t, "nfs_port", "server.nfs_port", 1, 65535, i)) s.nfs_port = static_cast<std::uint16_t>(i);
    if (get_int(t, "mount_port", "server.mount_port", 0, 65535, i)) s.mount_port = static_cast<std::uint16_t>(i);
    if (get_int(t, "threads", "server.threads", 0, 1024, i)) s.threads = static_cast<unsigned>(i);
    get_bool(t, "register_rpcbind", "server.register_rpcbind", s.register_rpcbind);
    if (get_int(t, "max_record_bytes", "server.max_record_bytes", 64 * 1024, 64 * 1024 * 1024, i)) {
      s.max_record_bytes = static_cast<std::uint32_t>(i);
    }
    // Upper bounds well past what one host serves: larger values are mistakes.
    if (get_int(t, "max_connections", "server.max_connections", 1, 1000000, i)) {
      s.max_connections = static_cast<std::uint32_t>(i);
    }
    if (get_int(t, "max_calls_in_flight", "server.max_calls_in_flight", 1, 65536, i)) {
      s.max_calls_in_flight = static_cast<std::uint32_t>(i);
    }
    if (get_int(t, "max_calls_in_flight_total", "server.max_calls_in_flight_total", 1, 1000000, i)) {
      s.max_calls_in_flight_total = static_cast<std::uint32_t>(i);
    }
    if (get_int(t, "max_pending_mb", "server.max_pending_mb", 1, 1 << 20, i)) {
      s.max_pending_mb = static_cast<std::uint32_t>(i);
    }
    if (get_int(t, "max_pending_mb_per_connection", "server.max_pending_mb_per_connection", 1, 1 << 20, i)) {
      s.max_pending_mb_per_connection = static_cast<std::uint32_t>(i);
    }
    // 0 (never) or at least a second; a week at most.
    get_duration(t, "idle_timeout", "server.idle_timeout", std::chrono::milliseconds(0),
                 std::chrono::hours(24 * 7), s.idle_timeout);
    if (s.idle_timeout.count() > 0 && s.idle_timeout < std::chrono::seconds(1)) {
      fail(find(t, "idle_timeout"), "server.idle_timeout",
           quote(format_duration(s.idle_timeout)) + " is too short; allowed: \"0\" (never) or 1s..7d");
    }
    // A per-connection limit above the server's would never apply.
    if (s.max_calls_in_flight > s.max_calls_in_flight_total) {
      fail(find(t, find(t, "max_calls_in_flight") ? "max_calls_in_flight" : "max_calls_in_flight_total"),
           "server.max_calls_in_flight",
           std::to_string(s.max_calls_in_flight) + " is more than server.max_calls_in_flight_total (" +
               std::to_string(s.max_calls_in_flight_total) + "); allowed: at most that");
    }
    if (s.max_pending_mb_per_connection > s.max_pending_mb) {
      fail(find(t, find(t, "max_pending_mb_per_connection") ? "max_pending_mb_per_connection" : "max_pending_mb"),
           "server.max_pending_mb_per_connection",
           std::to_string(s.max_pending_mb_per_connection) + " is more than server.max_pending_mb (" +
               std::to_string(s.max_pending_mb) + "); allowed: at most that");
    }
    return s;
  }

  CacheConfig cache(const Value* t) const {
    CacheConfig c;
    if (t) {
      only_keys(*t, "cache", {"dir", "memory_mb", "metadata_max_gb", "block_kb", "data_max_gb",
                               "secret_file"});
      if (get_string(*t, "dir", "cache.dir", c.dir) && c.dir.empty()) {
        fail(find(*t, "dir"), "cache.dir", "the empty string is not a directory; allowed: a path");
      }
      std::int64_t i = 0;
      // Upper bound 1 TiB: anything larger is a unit mistake (bytes written as MiB).
      if (get_int(*t, "memory_mb", "cache.memory_mb", 16, 1 << 20, i)) c.memory_mb = static_cast<std::uint32_t>(i);
      // Upper bound 64 TiB: beyond that it is a unit mistake (MiB written as GiB).
      if (get_int(*t, "metadata_max_gb", "cache.metadata_max_gb", 1, 65536, i)) {
        c.metadata_max_gb = static_cast<std::uint32_t>(i);
      }
      if (get_int(*t, "block_kb", "cache.block_kb", 64, 16384, i)) {
        if ((i & (i - 1)) != 0) {
          fail(find(*t, "block_kb"), "cache.block_kb",
               std::to_string(i) + " is not a power of two; allowed: 64, 128, 256, ..., 16384");
        }
        c.block_kb = static_cast<std::uint32_t>(i);
      }
      if (get_int(*t, "data_max_gb", "cache.data_max_gb", 1, 65536, i)) {
        c.data_max_gb = static_cast<std::uint32_t>(i);
      }
      if (get_string(*t, "secret_file", "cache.secret_file", c.secret_file) && c.secret_file.empty()) {
        fail(find(*t, "secret_file"), "cache.secret_file",
             "the empty string is not a file; allowed: a path (or leave the key out for <cache.dir>/secret)");
      }
    }
    if (c.secret_file.empty()) {
      c.secret_file = c.dir + (c.dir.back() == '/' ? "" : "/") + "secret";
    }
    return c;
  }

  /// What clients mount: absolute, one spelling per directory (no "", "." or ".."
  /// components, no trailing '/'), so duplicates and ids are well defined.
  void check_export_path(const Value* v, const std::string& name, const std::string& p) const {
    const std::string allowed =
        "; allowed: an absolute path such as \"/data\" without \".\", \"..\", \"//\" or a trailing \"/\"";
    if (p.empty() || p[0] != '/') fail(v, name, quote(p) + " is not absolute" + allowed);
    if (p.size() > 1024) fail(v, name, "the path is longer than 1024 bytes (MNTPATHLEN)");
    if (p.find('\0') != std::string::npos) fail(v, name, quote(p) + " contains a NUL character" + allowed);
    if (p == "/") return;
    if (p.back() == '/') fail(v, name, quote(p) + " ends with \"/\"" + allowed);
    std::size_t pos = 1;
    while (pos <= p.size()) {
      auto next = p.find('/', pos);
      if (next == std::string::npos) next = p.size();
      std::string comp = p.substr(pos, next - pos);
      if (comp.empty()) fail(v, name, quote(p) + " contains \"//\"" + allowed);
      if (comp == "..") fail(v, name, quote(p) + " contains \"..\"" + allowed);
      if (comp == ".") fail(v, name, quote(p) + " contains \".\"" + allowed);
      pos = next + 1;
    }
  }

  ExportConfig one_export(const Value& t, const std::string& name) const {
    ExportConfig e;
    only_keys(t, name, export_keys());
    if (!get_string(t, "path", name + ".path", e.path)) {
      fail(&t, name + ".path", "missing; every export needs the path clients mount, e.g. path = \"/data\"");
    }
    check_export_path(find(t, "path"), name + ".path", e.path);
    e.id = fnv1a32(e.path);

    std::string origin;
    if (!get_string(t, "origin", name + ".origin", origin)) {
      fail(&t, name + ".origin",
           "missing; every export needs an origin such as \"nfs://server/export\"");
    }
    try {
      e.origin = OriginUrl::parse(origin);
      e.cache_space = fnv1a32(origin_server(e.origin));
    } catch (const ConfigError& err) {
      fail(find(t, "origin"), name + ".origin", err.what());
    }

    std::string s;
    if (get_string(t, "access", name + ".access", s)) {
      if (s == "rw") e.access = Access::ReadWrite;
      else if (s == "ro") e.access = Access::ReadOnly;
      else fail(find(t, "access"), name + ".access", quote(s) + " is not an access mode; allowed: \"rw\", \"ro\"");
    }
    if (get_string(t, "squash", name + ".squash", s)) {
      if (s == "none") e.squash = Squash::None;
      else if (s == "root") e.squash = Squash::Root;
      else if (s == "all") e.squash = Squash::All;
      else fail(find(t, "squash"), name + ".squash", quote(s) + " is not a squash mode; allowed: \"none\", \"root\", \"all\"");
    }
    std::int64_t i = 0;
    if (get_int(t, "anon_uid", name + ".anon_uid", 0, 4294967295LL, i)) e.anon_uid = static_cast<std::uint32_t>(i);
    if (get_int(t, "anon_gid", name + ".anon_gid", 0, 4294967295LL, i)) e.anon_gid = static_cast<std::uint32_t>(i);
    if (get_int(t, "warm_uid", name + ".warm_uid", 0, 4294967295LL, i)) e.warm_uid = static_cast<std::uint32_t>(i);
    if (get_int(t, "warm_gid", name + ".warm_gid", 0, 4294967295LL, i)) e.warm_gid = static_cast<std::uint32_t>(i);
    if (get_int(t, "upstream_connections", name + ".upstream_connections", 1, 64, i)) {
      e.upstream_connections = static_cast<unsigned>(i);
    }
    get_duration(t, "origin_timeout", name + ".origin_timeout", kMinOriginTimeout,
                 kMaxOriginTimeout, e.origin_timeout);

    coherency(t, name, e.coherency);
    get_bool(t, "data_cache", name + ".data_cache", e.data_cache);
    if (get_int(t, "readahead_kb", name + ".readahead_kb", 0, 262144, i)) {
      e.readahead_kb = static_cast<std::uint32_t>(i);
    }

    if (const Value* c = find(t, "clients")) {
      if (!c->is_array()) fail(c, name + ".clients", "expected an array of networks such as [\"10.0.0.0/8\"], got " + show(*c));
      const auto& arr = c->as_array();
      if (arr.empty()) {
        fail(c, name + ".clients",
             "the empty array lets no client in; allowed: one or more networks (leave the key out for everyone)");
      }
      for (std::size_t k = 0; k < arr.size(); ++k) {
        std::string item = name + ".clients[" + std::to_string(k) + "]";
        if (!arr[k].is_string()) fail(&arr[k], item, "expected a network string such as \"10.0.0.0/8\", got " + show(arr[k]));
        try {
          e.clients.push_back(Cidr::parse(arr[k].as_string().str));
        } catch (const ConfigError& err) {
          fail(&arr[k], item, err.what());
        }
      }
    } else {
      e.clients.push_back(Cidr::parse("0.0.0.0/0"));
      e.clients.push_back(Cidr::parse("::/0"));
    }
    return e;
  }

  /// Every key of an [[export]] table: the fixed ones, then the duration keys.
  static const std::vector<std::string>& export_keys() {
    static const std::vector<std::string> keys = [] {
      std::vector<std::string> k{"path", "origin", "access", "clients", "squash", "anon_uid",
                                 "anon_gid", "warm_uid", "warm_gid", "upstream_connections", "origin_timeout",
                                 "metadata_cache",
                                 "data_cache", "readahead_kb",
                                 "consistency", "access_check"};
      for (const auto& d : cache::kDurationSettings) k.emplace_back(d.key);
      return k;
    }();
    return keys;
  }

  /// The export's metadata cache keys; every duration key comes from the table in
  /// cache/coherency.h, with its bounds.
  void coherency(const Value& t, const std::string& name, cache::CoherencySettings& c) const {
    get_bool(t, "metadata_cache", name + ".metadata_cache", c.enabled);
    std::string s;
    if (get_string(t, "consistency", name + ".consistency", s)) {
      if (s == "ttl") c.consistency = cache::Consistency::Ttl;
      else if (s == "strict") c.consistency = cache::Consistency::Strict;
      else if (s == "immutable") c.consistency = cache::Consistency::Immutable;
      else fail(find(t, "consistency"), name + ".consistency",
                quote(s) + " is not a consistency mode; allowed: \"ttl\", \"strict\", \"immutable\"");
    }
    if (get_string(t, "access_check", name + ".access_check", s)) {
      if (s == "origin") c.access_check = cache::AccessCheck::Origin;
      else if (s == "local") c.access_check = cache::AccessCheck::Local;
      else fail(find(t, "access_check"), name + ".access_check",
                quote(s) + " is not an access check; allowed: \"origin\", \"local\"");
    }
    for (const auto& d : cache::kDurationSettings) {
      get_duration(t, d.key, name + "." + d.key, d.min, d.max, c.*d.field);
    }
  }

  std::vector<ExportConfig> exports(const Value& root) const {
    const Value* v = find(root, "export");
    if (!v) fail(nullptr, "export", "no exports; add at least one [[export]] table with path and origin");
    if (!v->is_array()) fail(v, "export", "expected [[export]] tables, got " + show(*v));
    const auto& arr = v->as_array();
    if (arr.empty()) fail(v, "export", "no exports; add at least one [[export]] table with path and origin");
    std::vector<ExportConfig> out;
    for (std::size_t k = 0; k < arr.size(); ++k) {
      std::string name = "export[" + std::to_string(k) + "]";
      if (!arr[k].is_table()) fail(&arr[k], name, "expected a table, got " + show(arr[k]));
      ExportConfig e = one_export(arr[k], name);
      for (std::size_t j = 0; j < out.size(); ++j) {
        if (out[j].path == e.path) {
          fail(find(arr[k], "path"), name + ".path",
               quote(e.path) + " is already exported by export[" + std::to_string(j) +
                   "]; allowed: each path once");
        }
        if (out[j].id == e.id) {
          fail(find(arr[k], "path"), name + ".path",
               quote(e.path) + " hashes to the same export id (" + std::to_string(e.id) +
                   ") as export[" + std::to_string(j) + "].path " + quote(out[j].path) +
                   "; rename one of them");
        }
      }
      out.push_back(std::move(e));
    }
    return out;
  }

 private:
  std::string file_;
};

}  // namespace

Config parse_config(const std::string& toml_text, const std::string& origin_name) {
  // A TOML document is UTF-8 (TOML 1.0). Refused here, before toml11 3.7 sees it:
  // a literal string ('...' or '''...''') holding invalid UTF-8 makes its error path
  // read outside the text (found by tests/fuzz/fuzz_config).
  if (auto bad = first_invalid_utf8(toml_text)) {
    const auto before = std::string_view(toml_text).substr(0, *bad);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto column = *bad - (before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1) + 1;
    throw ConfigError(origin_name + ":" + std::to_string(line) + ": not valid UTF-8 at column " +
                      std::to_string(column) + " (a TOML file must be UTF-8 text)");
  }
  // toml11 recurses once per nested array or inline table: bounded here, or a few
  // thousand '[' overflow the stack (found by tests/fuzz/fuzz_config).
  if (auto deep = first_too_deep(toml_text)) {
    const auto before = std::string_view(toml_text).substr(0, *deep);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    throw ConfigError(origin_name + ":" + std::to_string(line) + ": arrays or tables nested deeper than " +
                      std::to_string(kMaxNesting) + " levels");
  }
  // toml11 adds up a binary literal's digits in an int64 with no bound (a signed
  // overflow; found by tests/fuzz/fuzz_config under UBSan): too long ones stop here.
  if (auto big = first_overlong_binary(toml_text)) {
    const auto before = std::string_view(toml_text).substr(0, *big);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    throw ConfigError(origin_name + ":" + std::to_string(line) + ": a binary integer of more than " +
                      std::to_string(kMaxBinaryDigits) +
                      " digits (leading zeros included) cannot be read; write it in decimal or hex");
  }
  Value root;
  try {
    std::istringstream in(toml_text);
    root = toml::parse(in, origin_name);
  } catch (const toml::exception& e) {
    // toml11's message shows the offending line with a caret under the column;
    // the line number goes up front too, in the same form as validation errors.
    std::string where = origin_name;
    if (auto line = e.location().line(); line > 0) where += ":" + std::to_string(line);
    throw ConfigError(where + ": TOML syntax error: " + e.what());
  } catch (const std::exception& e) {
    throw ConfigError(origin_name + ": cannot parse TOML: " + e.what());
  }
  Reader r(origin_name);
  if (!root.is_table()) r.fail(nullptr, "", "the document is not a TOML table");
  r.only_keys(root, "", {"server", "cache", "export"});
  Config cfg;
  if (const Value* s = r.get_table(root, "server")) cfg.server = r.server(*s);
  cfg.cache = r.cache(r.get_table(root, "cache"));
  cfg.exports = r.exports(root);
  return cfg;
}

Config load_config(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(path + ": is a directory, not a configuration file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path + ": cannot open the configuration file: " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read the configuration file");
  return parse_config(text.str(), path);
}

}  // namespace nfsgw::config
