// An export's coherency promise: how long each kind of metadata may be answered
// without asking the origin. Declared here, beside the cache that keeps the
// windows, with each setting's default and bounds; config/ reads the TOML keys
// from these tables and validates against them, and docs/configuration.md
// explains them.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace nfsgw::cache {

enum class Consistency : std::uint8_t {
  /// Entries are served inside their window, then revalidated with one GETATTR.
  Ttl,
  /// GETATTR always asks the origin, and so does the directory's (or link's)
  /// GETATTR before a cached LOOKUP, listing or link target is used; those are
  /// still reused while the directory's attributes are unchanged.
  Strict,
  /// Never revalidated: changed only by calls through nfsgw and by
  /// `nfsgw invalidate` (versioned software trees, published assets).
  Immutable,
};

/// How a cached LOOKUP, listing or link target learns that the caller may see it.
enum class AccessCheck : std::uint8_t {
  /// Only from an ACCESS answer the origin gave for the same credential.
  Origin,
  /// Also from the cached mode bits, owner and group (POSIX rules), for exports
  /// whose origin checks nothing else (no ACLs).
  Local,
};

using Duration = std::chrono::milliseconds;

struct CoherencySettings {
  bool enabled = true;  // export key metadata_cache
  Consistency consistency = Consistency::Ttl;
  AccessCheck access_check = AccessCheck::Origin;
  Duration attr_ttl{30'000};      // attributes of files, links, devices
  Duration dir_ttl{30'000};       // attributes of directories, hence their listings and lookups
  Duration negative_ttl{10'000};  // "no such name"
  Duration access_ttl{30'000};    // ACCESS answers per credential
  Duration fsstat_ttl{5'000};     // FSSTAT (free space changes all the time)
  /// FSINFO and PATHCONF: properties of the file system, kept long.
  Duration fsinfo_ttl{3'600'000};
};

/// The TOML spelling of a consistency mode ("ttl", "strict", "immutable").
constexpr const char* consistency_name(Consistency c) {
  return c == Consistency::Ttl ? "ttl" : c == Consistency::Strict ? "strict" : "immutable";
}

/// One duration key of an export: its TOML name, field, bounds and meaning.
struct DurationSetting {
  const char* key;
  Duration CoherencySettings::*field;
  Duration min;
  Duration max;
  const char* meaning;
};

/// Every duration key. Bounds: 0 (ask every time) up to 30 days.
inline constexpr Duration kMaxWindow{30LL * 24 * 3600 * 1000};
inline constexpr std::array<DurationSetting, 6> kDurationSettings{{
    {"attr_ttl", &CoherencySettings::attr_ttl, Duration{0}, kMaxWindow,
     "attributes of files, symbolic links and devices"},
    {"dir_ttl", &CoherencySettings::dir_ttl, Duration{0}, kMaxWindow,
     "attributes of directories, and with them their listings and lookups"},
    {"negative_ttl", &CoherencySettings::negative_ttl, Duration{0}, kMaxWindow,
     "answers that a name does not exist"},
    {"access_ttl", &CoherencySettings::access_ttl, Duration{0}, kMaxWindow,
     "ACCESS answers, per credential"},
    {"fsstat_ttl", &CoherencySettings::fsstat_ttl, Duration{0}, kMaxWindow,
     "FSSTAT (free space)"},
    {"fsinfo_ttl", &CoherencySettings::fsinfo_ttl, Duration{0}, kMaxWindow,
     "FSINFO and PATHCONF"},
}};

}  // namespace nfsgw::cache
