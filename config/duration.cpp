#include "config/duration.h"

#include <array>
#include <cstdint>

namespace nfsgw::config {
namespace {

struct Unit {
  std::string_view name;
  std::int64_t ms;
};

// Largest first: format_duration() picks the first unit that divides exactly.
constexpr std::array<Unit, 5> kUnits{{
    {"d", 24LL * 3600 * 1000},
    {"h", 3600LL * 1000},
    {"m", 60LL * 1000},
    {"s", 1000},
    {"ms", 1},
}};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// A unit as the user wrote it, echoed only when it is short and printable.
std::string describe_unit(std::string_view unit) {
  bool printable = unit.size() <= 8;
  for (char c : unit) printable = printable && c > ' ' && c < 0x7f && c != '"' && c != '\\';
  return printable ? "unknown unit \"" + std::string(unit) + "\"" : "unknown unit";
}

std::optional<std::chrono::milliseconds> fail(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text, std::string* why) {
  if (text.empty()) return fail(why, "empty");
  if (text.front() == '-') return fail(why, "negative");
  std::size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits])) ++digits;
  if (digits == 0) return fail(why, "no number before the unit");
  const std::string_view number = text.substr(0, digits);
  const std::string_view unit = text.substr(digits);
  if (!unit.empty() && (unit.front() == '.' || unit.front() == ',')) {
    return fail(why, "not a whole number (write \"90m\", not \"1.5h\")");
  }

  std::int64_t value = 0;
  for (char c : number) {
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, c - '0', &value)) {
      return fail(why, "too large");
    }
  }
  if (unit.empty()) {
    if (value == 0) return std::chrono::milliseconds{0};
    return fail(why, "no unit");
  }
  for (const Unit& u : kUnits) {
    if (unit != u.name) continue;
    std::int64_t ms = 0;
    if (__builtin_mul_overflow(value, u.ms, &ms)) return fail(why, "too large");
    return std::chrono::milliseconds{ms};
  }
  return fail(why, describe_unit(unit));
}

std::string format_duration(std::chrono::milliseconds d) {
  const std::int64_t ms = d.count();
  if (ms == 0) return "0";
  for (const Unit& u : kUnits) {
    if (ms % u.ms == 0) return std::to_string(ms / u.ms) + std::string(u.name);
  }
  return std::to_string(ms) + "ms";  // not reached: every count is a whole number of ms
}

}  // namespace nfsgw::config
