// File-system information results: FSSTAT, FSINFO, PATHCONF and COMMIT
// (RFC 1813 sections 3.3.18-3.3.21). All carry attributes in both arms.
#include "protocol/nfs3_codec_internal.h"

namespace nfsgw::nfs3 {

using detail::decode_array;
using detail::decode_optional;
using detail::encode_optional;

void decode(xdr::Reader& r, FsstatRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode_optional(r, v.obj_attributes);
  if (!ok) return;
  v.tbytes = r.u64();
  v.fbytes = r.u64();
  v.abytes = r.u64();
  v.tfiles = r.u64();
  v.ffiles = r.u64();
  v.afiles = r.u64();
  v.invarsec = r.u32();
}

void encode(xdr::Writer& w, const FsstatRes& v) {
  w.u32(static_cast<std::uint32_t>(v.status));
  encode_optional(w, v.obj_attributes);
  if (v.status != Status::Ok) return;
  w.u64(v.tbytes);
  w.u64(v.fbytes);
  w.u64(v.abytes);
  w.u64(v.tfiles);
  w.u64(v.ffiles);
  w.u64(v.afiles);
  w.u32(v.invarsec);
}

void decode(xdr::Reader& r, FsinfoRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode_optional(r, v.obj_attributes);
  if (!ok) return;
  v.rtmax = r.u32();
  v.rtpref = r.u32();
  v.rtmult = r.u32();
  v.wtmax = r.u32();
  v.wtpref = r.u32();
  v.wtmult = r.u32();
  v.dtpref = r.u32();
  v.maxfilesize = r.u64();
  decode(r, v.time_delta);
  v.properties = r.u32();
}

void encode(xdr::Writer& w, const FsinfoRes& v) {
  w.u32(static_cast<std::uint32_t>(v.status));
  encode_optional(w, v.obj_attributes);
  if (v.status != Status::Ok) return;
  w.u32(v.rtmax);
  w.u32(v.rtpref);
  w.u32(v.rtmult);
  w.u32(v.wtmax);
  w.u32(v.wtpref);
  w.u32(v.wtmult);
  w.u32(v.dtpref);
  w.u64(v.maxfilesize);
  encode(w, v.time_delta);
  w.u32(v.properties);
}

void decode(xdr::Reader& r, PathconfRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode_optional(r, v.obj_attributes);
  if (!ok) return;
  v.linkmax = r.u32();
  v.name_max = r.u32();
  v.no_trunc = r.boolean();
  v.chown_restricted = r.boolean();
  v.case_insensitive = r.boolean();
  v.case_preserving = r.boolean();
}

void encode(xdr::Writer& w, const PathconfRes& v) {
  w.u32(static_cast<std::uint32_t>(v.status));
  encode_optional(w, v.obj_attributes);
  if (v.status != Status::Ok) return;
  w.u32(v.linkmax);
  w.u32(v.name_max);
  w.boolean(v.no_trunc);
  w.boolean(v.chown_restricted);
  w.boolean(v.case_insensitive);
  w.boolean(v.case_preserving);
}

void decode(xdr::Reader& r, CommitRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode(r, v.file_wcc);
  if (ok) decode_array(r, v.verf);
}

void encode(xdr::Writer& w, const CommitRes& v) {
  w.u32(static_cast<std::uint32_t>(v.status));
  encode(w, v.file_wcc);
  if (v.status == Status::Ok) w.opaque_fixed(v.verf);
}

}  // namespace nfsgw::nfs3
