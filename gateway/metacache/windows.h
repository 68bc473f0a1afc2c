// An export's coherency promise turned into expiry times (cache/coherency.h).
//
// The settings can be replaced while calls run (a configuration reload): they are
// read through one atomic pointer (an acquire load, a plain load on x86), and
// whoever calls set() keeps the settings it publishes alive for as long as this
// object lives (nfsgw keeps every configuration generation; reloads are rare).
#pragma once

#include <atomic>

#include "cache/answer_basis.h"
#include "cache/clock.h"
#include "cache/coherency.h"
#include "cache/metadata_records.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::metacache {

/// Said where a window is checked for a decision that no answer given at once
/// rests on (Windows' fresh_* take a basis or this, never nothing).
struct NoBasis {};
inline constexpr NoBasis kNoBasis{};

class Windows {
 public:
  /// Starts with a copy of `settings`.
  Windows(const cache::CoherencySettings& settings, const cache::Clock& clock)
      : initial_(settings), cur_(&initial_), clock_(clock) {}
  Windows(const Windows&) = delete;
  Windows& operator=(const Windows&) = delete;

  /// From now on, `settings` (which must outlive this object). Entries already
  /// cached keep the expiry they were given; new answers get the new windows.
  void set(const cache::CoherencySettings* settings) { cur_.store(settings, std::memory_order_release); }
  const cache::CoherencySettings& settings() const { return s(); }

  cache::Millis now() const { return clock_.now_ms(); }
  bool immutable() const { return s().consistency == cache::Consistency::Immutable; }
  bool strict() const { return s().consistency == cache::Consistency::Strict; }
  bool local_access_check() const { return s().access_check == cache::AccessCheck::Local; }

  /// Still inside its window?
  bool fresh(cache::Millis expires) const { return now() < expires; }
  /// The same for an entry of a kind, also bounded by that kind's window now: an
  /// entry learnt under a longer window (before a reload shortened it, or under
  /// immutable) is revalidated once its remaining time exceeds the window, so a
  /// shorter window applies at once to what is cached. For entries learnt under
  /// the current settings the bound always holds.
  ///
  /// Each takes where the window's end goes, with no default: an answer given at
  /// once passes its basis (the end is then part of what it rests on); a decision
  /// no kept answer rests on (a coroutine's, a change's) says kNoBasis. So an
  /// answer step cannot forget to name a window it relied on.
  template <typename B>
  bool fresh_attr(const cache::AttrRecord& r, B&& basis) const {
    const auto& set = s();
    return within(r.expires, r.attr.type == nfs3::FileType::Dir ? set.dir_ttl : set.attr_ttl, set, ptr(basis));
  }
  template <typename B>
  bool fresh_negative(cache::Millis expires, B&& basis) const {
    return within(expires, s().negative_ttl, s(), ptr(basis));
  }
  template <typename B>
  bool fresh_access(cache::Millis expires, B&& basis) const {
    return within(expires, s().access_ttl, s(), ptr(basis));
  }
  bool fresh_fs(cache::Millis expires, cache::FsKind k) const {
    const auto& set = s();
    return within(expires, k == cache::FsKind::Fsstat ? set.fsstat_ttl : set.fsinfo_ttl, set, nullptr);  // never answered at once
  }

  cache::Millis attr_expiry(const nfs3::Fattr& a) const {
    return until(a.type == nfs3::FileType::Dir ? s().dir_ttl : s().attr_ttl);
  }
  cache::Millis negative_expiry() const { return until(s().negative_ttl); }
  cache::Millis access_expiry() const { return until(s().access_ttl); }
  cache::Millis fs_expiry(cache::FsKind k) const {
    return until(k == cache::FsKind::Fsstat ? s().fsstat_ttl : s().fsinfo_ttl);
  }

 private:
  static cache::AnswerBasis* ptr(cache::AnswerBasis& b) { return &b; }
  static cache::AnswerBasis* ptr(NoBasis) { return nullptr; }
  bool within(cache::Millis expires, cache::Duration window, const cache::CoherencySettings& set,
              cache::AnswerBasis* basis) const {
    // The bound by `window` below changes only with the settings, on a reload,
    // which voids every kept answer; the end of the window itself is the basis's.
    if (basis != nullptr) basis->until(clock_, expires);
    const cache::Millis t = now();
    if (t >= expires) return false;
    return set.consistency == cache::Consistency::Immutable || expires - t <= window.count();
  }
  cache::Millis until(cache::Duration d) const {
    if (immutable()) return cache::kNever;
    return now() + d.count();
  }

  const cache::CoherencySettings& s() const { return *cur_.load(std::memory_order_acquire); }

  const cache::CoherencySettings initial_;
  std::atomic<const cache::CoherencySettings*> cur_;
  const cache::Clock& clock_;
};

}  // namespace nfsgw::metacache
