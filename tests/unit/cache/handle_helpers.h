// Shared helpers for HandleCodec tests: fixed secrets and origin handles of a
// chosen size with recognisable contents.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/nfs3_types.h"

namespace nfsgw::cache::testing {

inline std::vector<std::uint8_t> secret(std::uint8_t seed) {
  std::vector<std::uint8_t> s(32);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return s;
}

/// An origin handle of `len` bytes whose contents depend on `tag`.
inline nfs3::FileHandle origin(std::size_t len, std::uint8_t tag = 0) {
  std::vector<std::uint8_t> b(len);
  for (std::size_t i = 0; i < len; ++i) b[i] = static_cast<std::uint8_t>(tag * 7 + i * 13 + 1);
  return nfs3::FileHandle(b);
}

}  // namespace nfsgw::cache::testing
