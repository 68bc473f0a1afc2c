#include "tools/wan-emu/traffic_counters.h"

#include <fmt/format.h>

namespace nfsgw::wanemu {

namespace {
std::string dir_json(const DirectionCounters& d) {
  return fmt::format(
      R"({{"bytes":{},"calls":{},"replies":{},"unmatched_replies":{},"unparsed_bytes":{},"short_records":{},)"
      R"("delayed_chunks":{},"late_us_mean":{},"late_us_max":{}}})",
      d.bytes, d.calls, d.replies, d.unmatched_replies, d.unparsed_bytes, d.short_records, d.delayed_chunks,
      d.delayed_chunks ? d.late_us_total / d.delayed_chunks : 0, d.late_us_max);
}
}  // namespace

std::string TrafficCounters::to_json(const std::string& extra) const {
  std::string out = "{";
  if (!extra.empty()) {
    out += extra;
    out += ',';
  }
  out += fmt::format(R"("connections":{{"accepted":{},"refused":{},"connect_failures":{}}},)",
                     connections_accepted, connections_refused, connect_failures);
  out += R"("up":)" + dir_json(dir(Direction::Up)) + ',';
  out += R"("down":)" + dir_json(dir(Direction::Down)) + ',';
  out += R"("procs":{)";
  bool first = true;
  for (const auto& [k, c] : procs_) {
    if (!first) out += ',';
    first = false;
    out += fmt::format(R"("{}:{}:{}":{{"calls":{},"replies":{}}})", k.prog, k.vers, k.proc, c.calls,
                       c.replies);
  }
  out += "}}";
  return out;
}

}  // namespace nfsgw::wanemu
