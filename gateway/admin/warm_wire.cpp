#include "gateway/admin/warm_wire.h"

#include <stdexcept>

#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/wire_fields.h"

namespace nfsgw::warm {

namespace {

constexpr std::string_view kProgress = "progress";
constexpr std::string_view kFailed = "failed";
constexpr std::string_view kSummary = "summary";

std::string fields(const WarmFigures& f) {
  return "entries=" + std::to_string(f.entries) + " dirs=" + std::to_string(f.dirs) +
         " bytes=" + std::to_string(f.bytes) + " data_total=" + std::to_string(f.data_total) +
         " failed=" + std::to_string(f.failed) + " paths_total=" + std::to_string(f.paths_total) +
         " paths_done=" + std::to_string(f.paths_done) + " discovering=" + std::to_string(f.discovering);
}

WarmFigures figures_from(const admin::WireFields& m) {
  auto get = [&](std::string_view k) { return admin::wire_field(m, k); };
  return {get("entries"),     get("dirs"),       get("bytes"),      get("data_total"),
          get("failed"),      get("paths_total"), get("paths_done"), get("discovering")};
}

}  // namespace

std::string format_progress(const WarmFigures& f) { return std::string(kProgress) + " " + fields(f) + "\n"; }

std::string format_failure(const WarmFailure& f) {
  return std::string(kFailed) + " " + admin::percent_encode(f.path) + " " +
         admin::escape_line(f.why.empty() ? std::string_view("failed") : std::string_view(f.why)) + "\n";
}

std::string format_summary(const WarmOutcome& o) {
  return std::string(kSummary) + " " + fields(o.figures) + " origin_calls=" + std::to_string(o.origin_calls) +
         " blocks_fetched=" + std::to_string(o.blocks_fetched) + " bytes_fetched=" + std::to_string(o.bytes_fetched) +
         " ms=" + std::to_string(o.ms) + " cancelled=" + (o.cancelled ? "1" : "0") + "\n";
}

std::optional<WarmFigures> parse_progress(std::string_view line) {
  const auto m = admin::parse_wire_fields(line, kProgress);
  if (!m) return std::nullopt;
  return figures_from(*m);
}

std::optional<WarmFailure> parse_failure(std::string_view line) {
  if (line.substr(0, kFailed.size() + 1) != "failed ") return std::nullopt;
  line.remove_prefix(kFailed.size() + 1);
  const std::size_t sp = line.find(' ');
  if (sp == 0 || sp == std::string_view::npos) return std::nullopt;
  try {
    return WarmFailure{admin::percent_decode(line.substr(0, sp)), std::string(line.substr(sp + 1))};
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::optional<WarmOutcome> parse_summary(std::string_view line) {
  const auto m = admin::parse_wire_fields(line, kSummary);
  if (!m) return std::nullopt;
  WarmOutcome o;
  o.figures = figures_from(*m);
  auto get = [&](std::string_view k) { return admin::wire_field(*m, k); };
  o.origin_calls = get("origin_calls");
  o.blocks_fetched = get("blocks_fetched");
  o.bytes_fetched = get("bytes_fetched");
  o.ms = get("ms");
  o.cancelled = get("cancelled") != 0;
  return o;
}

}  // namespace nfsgw::warm
