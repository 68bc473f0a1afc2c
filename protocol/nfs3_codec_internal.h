// Helpers shared by the NFSv3 codec files (not part of the public contract):
// checked enum decoding, the small structs that nfs3_codec.h does not expose, and
// the optional<> forms of RFC 1813's discriminated unions.
#pragma once

#include <algorithm>
#include <optional>

#include "protocol/nfs3_codec.h"

namespace nfsgw::nfs3 {

void decode(xdr::Reader& r, Time& v);
void encode(xdr::Writer& w, const Time& v);
void decode(xdr::Reader& r, SpecData& v);
void encode(xdr::Writer& w, const SpecData& v);
void decode(xdr::Reader& r, WccAttr& v);
void encode(xdr::Writer& w, const WccAttr& v);

namespace detail {

FileType decode_file_type(xdr::Reader& r);
Status decode_status(xdr::Reader& r);
StableHow decode_stable_how(xdr::Reader& r);

/// post_op_attr, pre_op_attr, post_op_fh3: a bool, then the value when true.
/// Unqualified calls: argument-dependent lookup finds the nfs3 overloads.
template <class T>
void decode_optional(xdr::Reader& r, std::optional<T>& v) {
  if (r.boolean()) {
    decode(r, v.emplace());
  } else {
    v.reset();
  }
}

template <class T>
void encode_optional(xdr::Writer& w, const std::optional<T>& v) {
  w.boolean(v.has_value());
  if (v) encode(w, *v);
}

/// Makes room for `extra` more bytes before a large append (READ/WRITE payloads)
/// without defeating geometric growth when a caller appends many messages to one
/// buffer: an exact reserve per message would make that quadratic.
inline void reserve_more(xdr::Writer& w, std::size_t extra) {
  std::vector<std::uint8_t>& b = w.buffer();
  if (b.capacity() - b.size() >= extra) return;
  b.reserve(std::max(b.size() + extra, 2 * b.capacity()));
}

/// Reads a result's nfsstat3. On failure it resets `v` (so the resok fields are
/// defaults, never stale) and returns false; the caller then decodes the resfail arm.
template <class Res>
bool decode_result_status(xdr::Reader& r, Res& v) {
  Status st = decode_status(r);
  if (st != Status::Ok) {
    v = Res{};
    v.status = st;
    return false;
  }
  v.status = st;
  return true;
}

template <std::size_t N>
void decode_array(xdr::Reader& r, std::array<std::uint8_t, N>& a) {
  auto s = r.opaque_fixed(N);
  std::copy(s.begin(), s.end(), a.begin());
}

}  // namespace detail
}  // namespace nfsgw::nfs3
