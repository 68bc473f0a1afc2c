#pragma once
// Per-thread counters of a run: call latencies, request latencies (for modes
// whose unit of work is several calls, e.g. php), and non-OK outcomes counted
// by name ("NFS3ERR_NOENT", "RPC_ERROR"). Threads keep their own and merge at
// the end, so the hot path takes no lock.
#include <cstdint>
#include <map>
#include <string>

#include "tools/nfsgw-bench/latency_histogram.h"

namespace nfsgw::bench {

/// "NFS3_OK", "NFS3ERR_NOENT", ... or "NFS3ERR_<number>" for unknown codes.
std::string nfs3_status_name(std::uint32_t status);
/// "NLM4_GRANTED", "NLM4_DENIED", ... or "NLM4_<number>" for unknown codes.
std::string nlm4_status_name(std::uint32_t status);

struct CallStats {
  LatencyHistogram latency_ns;          ///< one sample per completed call
  LatencyHistogram request_latency_ns;  ///< one sample per completed request (php)
  std::uint64_t calls = 0;
  std::uint64_t requests = 0;
  std::map<std::string, std::uint64_t> errors;

  /// Which protocol's statuses a call's status is.
  enum class Statuses { Nfs3, Nlm4 };
  /// One completed call: transport_error empty means a reply was decoded and
  /// status is its status (NFS3, or NLM4 for the locks mode).
  void record_call(std::uint64_t latency, std::uint32_t status, const std::string& transport_error,
                   Statuses statuses = Statuses::Nfs3);
  void merge(const CallStats& other);
  std::uint64_t error_total() const;
};

}  // namespace nfsgw::bench
