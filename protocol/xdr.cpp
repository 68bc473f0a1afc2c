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

void store_be32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
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

// Writer grows the vector with resize() (geometric growth in libstdc++) and stores
// in place, instead of four push_backs per word.

void Writer::opaque_fixed(std::span<const std::uint8_t> data) {
  std::size_t at = out_.size();
  std::size_t pad = padding(data.size());
  out_.resize(at + data.size() + pad);
  if (!data.empty()) std::memcpy(out_.data() + at, data.data(), data.size());
  if (pad) std::memset(out_.data() + at + data.size(), 0, pad);
}

void Writer::opaque_var(std::span<const std::uint8_t> data) {
  std::size_t at = out_.size();
  std::size_t pad = padding(data.size());
  // One resize for length word, body and padding.
  out_.resize(at + 4 + data.size() + pad);
  std::uint8_t* p = out_.data() + at;
  store_be32(p, static_cast<std::uint32_t>(data.size()));
  if (!data.empty()) std::memcpy(p + 4, data.data(), data.size());
  if (pad) std::memset(p + 4 + data.size(), 0, pad);
}

void Writer::string(std::string_view s) {
  opaque_var({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
}

}  // namespace nfsgw::xdr
