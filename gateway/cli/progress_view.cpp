#include "gateway/cli/progress_view.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gateway/admin/stats_format.h"

namespace nfsgw::warm {

namespace {

std::string per_second(double count, double elapsed_s) {
  if (elapsed_s <= 0.0) return "0";
  return format_count(static_cast<std::uint64_t>(std::llround(count / elapsed_s)));
}

std::string bytes_per_second(std::uint64_t bytes, double elapsed_s) {
  if (elapsed_s <= 0.0) return "0 B/s";
  return admin::format_size(static_cast<std::uint64_t>(static_cast<double>(bytes) / elapsed_s)) + "/s";
}

}  // namespace

std::string format_count(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  const std::size_t lead = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
  out += digits.substr(0, lead);
  for (std::size_t i = lead; i < digits.size(); i += 3) {
    out += ',';
    out += digits.substr(i, 3);
  }
  return out;
}

std::string format_clock(double seconds) {
  if (!(seconds >= 0.0)) seconds = 0.0;  // NaN too
  seconds = std::min(seconds, 100.0 * 3600.0 * 24.0);
  const auto s = static_cast<std::uint64_t>(seconds);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::optional<double> fraction_done(const WarmFigures& f, bool data) {
  if (f.discovering == 0) {
    // Everything has been found: the rest is reading.
    if (data && f.data_total > 0) return std::min(1.0, static_cast<double>(f.bytes) / static_cast<double>(f.data_total));
    if (f.paths_total > 0) return std::min(1.0, static_cast<double>(f.paths_done) / static_cast<double>(f.paths_total));
    return 1.0;
  }
  if (f.paths_total > 1)
    return std::min(1.0, static_cast<double>(f.paths_done) / static_cast<double>(f.paths_total));
  return std::nullopt;
}

std::optional<double> remaining_seconds(const WarmFigures& f, bool data, double elapsed_s) {
  const auto done = fraction_done(f, data);
  if (!done || *done <= 0.0 || elapsed_s <= 0.0) return std::nullopt;
  return elapsed_s * (1.0 - *done) / *done;
}

std::string progress_bar_line(const WarmFigures& f, bool data, double elapsed_s, unsigned width) {
  std::string tail = fmt::format("{} entries", format_count(f.entries));
  if (data) tail += "  " + admin::format_size(f.bytes);
  tail += fmt::format("  {} entries/s", per_second(static_cast<double>(f.entries), elapsed_s));
  if (data) tail += "  " + bytes_per_second(f.bytes, elapsed_s);
  tail += "  " + format_clock(elapsed_s) + " elapsed";
  if (const auto left = remaining_seconds(f, data, elapsed_s)) tail += "  ~" + format_clock(*left) + " left";
  if (f.failed > 0) tail += fmt::format("  {} failed", format_count(f.failed));
  const auto done = fraction_done(f, data);
  if (!done) return tail;
  const int percent = static_cast<int>(std::floor(*done * 100.0));
  // The bar takes what the figures leave of the width, 10..40 columns.
  const std::size_t fixed = tail.size() + 9;  // "[" "] " "100%" "  "
  const std::size_t bar = std::clamp<std::size_t>(width > fixed ? width - fixed : 10, 10, 40);
  const auto filled = static_cast<std::size_t>(std::floor(*done * static_cast<double>(bar)));
  return "[" + std::string(filled, '#') + std::string(bar - filled, '-') + "] " + fmt::format("{:3}%  ", percent) +
         tail;
}

std::string progress_log_line(const WarmFigures& f, bool data, double elapsed_s) {
  std::string line = fmt::format("warm: {} entries ({} directories listed)", format_count(f.entries),
                                 format_count(f.dirs));
  if (data) line += fmt::format(", {} of file data", admin::format_size(f.bytes));
  line += fmt::format(", {} entries/s", per_second(static_cast<double>(f.entries), elapsed_s));
  if (data) line += ", " + bytes_per_second(f.bytes, elapsed_s);
  line += ", " + format_clock(elapsed_s) + " elapsed";
  if (const auto done = fraction_done(f, data)) line += fmt::format(", {}% done", static_cast<int>(*done * 100.0));
  if (const auto left = remaining_seconds(f, data, elapsed_s)) line += ", ~" + format_clock(*left) + " left";
  line += fmt::format(", {} failed", format_count(f.failed));
  return line;
}

std::string summary_text(const std::string& target, const WarmOutcome& o, bool data) {
  const double s = static_cast<double>(o.ms) / 1000.0;
  const auto& f = o.figures;
  std::string out = fmt::format("{} {}: {} entries ({} directories listed)", o.cancelled ? "cancelled warming" : "warmed",
                                target, format_count(f.entries), format_count(f.dirs));
  if (data) out += fmt::format(", {} of file data", admin::format_size(f.bytes));
  out += fmt::format(" in {:.1f} s ({} entries/s", s, per_second(static_cast<double>(f.entries), s));
  if (data) out += ", " + bytes_per_second(f.bytes, s);
  out += ")\n";
  out += fmt::format("origin: {} metadata calls", format_count(o.origin_calls));
  if (data || o.blocks_fetched > 0)
    out += fmt::format(", {} data blocks fetched ({})", format_count(o.blocks_fetched), admin::format_size(o.bytes_fetched));
  out += " (the export's, during the warm)\n";
  if (f.failed > 0) out += fmt::format("{} path{} failed\n", format_count(f.failed), f.failed == 1 ? "" : "s");
  return out;
}

}  // namespace nfsgw::warm
