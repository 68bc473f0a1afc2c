// The body lines of a `flush` reply on the admin socket (admin_protocol.h),
// written by the gateway while the flush runs and read by `nfsgw flush`:
//
//   progress files_left=N bytes_left=N bytes_flushed=N
//   summary files_left=N bytes_left=N bytes_flushed=N ms=N
//   flushed <the gateway's message, to the end of the line>
//
// progress about once a second, then the summary; `flushed` only when the flush
// succeeded, before `ok` (a failure's message is the `error` status line). Fields
// are `key=decimal` (gateway/admin/wire_fields.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gateway/writeback/write_back_types.h"

namespace nfsgw::admin {

/// A snapshot of a writeback::FlushProgress.
struct FlushFigures {
  std::uint64_t files_left = 0;
  std::uint64_t bytes_left = 0;
  std::uint64_t bytes_flushed = 0;
  friend bool operator==(const FlushFigures&, const FlushFigures&) = default;
};

struct FlushSummary {
  FlushFigures figures;
  std::uint64_t ms = 0;  // wall time of the flush
  friend bool operator==(const FlushSummary&, const FlushSummary&) = default;
};

FlushFigures flush_figures(const writeback::FlushProgress& p);

/// One line each, '\n' included.
std::string format_flush_progress(const FlushFigures& f);
std::string format_flush_summary(const FlushSummary& s);
std::string format_flush_message(std::string_view message);

/// nullopt when `line` (without '\n') is not such a line or a field is malformed.
std::optional<FlushFigures> parse_flush_progress(std::string_view line);
std::optional<FlushSummary> parse_flush_summary(std::string_view line);
std::optional<std::string> parse_flush_message(std::string_view line);

}  // namespace nfsgw::admin
