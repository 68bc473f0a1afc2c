// Runs the nfsgw executable under test: writes its TOML config, starts it in the
// foreground (its stderr log goes to a file shown on failure), waits until it accepts
// TCP connections, and stops it with SIGTERM like an operator would.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace integ {

/// Where the nfsgw binary is: $NFSGW_BIN when set (CI's sanitizer stage runs these
/// tests against its ASan build of nfsgw), else the CMake target's file (compile
/// definition NFSGW_BIN_PATH), else <build dir>/nfsgw or <build dir>/gateway/nfsgw.
/// nullopt when none exists.
std::optional<std::string> nfsgw_binary();

/// Whether that nfsgw is built with ASan, so that memory bounds allow for its
/// quarantine and shadow: $NFSGW_BIN_SANITIZED=1, or these tests themselves built
/// with -DNFSGW_SANITIZE=ON (then their own nfsgw is too).
bool nfsgw_sanitized();

/// The wan-emu relay binary (target wan-emu, $WAN_EMU_BIN, <build>/tools/wan-emu/wan-emu).
std::optional<std::string> wan_emu_binary();

/// NFSGW_INTEG_SELFTEST=1 (developing the tests without nfsgw): tests that use the
/// shared gateway talk to the origin in its place, which checks the tests' own logic.
bool selftest_mode();

// nfsgw is always built with the tests: a missing binary fails the calling test.
#define INTEG_REQUIRE_NFSGW()                                                            \
  do {                                                                                   \
    if (!::integ::nfsgw_binary())                                                        \
      GTEST_FAIL() << "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";    \
  } while (0)
/// For tests of the shared gateway only: also runs them in selftest mode.
#define INTEG_REQUIRE_GATEWAY()                                                          \
  do {                                                                                   \
    if (!::integ::nfsgw_binary() && !::integ::selftest_mode())                           \
      GTEST_FAIL() << "nfsgw binary not found (set NFSGW_BIN or build target nfsgw)";    \
  } while (0)

/// An export's metadata cache settings. Only what is set is written to the TOML,
/// so a test that sets nothing runs with nfsgw's own defaults.
struct MetadataCacheSettings {
  std::optional<bool> enabled;             // metadata_cache
  std::optional<std::string> consistency;  // "ttl" | "strict" | "immutable"
  std::optional<std::string> access_check; // "origin" | "local"
  /// Window keys and their duration strings: {"attr_ttl", "2s"}, {"dir_ttl", "10m"},
  /// negative_ttl, access_ttl, fsstat_ttl, fsinfo_ttl (written as given).
  std::map<std::string, std::string> durations;
};

/// One [[export]] table.
struct ExportSettings {
  std::string export_path = "/export";
  std::string origin_url;           // libnfs URL of the origin export
  std::string access = "rw";        // "rw" | "ro"
  std::string squash = "none";      // "none" | "root" | "all"
  std::uint32_t anon_uid = 65534, anon_gid = 65534;
  std::vector<std::string> clients = {"127.0.0.0/8"};
  unsigned upstream_connections = 4;
  MetadataCacheSettings metadata;
  std::optional<bool> data_cache;          // unset: nfsgw's default (on)
  std::optional<unsigned> readahead_kb;
  std::optional<std::string> origin_timeout;  // duration string; unset: nfsgw's default
  std::optional<std::string> writes;            // "through" | "back"; unset: nfsgw's default
  std::optional<std::string> write_back_delay;  // duration string
  /// More keys of this export, each value as TOML text: {"origin_nlm_port", "4045"}.
  std::vector<std::pair<std::string, std::string>> export_extra;
};

/// A gateway: its first export (the inherited fields, as before), the server and
/// cache settings, and optionally more exports.
struct GatewayConfig : ExportSettings {
  std::uint16_t port = 0;           // NFS and MOUNT both on this port
  unsigned threads = 2;
  std::uint32_t max_record_bytes = 4u << 20;
  // [cache]; unset keys are not written (nfsgw's defaults).
  std::optional<unsigned> memory_mb;
  std::optional<unsigned> metadata_max_gb;
  std::optional<std::string> secret_file;  // default <cache dir>/secret
  std::optional<unsigned> block_kb;
  std::optional<unsigned> data_max_gb;
  std::optional<unsigned> dirty_max_gb;
  /// More [server] keys, each value as TOML text: {"max_connections", "4"},
  /// {"idle_timeout", "\"2s\""}.
  std::vector<std::pair<std::string, std::string>> server_extra;
  /// Further [[export]] tables after the first; an empty origin_url means the
  /// first export's.
  std::vector<ExportSettings> extra_exports;
};

/// The TOML text nfsgw reads for `cfg`, with its cache under `cache_dir`.
std::string gateway_toml(const GatewayConfig& cfg, const std::string& cache_dir);

class Gateway {
 public:
  /// Writes <work_dir>/nfsgw.toml (cache in <work_dir>/cache); does not start.
  Gateway(GatewayConfig cfg, std::string work_dir);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  /// Starts nfsgw and waits (at most 30 s) until its port accepts connections.
  /// Throws with the log when the process exits or never listens.
  void start();
  /// SIGTERM and wait; returns the exit code.
  int stop();
  /// SIGKILL (a crash: nothing is flushed or closed) and wait; returns the exit
  /// code (137). start() again serves from the same config and cache dir.
  int kill9();
  bool running() const;
  /// The running process's id; -1 when not started.
  pid_t pid() const;

  /// Client URL of the export: nfs://127.0.0.1/export?nfsport=P&mountport=P
  std::string url() const;
  std::string url(const std::string& file) const;  // a file below the export root
  std::uint16_t port() const { return cfg_.port; }
  const std::string& config_path() const { return config_path_; }
  const GatewayConfig& config() const { return cfg_; }
  std::string cache_dir() const { return work_dir_ + "/cache"; }
  std::string log() const;

  /// Runs the admin CLI against this gateway's config:
  /// `nfsgw <command> --config <config_path()> <args...>` (e.g. "stats", or
  /// "invalidate" with {"/export/dir", "--recursive"}), bounded by `timeout`.
  RunResult cli(const std::string& command, const std::vector<std::string>& args = {},
                std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

 private:
  GatewayConfig cfg_;
  std::string work_dir_, config_path_, log_path_;
  std::unique_ptr<Process> proc_;
};

/// True once 127.0.0.1:port accepts a TCP connection; polls until `timeout_ms`.
bool wait_for_port(std::uint16_t port, int timeout_ms, Process* must_stay_alive = nullptr);

}  // namespace integ
