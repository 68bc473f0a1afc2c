#include "gateway/admin/flush_wire.h"

#include "gateway/admin/admin_protocol.h"
#include "gateway/admin/wire_fields.h"

namespace nfsgw::admin {

namespace {

constexpr std::string_view kProgress = "progress";
constexpr std::string_view kSummary = "summary";
constexpr std::string_view kFlushed = "flushed ";

std::string fields(const FlushFigures& f) {
  return "files_left=" + std::to_string(f.files_left) + " bytes_left=" + std::to_string(f.bytes_left) +
         " bytes_flushed=" + std::to_string(f.bytes_flushed);
}

FlushFigures figures_from(const WireFields& m) {
  return {wire_field(m, "files_left"), wire_field(m, "bytes_left"), wire_field(m, "bytes_flushed")};
}

}  // namespace

FlushFigures flush_figures(const writeback::FlushProgress& p) {
  return {p.files_left.load(std::memory_order_relaxed), p.bytes_left.load(std::memory_order_relaxed),
          p.bytes_flushed.load(std::memory_order_relaxed)};
}

std::string format_flush_progress(const FlushFigures& f) { return std::string(kProgress) + " " + fields(f) + "\n"; }

std::string format_flush_summary(const FlushSummary& s) {
  return std::string(kSummary) + " " + fields(s.figures) + " ms=" + std::to_string(s.ms) + "\n";
}

std::string format_flush_message(std::string_view message) {
  return std::string(kFlushed) + escape_line(message.empty() ? std::string_view("done") : message) + "\n";
}

std::optional<FlushFigures> parse_flush_progress(std::string_view line) {
  const auto m = parse_wire_fields(line, kProgress);
  if (!m) return std::nullopt;
  return figures_from(*m);
}

std::optional<FlushSummary> parse_flush_summary(std::string_view line) {
  const auto m = parse_wire_fields(line, kSummary);
  if (!m) return std::nullopt;
  return FlushSummary{figures_from(*m), wire_field(*m, "ms")};
}

std::optional<std::string> parse_flush_message(std::string_view line) {
  if (line.substr(0, kFlushed.size()) != kFlushed) return std::nullopt;
  return std::string(line.substr(kFlushed.size()));
}

}  // namespace nfsgw::admin
