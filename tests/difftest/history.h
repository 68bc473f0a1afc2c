// The origin's history of one answer (an object's attributes, a name's binding, a
// listing, a file's bytes): every value the origin was seen to hold, with when it
// stopped holding it, and the last change made through nfsgw that touched it. An
// answer of nfsgw is allowed when it equals a version the export's promise still
// allows (docs/difftest.md):
//   strict     the current version only;
//   ttl W      a version that ended after the last change through nfsgw and less
//              than W (plus a slack for clocks and call times) ago;
//   immutable  a version that ended after the last change through nfsgw.
// Ticks order events (a version replaced by a change through nfsgw ends at the tick
// that change's bound gets, so it is never allowed again); times bound windows.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

namespace difftest {

using Clock = std::chrono::steady_clock;
using Tick = std::uint64_t;
constexpr Tick kCurrent = std::numeric_limits<Tick>::max();

/// What an export promises about the age of its answers.
struct Promise {
  enum class Kind { Strict, Ttl, Immutable } kind = Kind::Ttl;
  Clock::duration window{};  // Ttl: the longest window of the export, any key
};

/// Slack added to a ttl window: nfsgw counts a window from its own origin call's
/// answer, on the wall clock; the tester ends a version when it sees the change.
constexpr auto kWindowSlack = std::chrono::milliseconds(500);

/// The last change made through nfsgw that touched a key: when, through which
/// export, and how many restarts of nfsgw had happened then (for reports).
struct Change {
  Tick tick = 0;
  int exp = -1;
  std::uint64_t restarts = 0;
};

template <typename V>
class History {
 public:
  struct Version {
    V value;
    Tick end = kCurrent;
    Clock::time_point end_time{};
  };

  bool known() const { return !versions_.empty(); }
  const V& current() const { return versions_.back().value; }
  const std::vector<Version>& versions() const { return versions_; }
  Tick bound() const { return bound_.tick; }
  const Change& last_change() const { return bound_; }

  /// The origin holds `v` now; true when that is a change (or the first value).
  bool record(const V& v, Tick tick, Clock::time_point now) {
    if (!versions_.empty() && versions_.back().value == v) return false;
    if (!versions_.empty()) {
      versions_.back().end = tick;
      versions_.back().end_time = now;
    }
    versions_.push_back(Version{v, kCurrent, {}});
    if (versions_.size() > kMaxVersions) versions_.erase(versions_.begin());
    return true;
  }

  /// A change through nfsgw touched this key at `tick`: what ended before is
  /// never allowed again (kept a while, so a report can say why an answer is wrong).
  void bound(const Change& c) { bound_ = c; }

  bool allowed(const Version& v, const Promise& p, Clock::time_point now) const {
    if (v.end == kCurrent) return true;
    if (v.end <= bound_.tick) return false;
    switch (p.kind) {
      case Promise::Kind::Strict: return false;
      case Promise::Kind::Immutable: return true;
      case Promise::Kind::Ttl: return v.end_time + p.window + kWindowSlack > now;
    }
    return false;
  }

  /// Whether some version the promise allows satisfies `match`.
  template <typename Match>
  bool any(const Promise& p, Clock::time_point now, Match&& match) const {
    for (const auto& v : versions_)
      if (allowed(v, p, now) && match(v.value)) return true;
    return false;
  }

 private:
  // A key keeps its latest versions only. Versions are dropped oldest first; one
  // that ended after the last change through nfsgw could still be shown by an
  // immutable export: the tester's runs change no key this often between two
  // changes through nfsgw.
  static constexpr std::size_t kMaxVersions = 256;
  std::vector<Version> versions_;
  Change bound_;
};

}  // namespace difftest
