// Parsing a configuration that must be refused, for the config tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "config/config.h"

namespace nfsgw::config::testing {

/// A file that sets every key to something other than its default (and within
/// the rules between keys).
inline constexpr const char* kEveryKey = R"(
[server]
listen = "::1"
nfs_port = 12049
mount_port = 12050
threads = 8
register_rpcbind = false
max_record_bytes = 1048576
max_connections = 5000
max_calls_in_flight = 64
max_calls_in_flight_total = 10000
max_pending_mb = 1024
max_pending_mb_per_connection = 32
idle_timeout = "90s"
metrics_listen = "127.0.0.1:9464"
nlm_port = 4045
nlm_grace = "30s"
nlm_retry_interval = "500ms"
nlm_max_locks = 1000
nlm_max_waiters = 100
nlm_max_owners = 200
nlm_caller_name = "gw-1.example"

[cache]
dir = "/tmp/gwcache"
memory_mb = 64
metadata_max_gb = 100
block_kb = 256
data_max_gb = 200
dirty_max_gb = 32
secret_file = "/etc/nfsgw/secret"
answer_memo = false
peek_memo = false

[[export]]
path = "/projects/alpha"
origin = "nfs://[fd00::7]:2050/export/alpha?mountport=635"
access = "ro"
clients = ["10.0.0.0/8", "2001:db8::/32", "192.168.1.10"]
squash = "all"
anon_uid = 1000
anon_gid = 4294967295
warm_uid = 3000
warm_gid = 4000
upstream_connections = 64
origin_timeout = "2m"
metadata_cache = false
data_cache = false
readahead_kb = 0
write_back_delay = "5m"
origin_nlm_port = 4045
origin_statd_port = 662
consistency = "strict"
access_check = "local"
attr_ttl = "500ms"
dir_ttl = "10m"
negative_ttl = "0"
access_ttl = "2h"
fsstat_ttl = "1s"
fsinfo_ttl = "1d"
)";

/// The keys kEveryKey cannot set away from their default, because a rule between
/// keys would refuse them beside the values it sets (`writes = "back"` needs
/// `access = "rw"` and `metadata_cache = true`), each with a line that sets it in
/// an export of its own.
inline const std::vector<std::pair<std::string, std::string>> kEveryKeyLeftOut = {{"writes", "writes = \"back\""}};

/// kEveryKeyLeftOut's line for `key`, or "".
inline std::string left_out_line(const std::string& key) {
  for (const auto& [k, line] : kEveryKeyLeftOut)
    if (k == key) return line;
  return "";
}

/// The error message of parsing `toml` as "test.toml", or "" when it is accepted.
inline std::string message_of(const std::string& toml) {
  try {
    parse_config(toml, "test.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

/// One export with only its required keys, to append to a test's sections.
inline const std::string kExport = "[[export]]\npath = \"/e\"\norigin = \"nfs://h/e\"\n";

/// The export of kExport with `export_lines` added to it.
inline ExportConfig export_of(const std::string& export_lines) {
  return parse_config(kExport + export_lines, "test.toml").exports.at(0);
}

/// Refused, and the message starts with the file and carries every substring.
inline void expect_refused(const std::string& toml, const std::vector<std::string>& expect) {
  std::string m = message_of(toml);
  ASSERT_FALSE(m.empty()) << "accepted:\n" << toml;
  EXPECT_EQ(m.rfind("test.toml:", 0), 0u) << m;
  for (const auto& s : expect) EXPECT_NE(m.find(s), std::string::npos) << "missing '" << s << "' in: " << m;
}

}  // namespace nfsgw::config::testing
