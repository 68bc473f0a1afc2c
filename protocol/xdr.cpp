// XDR primitives. Every Reader accessor funnels through take(), the single place
// that checks the remaining length, so no decoder built on Reader can overrun.
#include "protocol/xdr.h"

#include <cstring>

namespace nfsgw::xdr {

namespace {

std::uint32_t load_be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
         (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

}  // namespace

const std::uint8_t* Reader::take(std::size_t n) {
  if (n > remaining()) throw DecodeError("xdr: truncated input");
  const std::uint8_t* p = buf_.data() + pos_;
  pos_ += n;
  return p;
}

std::uint32_t Reader::u32() { return load_be32(take(4)); }

std::uint64_t Reader::u64() {
  const std::uint8_t* p = take(8);
  return (std::uint64_t{load_be32(p)} << 32) | load_be32(p + 4);
}

bool Reader::boolean() {
  std::uint32_t v = u32();
  if (v > 1) throw DecodeError("xdr: invalid bool");
  return v == 1;
}

std::span<const std::uint8_t> Reader::opaque_fixed(std::size_t n) {
  // Check before adding the padding so a huge n cannot wrap around.
  if (n > remaining()) throw DecodeError("xdr: truncated opaque");
  const std::uint8_t* p = take(n + padding(n));
  return {p, n};
}

std::span<const std::uint8_t> Reader::opaque_var(std::size_t max) {
  std::uint32_t len = u32();
  if (len > max) throw DecodeError("xdr: opaque longer than its bound");
  return opaque_fixed(len);
}

std::string Reader::string(std::size_t max) {
  std::span<const std::uint8_t> s = opaque_var(max);
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

// Writer grows the vector geometrically (libstdc++) and appends opaque bodies
// with insert(): one memmove, where resize() would first zero-fill them (a READ
// reply's megabyte twice over).

void Writer::opaque_fixed(std::span<const std::uint8_t> data) {
  static constexpr std::uint8_t kZeros[4] = {0, 0, 0, 0};
  out_.insert(out_.end(), data.begin(), data.end());
  out_.insert(out_.end(), kZeros, kZeros + padding(data.size()));
}

void Writer::opaque_var(std::span<const std::uint8_t> data) {
  u32(static_cast<std::uint32_t>(data.size()));
  opaque_fixed(data);
}

void Writer::string(std::string_view s) {
  opaque_var({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

}  // namespace nfsgw::xdr
