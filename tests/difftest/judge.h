// Whether a part of an nfsgw answer is one the export's promise allows, given the
// origin's histories in the model (history.h says which versions each promise
// allows). A refusal says why, in a few fixed words (so that the shrinker can keep
// a sequence failing for the same reason), and what was seen and what the origin
// held, for the report. Pure: asks nobody.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tests/difftest/model.h"

namespace difftest {

struct Verdict {
  std::string reason;  // empty: allowed; else one of the reasons below
  std::string detail;
  explicit operator bool() const { return !reason.empty(); }
};

// Why an answer is not allowed: it equals a version the origin held, but
constexpr const char* kBeforeChange = "older than a change made through this export";
constexpr const char* kBeforeOtherExport = "older than a change made through another export";
constexpr const char* kBeforeRestart = "older than a change made through this export before a kill -9";
constexpr const char* kPastWindow = "older than the export's window";
constexpr const char* kNotNow = "not what the origin says now (strict)";
constexpr const char* kOutside = "\"..\" at the export root is not the root";
// or no version the origin held.
constexpr const char* kNever = "never what the origin held";
// A file with dirty data in nfsgw (model.h, Dirty): nfsgw's answer must show it.
constexpr const char* kDirtySize = "not the size of nfsgw's dirty data";
constexpr const char* kDirtyTimes = "not the times nfsgw gave its dirty file";
constexpr const char* kDirtyTimesBack = "a dirty file's times went back";
constexpr const char* kDirtyBytes = "not nfsgw's dirty bytes";

class Judge {
 public:
  explicit Judge(const Model& model) : model_(model) {}

  // Set before each step: answers are judged as of `now`; the export that answers
  // and the restarts of nfsgw so far only sort refusals into reasons.
  Clock::time_point now{};
  int exp = -1;
  std::uint64_t restarts = 0;

  Verdict attr(const Promise& p, int id, const AttrValue& seen) const;
  /// `at_root`: `dir` is the export's root, whose ".." is itself.
  Verdict binding(const Promise& p, int dir, const std::string& name, Binding seen, bool at_root) const;
  Verdict listing(const Promise& p, int dir, const Listing& seen, bool at_root) const;
  Verdict bytes(const Promise& p, int id, std::uint64_t offset, const std::string& data, bool eof) const;
  Verdict target(int id, const std::string& seen) const;
  /// Whether some version of `id`'s attributes the promise allows is alive and
  /// satisfies `match` (its attributes and the ACCESS bits `user` gets on it; bits
  /// the origin was never asked about count as matching nothing). `seen` names
  /// the answer in the report.
  Verdict some_version(const Promise& p, int id, int user, const std::string& seen,
                       const std::function<bool(const Attr&, std::uint32_t bits)>& match) const;
  /// Whether some allowed version of `id`'s attributes says it is gone.
  Verdict maybe_gone(const Promise& p, int id) const;
  /// The promise that holds for `id`'s attributes other than its size and times:
  /// for a file with dirty data, any version no older than the last change made
  /// through nfsgw (nfsgw answers from its own snapshot, taken when the file
  /// became dirty, until it is clean: a change made at the origin meanwhile may
  /// stay unseen); else `p`.
  Promise attr_promise(const Promise& p, int id) const;
  /// A dirty file's attributes after a WRITE that nfsgw took into its log at
  /// [offset, offset + count) (`first`: the file was clean before): the size
  /// grown to the write's end, the times later than before, the rest as before.
  Verdict absorbed_write(const Promise& p, int id, std::uint64_t end, const AttrValue& seen) const;
  /// A dirty file's attributes in the reply to a change of its metadata through
  /// nfsgw (SETATTR without a size, LINK): its size kept, times not back, the rest
  /// as the origin has it.
  Verdict dirty_change(int id, const AttrValue& seen) const;

  /// The versions of a history, newest first, for reports.
  std::string attr_versions(int id) const;
  std::string listing_versions(int dir) const;
  std::string binding_versions(int dir, const std::string& name) const;

 private:
  /// Judges attributes answered for a file with dirty data.
  Verdict dirty_attr(int id, const AttrValue& seen) const;

  const Model& model_;
};

/// Whether time (sec, nsec) `a` is before `b`.
bool time_before(std::uint32_t a_sec, std::uint32_t a_nsec, std::uint32_t b_sec, std::uint32_t b_nsec);
/// The attributes but size and times equal (type, mode, nlink, owner, group, fileid).
bool same_but_size_and_times(const Attr& a, const Attr& b);

/// A listing as an export shows it: at the export's root, ".." is the root itself.
Listing as_seen_at_root(Listing l, std::uint64_t root_fileid);

}  // namespace difftest
