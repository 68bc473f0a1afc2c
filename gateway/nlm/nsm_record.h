// nfsgw's own status-monitor record (issue 21, design.md "Byte-range locks", item
// 8): its NSM state number and the client hosts it has asked statd to monitor,
// kept in one small file under the cache directory so that after a restart
// (kill -9 included) nfsgw can tell each of those hosts, with SM_NOTIFY and a
// new state number, that it rebooted, and their lock managers reclaim.
//
// The file is replaced whole and durably (written to "<file>.tmp", fsync,
// rename over the file, fsync of the directory): a crash at any point leaves
// either the previous record or the new one, never a mix. A file that does not
// parse (cut short by a disk that lied about fsync, edited by hand) is refused
// with the reason; the caller decides (nfsgw logs it and starts with no hosts).
//
// Format (text, one item a line, tab-separated):
//   nfsgw-nsm 1
//   state <n>
//   host <mon_name> <address> <my_name>      (zero or more)
//   end <number of host lines>
//
// The state number follows the NSM rule: odd while nfsgw is up, even after a
// clean stop, and it only grows (next_up_state); 1 after the largest int32.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nfsgw::nlm {

struct MonitoredHost {
  /// The name nfsgw gave statd's SM_MON (the client's caller name).
  std::string mon_name;
  /// Where that host's statd is reached (its address, found through its rpcbind).
  std::string address;
  /// The name that host knows nfsgw by (the server address it sent its NLM calls
  /// to): the mon_name of the SM_NOTIFY nfsgw sends it after a restart, which its
  /// statd matches against the servers it monitors.
  std::string my_name;
  friend bool operator==(const MonitoredHost&, const MonitoredHost&) = default;
};

struct NsmRecord {
  std::int32_t state = 0;
  std::vector<MonitoredHost> hosts;  // at most one entry per mon_name

  /// Adds `h`, or replaces the entry of the same mon_name. False when it was
  /// already there unchanged (nothing to save).
  bool add(MonitoredHost h);
  /// Removes the entry of `mon_name`. False when there was none.
  bool remove(const std::string& mon_name);
  const MonitoredHost* find(const std::string& mon_name) const;
  friend bool operator==(const NsmRecord&, const NsmRecord&) = default;
};

/// Bounds: a field of a host line is 1 to kMaxNsmField bytes (SM_MAXSTRLEN) and
/// holds no tab, newline, carriage return or NUL; at most kMaxMonitoredHosts.
constexpr std::size_t kMaxNsmField = 1024;
constexpr std::size_t kMaxMonitoredHosts = 65536;

/// Why `h` cannot be recorded ("" when it can).
std::string invalid_host(const MonitoredHost& h);

/// The state number to run with after `previous`: the next odd number above it
/// (1 when there was no record, previous == 0, or past INT32_MAX).
std::int32_t next_up_state(std::int32_t previous);
/// The state number after a clean stop of a run at `up` (the next even number).
std::int32_t down_state(std::int32_t up);

class NsmRecordFile {
 public:
  explicit NsmRecordFile(std::filesystem::path path) : path_(std::move(path)) {}

  struct Loaded {
    bool ok = false;
    bool existed = false;  // false: no file (first start): an empty record
    NsmRecord record;
    std::string error;     // why not ok
  };
  /// Reads the record. No file: ok, existed = false, state 0, no hosts.
  Loaded load() const;
  /// Replaces the file durably with `r`. "" on success, else the reason (the
  /// previous file is then intact).
  std::string save(const NsmRecord& r) const;

  /// The start of a run: loads the record, moves its state to next_up_state and
  /// saves it before returning, so the new state is on disk before anyone is told
  /// it. A record that does not load is replaced by {state 1, no hosts}: ok, with
  /// `error` saying what was dropped (to log). ok is false only when the save
  /// failed (nfsgw must not run with a state it could not keep).
  /// `at_least`: the state is at least this (made odd): a floor from the clock,
  /// so that a record lost or new (another cache directory) still gives a state
  /// no earlier run under the same name used: a statd drops a notice whose state
  /// it has already seen for that name.
  Loaded start_run(std::int32_t at_least = 0) const;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace nfsgw::nlm
