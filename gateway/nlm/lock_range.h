// A byte range of a lock, as NLM v4 describes it (a 64-bit offset and length,
// length 0 meaning "to the end of the file") turned into inclusive bounds.
//
// A range whose end would pass 2^64 - 1 is clamped to the end of the file, as
// Linux's lockd does with an end it cannot represent: the lock then covers
// everything from its offset on, never less than the client asked for.
#pragma once

#include <cstdint>
#include <limits>

namespace nfsgw::nlm {

inline constexpr std::uint64_t kEndOfFile = std::numeric_limits<std::uint64_t>::max();

struct Range {
  std::uint64_t first = 0;
  std::uint64_t last = kEndOfFile;  // inclusive

  /// From NLM's offset and length (0: to the end).
  static constexpr Range from_nlm(std::uint64_t offset, std::uint64_t length) {
    if (length == 0 || length - 1 > kEndOfFile - offset) return {offset, kEndOfFile};
    return {offset, offset + (length - 1)};
  }
  constexpr std::uint64_t nlm_offset() const { return first; }
  /// 0 when the range runs to the end of the file.
  constexpr std::uint64_t nlm_length() const { return last == kEndOfFile ? 0 : last - first + 1; }

  constexpr bool overlaps(const Range& o) const { return first <= o.last && o.first <= last; }
  constexpr bool contains(const Range& o) const { return first <= o.first && o.last <= last; }
  friend constexpr bool operator==(const Range&, const Range&) = default;
};

}  // namespace nfsgw::nlm
