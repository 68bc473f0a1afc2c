// What `nfsgw warm` shows while it runs and when it ends. Pure functions of the
// figures and the elapsed time, so the tests need no clock and no terminal.
//
// On a terminal: one line redrawn in place, with a bar and a percentage once the
// total is known:
//   [########------------]  41%  2,084 entries  12.0 MiB  1,042 entries/s  6.0 MiB/s  0:02 elapsed  ~0:03 left
// Elsewhere (a log, a pipe): a line every few seconds.
//   warm: 2,084 entries (21 directories), 12.0 MiB, 1,042 entries/s, 6.0 MiB/s, 0:02 elapsed, ~0:03 left, 0 failed
//
// The total is known when the walk has found everything (no step left that can
// find more entries: then with --data the bytes still to read are known), or with
// a manifest of several paths (then paths done of paths given).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gateway/admin/warm_progress.h"

namespace nfsgw::warm {

/// "1,234,567".
std::string format_count(std::uint64_t n);
/// "0:07", "12:34", "1:02:03" (whole seconds).
std::string format_clock(double seconds);

/// The share done, 0..1, when the total is known.
std::optional<double> fraction_done(const WarmFigures& f, bool data);
/// Seconds left, from the rate so far, when the share done is known and above 0.
std::optional<double> remaining_seconds(const WarmFigures& f, bool data, double elapsed_s);

/// The terminal line (no '\r', no '\n'), at most `width` columns when it can.
std::string progress_bar_line(const WarmFigures& f, bool data, double elapsed_s, unsigned width);
/// The log line (no '\n').
std::string progress_log_line(const WarmFigures& f, bool data, double elapsed_s);
/// The end: what was warmed, in how long, the origin traffic. Lines end with '\n'.
std::string summary_text(const std::string& target, const WarmOutcome& o, bool data);

}  // namespace nfsgw::warm
