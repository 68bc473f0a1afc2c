// Durations in the configuration file: a whole number and a unit, "500ms", "30s",
// "10m", "2h", "7d", or "0". Used for the export's coherency windows
// (cache/coherency.h); the reader adds the key and the bounds to error messages.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace nfsgw::config {

/// What a duration may look like, for error messages ("...; allowed: <this>").
inline constexpr const char* kDurationForms =
    "a number with a unit ms, s, m, h or d, such as \"30s\" (or \"0\")";

/// Parses `text`: digits followed by exactly one of the units ms, s, m (minutes), h,
/// d, or the bare "0". No sign, fraction, spaces or other units. Returns nullopt
/// when `text` is not such a duration or does not fit in 64-bit milliseconds; then
/// `why` (when given) receives a short reason such as "no unit".
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text,
                                                        std::string* why = nullptr);

/// The shortest exact spelling parse_duration() accepts: "0", "500ms", "90s",
/// "10m", "2h", "30d" (the largest unit that divides `d`). `d` must not be negative.
std::string format_duration(std::chrono::milliseconds d);

}  // namespace nfsgw::config
