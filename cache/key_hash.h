// The hash of the metadata store's record keys and of origin handles in the
// handle memo: short byte strings (about 10 to 80 bytes) hashed several times per
// call (a cached LOOKUP hashes four keys). std::hash (MurmurHash2 in libstdc++)
// cost about 125 instructions a key there; this one reads eight bytes a step with
// one multiply and finishes with the splitmix64 finalizer, about half of that.
// In memory only (shard choice, memo sets, the memory layer's and the overlay's
// buckets): never stored, so it may change between versions. Seeded per process,
// so that names chosen by a client to collide here do not collide in another
// nfsgw (or after a restart).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string_view>

namespace nfsgw::cache {

inline const std::uint64_t kKeyHashSeed = [] {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}();

/// `seed` is the process's own but in tests, which pass a fixed one.
inline std::size_t key_hash(std::string_view s, std::uint64_t seed = kKeyHashSeed) noexcept {
  constexpr std::uint64_t kMul = 0xbf58476d1ce4e5b9ull;
  const char* p = s.data();
  std::size_t n = s.size();
  std::uint64_t h = seed ^ (n * kMul);
  auto step = [&](std::uint64_t w) {
    h = (h ^ w) * kMul;
    h ^= h >> 31;
  };
  std::uint64_t w = 0;
  for (; n >= 8; n -= 8, p += 8) {
    std::memcpy(&w, p, 8);
    step(w);
  }
  if (n > 0) {
    if (s.size() >= 8) {
      // The last eight bytes, overlapping what was read: no byte loop.
      std::memcpy(&w, s.data() + s.size() - 8, 8);
    } else {
      w = 0;
      for (std::size_t i = 0; i < n; ++i) w |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
    }
    step(w);
  }
  h ^= h >> 30;
  h *= kMul;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<std::size_t>(h);
}

/// key_hash as the hash of unordered containers keyed by std::string or
/// std::string_view (transparent: a string_view finds a std::string key).
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return key_hash(s); }
};

}  // namespace nfsgw::cache
