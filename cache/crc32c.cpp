// CRC32C: reflected polynomial 0x82F63B78. The tables are built at start-up from
// the polynomial; table k maps a byte to its CRC after k further zero bytes, so
// eight bytes are folded per step. With SSE4.2, long buffers run as three
// interleaved instruction streams (crc_sse42).
#include "cache/crc32c.h"

#include <array>
#include <cstring>

namespace nfsgw::cache {
namespace {

constexpr std::uint32_t kPoly = 0x82F63B78u;

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? kPoly : 0u);
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}

const Tables& tables() {
  static const Tables t = make_tables();
  return t;
}

std::uint32_t crc_tables(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  const Tables& t = tables();
  while (n >= 8) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);  // little-endian hosts only (x86-64, aarch64)
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xFF];
  return crc;
}

// Shifting a CRC register: appending n zero bytes to the data multiplies the
// register by x^(8n) modulo the polynomial. In the reflected form bit 31 is the
// coefficient of x^0 and bit 0 that of x^31, so multiplying by x is a shift right
// that folds the polynomial back in when x^32 appears.
std::uint32_t times_x(std::uint32_t r) { return (r & 1u) ? (r >> 1) ^ kPoly : r >> 1; }

/// a * b modulo the polynomial (both reflected).
std::uint32_t multiply(std::uint32_t a, std::uint32_t b) {
  std::uint32_t product = 0;
  for (int i = 0; i < 32; ++i, b = times_x(b))  // b is b * x^i here
    if (a & (0x80000000u >> i)) product ^= b;
  return product;
}

/// Multiplication by one fixed polynomial, a byte of the register at a time
/// (the map is linear, so the four bytes' products add up).
class Shift {
 public:
  explicit Shift(std::size_t zero_bytes) {
    std::uint32_t k = 0x80000000u;  // x^0
    for (std::size_t i = 0; i < 8 * zero_bytes; ++i) k = times_x(k);
    for (std::uint32_t j = 0; j < 4; ++j)
      for (std::uint32_t b = 0; b < 256; ++b) t_[j][b] = multiply(b << (8 * j), k);
  }
  std::uint32_t operator()(std::uint32_t r) const {
    return t_[0][r & 0xFF] ^ t_[1][(r >> 8) & 0xFF] ^ t_[2][(r >> 16) & 0xFF] ^ t_[3][r >> 24];
  }

 private:
  std::array<std::array<std::uint32_t, 256>, 4> t_{};
};

#if defined(__x86_64__)
// The instruction takes three cycles but can start one per cycle: three
// independent streams over three adjacent stripes keep it busy, and the stripes'
// registers are joined by shifting (register after stripe s then n more bytes =
// register of s shifted by n, plus the register of those n bytes alone).
constexpr std::size_t kStripe = 4096;

__attribute__((target("sse4.2"))) std::uint32_t crc_sse42(std::uint32_t crc, const unsigned char* p,
                                                          std::size_t n) {
  static const Shift by_one(kStripe), by_two(2 * kStripe);
  std::uint64_t c = crc;
  while (n >= 3 * kStripe) {
    std::uint64_t s0 = c, s1 = 0, s2 = 0;
    for (std::size_t i = 0; i < kStripe; i += 8) {
      std::uint64_t v0, v1, v2;
      std::memcpy(&v0, p + i, 8);
      std::memcpy(&v1, p + kStripe + i, 8);
      std::memcpy(&v2, p + 2 * kStripe + i, 8);
      s0 = __builtin_ia32_crc32di(s0, v0);
      s1 = __builtin_ia32_crc32di(s1, v1);
      s2 = __builtin_ia32_crc32di(s2, v2);
    }
    c = by_two(static_cast<std::uint32_t>(s0)) ^ by_one(static_cast<std::uint32_t>(s1)) ^ s2;
    p += 3 * kStripe;
    n -= 3 * kStripe;
  }
  while (n >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
bool have_sse42() {
  static const bool yes = __builtin_cpu_supports("sse4.2");
  return yes;
}
#endif

}  // namespace

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  if (have_sse42()) return ~crc_sse42(crc, p, size);
#endif
  return ~crc_tables(crc, p, size);
}

std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t size) {
  return ~crc_tables(~crc, static_cast<const unsigned char*>(data), size);
}

}  // namespace nfsgw::cache
