// A catalogue of valid values of every NLM v4 and NSM v1 codec type (each result
// status that changes the layout included), with their encodings and type-erased
// decode hooks, so the round-trip, truncation and bound tests loop over all of them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "protocol/nlm4_types.h"
#include "protocol/nlm_nsm_types.h"

namespace nfsgw::test::nlm_cases {

using Bytes = std::vector<std::uint8_t>;

struct NlmCase {
  std::string name;
  Bytes encoded;
  /// Decodes `in` as this case's type; returns the bytes consumed (throws
  /// xdr::DecodeError on malformed input).
  std::function<std::size_t(std::span<const std::uint8_t>)> decode;
  /// Decodes `in` and compares with the original value.
  std::function<bool(std::span<const std::uint8_t>)> decodes_to_original;
  /// Decodes `in` and encodes the value again.
  std::function<Bytes(std::span<const std::uint8_t>)> reencode;
};

/// Every case; names are unique and usable as test parameter names.
const std::vector<NlmCase>& all_nlm_cases();

/// Sample values (the cases are built from them), for tests that change a field.
nlm4::Lock sample_lock();
nlm4::LockArgs sample_lock_args();
nlm4::ShareArgs sample_share_args();
nsm::Mon sample_mon();

template <typename T>
Bytes encoded(const T& v) {
  Bytes out;
  xdr::Writer w(out);
  if constexpr (requires { nlm4::encode(w, v); }) {
    nlm4::encode(w, v);
  } else {
    nsm::encode(w, v);
  }
  return out;
}

/// Decodes all of `in` as a T (throws xdr::DecodeError, or std::logic_error when
/// bytes are left over).
template <typename T>
T decoded(std::span<const std::uint8_t> in) {
  T v{};
  xdr::Reader r(in);
  if constexpr (requires { nlm4::decode(r, v); }) {
    nlm4::decode(r, v);
  } else {
    nsm::decode(r, v);
  }
  if (r.remaining() != 0) throw std::logic_error("bytes left over");
  return v;
}

}  // namespace nfsgw::test::nlm_cases
