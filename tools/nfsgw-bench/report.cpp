#include "tools/nfsgw-bench/report.h"

#include <cstdio>

namespace nfsgw::bench {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

double rate(std::uint64_t n, double seconds) { return seconds > 0 ? n / seconds : 0.0; }

/// Names here are our own status names ([A-Z0-9_]), but escape anyway so the
/// output stays valid JSON whatever goes in.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace

std::string human_line(const RunReport& r) {
  const auto& s = r.stats;
  std::string line = r.mode + ": " + std::to_string(s.calls) + " calls in " + fmt("%.3f", r.seconds) +
                     " s = " + fmt("%.0f", rate(s.calls, r.seconds)) + " calls/s, latency p50 " +
                     fmt("%.1f", us(s.latency_ns.percentile(50))) + " us p99 " +
                     fmt("%.1f", us(s.latency_ns.percentile(99))) + " us p99.9 " +
                     fmt("%.1f", us(s.latency_ns.percentile(99.9))) + " us (" +
                     std::to_string(r.connections) + " conn x " + std::to_string(r.inflight) +
                     " in flight)";
  if (s.requests > 0)
    line += "; " + std::to_string(s.requests) + " requests = " + fmt("%.0f", rate(s.requests, r.seconds)) +
            " req/s, p50 " + fmt("%.1f", us(s.request_latency_ns.percentile(50))) + " us p99 " +
            fmt("%.1f", us(s.request_latency_ns.percentile(99))) + " us";
  if (r.mode == "walk")
    line += "; walked " + std::to_string(r.walk_entries) + " entries in " + std::to_string(r.walk_dirs) +
            " folders" + (r.complete ? "" : " (INCOMPLETE)");
  if (r.write_mode)
    line += "; " + std::to_string(r.write_files) + " file(s) finished, " + std::to_string(r.write_bytes) +
            " bytes written = " + fmt("%.1f", rate(r.write_bytes, r.seconds) / 1048576.0) + " MiB/s" +
            (r.short_writes ? ", " + std::to_string(r.short_writes) + " short WRITE(s) completed" : "") +
            (r.complete ? "" : " (INCOMPLETE)");
  if (!s.errors.empty()) {
    line += "; non-OK:";
    for (const auto& [name, n] : s.errors) line += " " + name + "=" + std::to_string(n);
  }
  return line;
}

std::string to_json(const RunReport& r) {
  const auto& s = r.stats;
  std::string j = "{\"mode\":" + json_string(r.mode);
  j += ",\"connections\":" + std::to_string(r.connections);
  j += ",\"inflight\":" + std::to_string(r.inflight);
  j += ",\"threads\":" + std::to_string(r.threads);
  j += ",\"calls\":" + std::to_string(s.calls);
  j += ",\"seconds\":" + fmt("%.6f", r.seconds);
  j += ",\"calls_per_s\":" + fmt("%.1f", rate(s.calls, r.seconds));
  j += ",\"p50_us\":" + fmt("%.1f", us(s.latency_ns.percentile(50)));
  j += ",\"p99_us\":" + fmt("%.1f", us(s.latency_ns.percentile(99)));
  j += ",\"p999_us\":" + fmt("%.1f", us(s.latency_ns.percentile(99.9)));
  j += ",\"max_us\":" + fmt("%.1f", us(s.latency_ns.max()));
  j += ",\"errors\":{";
  bool first = true;
  for (const auto& [name, n] : s.errors) {
    if (!first) j += ",";
    j += json_string(name);
    j += ":";
    j += std::to_string(n);
    first = false;
  }
  j += "}";
  if (s.requests > 0) {
    j += ",\"requests\":" + std::to_string(s.requests);
    j += ",\"requests_per_s\":" + fmt("%.1f", rate(s.requests, r.seconds));
    j += ",\"req_p50_us\":" + fmt("%.1f", us(s.request_latency_ns.percentile(50)));
    j += ",\"req_p99_us\":" + fmt("%.1f", us(s.request_latency_ns.percentile(99)));
    j += ",\"req_p999_us\":" + fmt("%.1f", us(s.request_latency_ns.percentile(99.9)));
  }
  if (r.mode == "walk") {
    j += std::string(",\"complete\":") + (r.complete ? "true" : "false");
    j += ",\"entries\":" + std::to_string(r.walk_entries);
    j += ",\"dirs\":" + std::to_string(r.walk_dirs);
  }
  if (r.write_mode) {
    j += std::string(",\"complete\":") + (r.complete ? "true" : "false");
    j += ",\"files\":" + std::to_string(r.write_files);
    j += ",\"bytes\":" + std::to_string(r.write_bytes);
    j += ",\"short_writes\":" + std::to_string(r.short_writes);
  }
  return j + "}";
}

}  // namespace nfsgw::bench
