// A small NFSv3 client over one libnfs raw rpc_context that keeps many calls in
// flight and records each call's round trip. Used to measure wan-emu (throughput and
// delay accuracy) and by its end-to-end test. libnfs headers stay in nfs_probe.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nfsgw::wanemu::probe {

enum class Proc { Null, Getattr };

struct BatchResult {
  std::uint64_t ok = 0;       // calls answered with RPC success
  std::uint64_t failed = 0;   // calls that ended with an error or were cancelled
  std::uint64_t unfinished = 0;  // still outstanding when the time ran out
  double seconds = 0;         // wall time of the batch
  std::vector<double> rtt_ms; // one per ok call, in completion order
  std::string error;          // first error seen, if any
};

/// Quantile q in [0,1] of `v` (sorted copy; nearest rank). 0 when empty.
double quantile(std::vector<double> v, double q);

class NfsProbe {
 public:
  NfsProbe();
  ~NfsProbe();
  NfsProbe(const NfsProbe&) = delete;
  NfsProbe& operator=(const NfsProbe&) = delete;

  /// MOUNT3 MNT of `export_path` at host:mount_port on a separate connection; keeps
  /// the root file handle for GETATTR. False (see error()) on failure or timeout.
  bool mount(const std::string& host, int mount_port, const std::string& export_path,
             std::chrono::milliseconds timeout);
  /// TCP connect to the NFS port (no portmapper). False on failure or timeout.
  bool connect(const std::string& host, int nfs_port, std::chrono::milliseconds timeout);

  /// Issues `total` calls keeping at most `in_flight` outstanding; returns when all
  /// completed, the connection failed, or `timeout` passed.
  BatchResult run(Proc proc, std::uint64_t total, std::uint64_t in_flight, std::chrono::milliseconds timeout);

  const std::string& error() const { return error_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string error_;
};

}  // namespace nfsgw::wanemu::probe
