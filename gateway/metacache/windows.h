// An export's coherency promise turned into expiry times (cache/coherency.h).
#pragma once

#include "cache/clock.h"
#include "cache/coherency.h"
#include "cache/metadata_records.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::metacache {

class Windows {
 public:
  Windows(const cache::CoherencySettings& settings, const cache::Clock& clock)
      : s_(settings), clock_(clock) {}

  cache::Millis now() const { return clock_.now_ms(); }
  bool immutable() const { return s_.consistency == cache::Consistency::Immutable; }
  bool strict() const { return s_.consistency == cache::Consistency::Strict; }
  bool local_access_check() const { return s_.access_check == cache::AccessCheck::Local; }

  /// Still inside its window?
  bool fresh(cache::Millis expires) const { return now() < expires; }

  cache::Millis attr_expiry(const nfs3::Fattr& a) const {
    return until(a.type == nfs3::FileType::Dir ? s_.dir_ttl : s_.attr_ttl);
  }
  cache::Millis negative_expiry() const { return until(s_.negative_ttl); }
  cache::Millis access_expiry() const { return until(s_.access_ttl); }
  cache::Millis fs_expiry(cache::FsKind k) const {
    return until(k == cache::FsKind::Fsstat ? s_.fsstat_ttl : s_.fsinfo_ttl);
  }

 private:
  cache::Millis until(cache::Duration d) const {
    if (immutable()) return cache::kNever;
    return now() + d.count();
  }

  cache::CoherencySettings s_;
  const cache::Clock& clock_;
};

}  // namespace nfsgw::metacache
