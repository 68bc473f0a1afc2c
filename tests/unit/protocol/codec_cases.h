// A catalogue of valid, non-trivial values of every NFSv3 and MOUNT codec type
// (ok and fail variants of every result), each with its encoding and type-erased
// decode/compare hooks, so the round-trip, truncation and mutation tests can loop
// over all types without repeating themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace nfsgw::test {

using Bytes = std::vector<std::uint8_t>;

struct CodecCase {
  std::string name;
  Bytes encoded;
  /// Decodes `in` as this case's type; returns the bytes consumed. Throws
  /// xdr::DecodeError on malformed input.
  std::function<std::size_t(std::span<const std::uint8_t> in)> decode;
  /// Decodes `in` and reports whether the value equals the original field by field.
  std::function<bool(std::span<const std::uint8_t> in)> decodes_to_original;
  /// Decodes `in` and re-encodes the value (used to check decode/encode agree).
  std::function<Bytes(std::span<const std::uint8_t> in)> reencode;
};

/// Every case; names are unique and usable as test parameter names.
const std::vector<CodecCase>& all_codec_cases();

}  // namespace nfsgw::test
