#include "tools/nfsgw-bench/call_stats.h"

namespace nfsgw::bench {

std::string nfs3_status_name(std::uint32_t status) {
  switch (status) {
    case 0: return "NFS3_OK";
    case 1: return "NFS3ERR_PERM";
    case 2: return "NFS3ERR_NOENT";
    case 5: return "NFS3ERR_IO";
    case 6: return "NFS3ERR_NXIO";
    case 13: return "NFS3ERR_ACCES";
    case 17: return "NFS3ERR_EXIST";
    case 18: return "NFS3ERR_XDEV";
    case 19: return "NFS3ERR_NODEV";
    case 20: return "NFS3ERR_NOTDIR";
    case 21: return "NFS3ERR_ISDIR";
    case 22: return "NFS3ERR_INVAL";
    case 27: return "NFS3ERR_FBIG";
    case 28: return "NFS3ERR_NOSPC";
    case 30: return "NFS3ERR_ROFS";
    case 31: return "NFS3ERR_MLINK";
    case 63: return "NFS3ERR_NAMETOOLONG";
    case 66: return "NFS3ERR_NOTEMPTY";
    case 69: return "NFS3ERR_DQUOT";
    case 70: return "NFS3ERR_STALE";
    case 71: return "NFS3ERR_REMOTE";
    case 10001: return "NFS3ERR_BADHANDLE";
    case 10002: return "NFS3ERR_NOT_SYNC";
    case 10003: return "NFS3ERR_BAD_COOKIE";
    case 10004: return "NFS3ERR_NOTSUPP";
    case 10005: return "NFS3ERR_TOOSMALL";
    case 10006: return "NFS3ERR_SERVERFAULT";
    case 10007: return "NFS3ERR_BADTYPE";
    case 10008: return "NFS3ERR_JUKEBOX";
    default: return "NFS3ERR_" + std::to_string(status);
  }
}

std::string nlm4_status_name(std::uint32_t status) {
  static const char* const kNames[] = {"NLM4_GRANTED",    "NLM4_DENIED",        "NLM4_DENIED_NOLOCKS",
                                       "NLM4_BLOCKED",    "NLM4_DENIED_GRACE_PERIOD", "NLM4_DEADLCK",
                                       "NLM4_ROFS",       "NLM4_STALE_FH",      "NLM4_FBIG",
                                       "NLM4_FAILED"};
  if (status < sizeof kNames / sizeof kNames[0]) return kNames[status];
  return "NLM4_" + std::to_string(status);
}

void CallStats::record_call(std::uint64_t latency, std::uint32_t status, const std::string& transport_error,
                            Statuses statuses) {
  ++calls;
  latency_ns.record(latency);
  if (!transport_error.empty())
    ++errors["RPC_ERROR"];
  else if (status != 0)
    ++errors[statuses == Statuses::Nlm4 ? nlm4_status_name(status) : nfs3_status_name(status)];
}

void CallStats::merge(const CallStats& other) {
  latency_ns.merge(other.latency_ns);
  request_latency_ns.merge(other.request_latency_ns);
  calls += other.calls;
  requests += other.requests;
  for (const auto& [name, n] : other.errors) errors[name] += n;
}

std::uint64_t CallStats::error_total() const {
  std::uint64_t total = 0;
  for (const auto& [name, n] : errors) total += n;
  return total;
}

}  // namespace nfsgw::bench
