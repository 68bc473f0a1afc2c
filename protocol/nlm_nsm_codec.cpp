// NSM v1 codecs (XNFS sm_inter), field by field in the protocol's order; names
// are read with their SM_MAXSTRLEN bound, priv as a fixed 16-byte opaque.
#include "protocol/nlm_nsm_types.h"

#include <algorithm>

namespace nfsgw::nsm {

namespace {

void decode_priv(xdr::Reader& r, Priv& p) {
  std::span<const std::uint8_t> b = r.opaque_fixed(kPrivSize);
  std::copy(b.begin(), b.end(), p.begin());
}

}  // namespace

void decode(xdr::Reader& r, SmName& v) { v.mon_name = r.string(kMaxStrLen); }
void encode(xdr::Writer& w, const SmName& v) { w.string(v.mon_name); }

void decode(xdr::Reader& r, MyId& v) {
  v.my_name = r.string(kMaxStrLen);
  v.my_prog = r.i32();
  v.my_vers = r.i32();
  v.my_proc = r.i32();
}

void encode(xdr::Writer& w, const MyId& v) {
  w.string(v.my_name);
  w.i32(v.my_prog);
  w.i32(v.my_vers);
  w.i32(v.my_proc);
}

void decode(xdr::Reader& r, MonId& v) {
  v.mon_name = r.string(kMaxStrLen);
  decode(r, v.my_id);
}

void encode(xdr::Writer& w, const MonId& v) {
  w.string(v.mon_name);
  encode(w, v.my_id);
}

void decode(xdr::Reader& r, Mon& v) {
  decode(r, v.mon_id);
  decode_priv(r, v.priv);
}

void encode(xdr::Writer& w, const Mon& v) {
  encode(w, v.mon_id);
  w.opaque_fixed(v.priv);
}

void decode(xdr::Reader& r, StatRes& v) {
  const std::uint32_t res = r.u32();
  if (res > static_cast<std::uint32_t>(Result::Failure)) throw xdr::DecodeError("nsm: invalid res");
  v.res = static_cast<Result>(res);
  v.state = r.i32();
}

void encode(xdr::Writer& w, const StatRes& v) {
  w.u32(static_cast<std::uint32_t>(v.res));
  w.i32(v.state);
}

void decode(xdr::Reader& r, SmStat& v) { v.state = r.i32(); }
void encode(xdr::Writer& w, const SmStat& v) { w.i32(v.state); }

void decode(xdr::Reader& r, StatChange& v) {
  v.mon_name = r.string(kMaxStrLen);
  v.state = r.i32();
}

void encode(xdr::Writer& w, const StatChange& v) {
  w.string(v.mon_name);
  w.i32(v.state);
}

void decode(xdr::Reader& r, Status& v) {
  v.mon_name = r.string(kMaxStrLen);
  v.state = r.i32();
  decode_priv(r, v.priv);
}

void encode(xdr::Writer& w, const Status& v) {
  w.string(v.mon_name);
  w.i32(v.state);
  w.opaque_fixed(v.priv);
}

}  // namespace nfsgw::nsm
