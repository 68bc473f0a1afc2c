// READDIR and READDIRPLUS results (RFC 1813 sections 3.3.16, 3.3.17). The entry
// list is an XDR optional-data linked list: "value follows" bool before each entry
// and a final FALSE, then eof. The list length is bounded by the input itself:
// every entry consumes at least 24 bytes, so a hostile count cannot explode memory.
#include "protocol/nfs3_codec_internal.h"

namespace nfsgw::nfs3 {

using detail::decode_array;
using detail::decode_optional;
using detail::encode_optional;

namespace {

void decode_entry(xdr::Reader& r, DirEntry& e) {
  e.fileid = r.u64();
  e.name = r.string(kMaxNameLen);
  e.cookie = r.u64();
}

void encode_entry(xdr::Writer& w, const DirEntry& e) {
  w.u64(e.fileid);
  w.string(e.name);
  w.u64(e.cookie);
}

void decode_entry(xdr::Reader& r, DirEntryPlus& e) {
  e.fileid = r.u64();
  e.name = r.string(kMaxNameLen);
  e.cookie = r.u64();
  decode_optional(r, e.name_attributes);
  decode_optional(r, e.name_handle);
}

void encode_entry(xdr::Writer& w, const DirEntryPlus& e) {
  w.u64(e.fileid);
  w.string(e.name);
  w.u64(e.cookie);
  encode_optional(w, e.name_attributes);
  encode_optional(w, e.name_handle);
}

/// dir attributes, then for NFS3_OK: cookieverf, entry list, eof.
template <class Res>
void decode_dir_res(xdr::Reader& r, Res& v) {
  bool ok = detail::decode_result_status(r, v);
  decode_optional(r, v.dir_attributes);
  if (!ok) return;
  decode_array(r, v.cookieverf);
  v.entries.clear();
  while (r.boolean()) decode_entry(r, v.entries.emplace_back());
  v.eof = r.boolean();
}

template <class Res>
void encode_dir_res(xdr::Writer& w, const Res& v) {
  w.u32(static_cast<std::uint32_t>(v.status));
  encode_optional(w, v.dir_attributes);
  if (v.status != Status::Ok) return;
  w.opaque_fixed(v.cookieverf);
  for (const auto& e : v.entries) {
    w.boolean(true);
    encode_entry(w, e);
  }
  w.boolean(false);
  w.boolean(v.eof);
}

}  // namespace

void decode(xdr::Reader& r, ReaddirRes& v) { decode_dir_res(r, v); }
void encode(xdr::Writer& w, const ReaddirRes& v) { encode_dir_res(w, v); }
void decode(xdr::Reader& r, ReaddirplusRes& v) { decode_dir_res(r, v); }
void encode(xdr::Writer& w, const ReaddirplusRes& v) { encode_dir_res(w, v); }

}  // namespace nfsgw::nfs3
