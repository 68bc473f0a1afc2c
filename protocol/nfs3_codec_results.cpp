// NFSv3 procedure results (RFC 1813 section 3.3). Each result is a union on
// nfsstat3: the "resok" arm when status is NFS3_OK, the "resfail" arm otherwise.
// On decode, fields of the arm that is absent are reset to their defaults so a
// reused struct never carries stale values.
#include "protocol/nfs3_codec_internal.h"

namespace nfsgw::nfs3 {

using detail::decode_array;
using detail::decode_optional;
using detail::encode_optional;

namespace {

void put_status(xdr::Writer& w, Status s) { w.u32(static_cast<std::uint32_t>(s)); }

}  // namespace

// GETATTR: resok = obj_attributes; resfail = void.
void decode(xdr::Reader& r, GetattrRes& v) {
  if (detail::decode_result_status(r, v)) decode(r, v.attributes);
}

void encode(xdr::Writer& w, const GetattrRes& v) {
  put_status(w, v.status);
  if (v.status == Status::Ok) encode(w, v.attributes);
}

// SETATTR: obj_wcc in both arms.
void decode(xdr::Reader& r, SetattrRes& v) {
  detail::decode_result_status(r, v);
  decode(r, v.obj_wcc);
}

void encode(xdr::Writer& w, const SetattrRes& v) {
  put_status(w, v.status);
  encode(w, v.obj_wcc);
}

// LOOKUP: resok = object, obj_attributes, dir_attributes; resfail = dir_attributes.
void decode(xdr::Reader& r, LookupRes& v) {
  if (detail::decode_result_status(r, v)) {
    decode(r, v.object);
    decode_optional(r, v.obj_attributes);
  }
  decode_optional(r, v.dir_attributes);
}

void encode(xdr::Writer& w, const LookupRes& v) {
  put_status(w, v.status);
  if (v.status == Status::Ok) {
    encode(w, v.object);
    encode_optional(w, v.obj_attributes);
  }
  encode_optional(w, v.dir_attributes);
}

// ACCESS: resok = obj_attributes, access; resfail = obj_attributes.
void decode(xdr::Reader& r, AccessRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode_optional(r, v.obj_attributes);
  if (ok) v.access = r.u32();
}

void encode(xdr::Writer& w, const AccessRes& v) {
  put_status(w, v.status);
  encode_optional(w, v.obj_attributes);
  if (v.status == Status::Ok) w.u32(v.access);
}

// READLINK: resok = symlink_attributes, data; resfail = symlink_attributes.
void decode(xdr::Reader& r, ReadlinkRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode_optional(r, v.symlink_attributes);
  if (ok) v.data = r.string(kMaxPathLen);
}

void encode(xdr::Writer& w, const ReadlinkRes& v) {
  put_status(w, v.status);
  encode_optional(w, v.symlink_attributes);
  if (v.status == Status::Ok) w.string(v.data);
}

// READ: resok = file_attributes, count, eof, data; resfail = file_attributes.
void decode(xdr::Reader& r, ReadRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode_optional(r, v.file_attributes);
  if (ok) {
    v.count = r.u32();
    v.eof = r.boolean();
    auto data = r.opaque_var(kMaxData);
    v.data.assign(data.data(), data.data() + data.size());
  }
}

void encode(xdr::Writer& w, const ReadRes& v) {
  // status + post_op_attr (at most 4 + 88) + count, eof, length + data + padding.
  detail::reserve_more(w, 4 + 88 + 12 + v.data.size() + 3);
  put_status(w, v.status);
  encode_optional(w, v.file_attributes);
  if (v.status == Status::Ok) {
    w.u32(v.count);
    w.boolean(v.eof);
    w.opaque_var(v.data);
  }
}

void encode(xdr::Writer& w, ReadRes&& v) {
  if (!w.can_detach_last_opaque()) {
    encode(w, static_cast<const ReadRes&>(v));
    return;
  }
  detail::reserve_more(w, 4 + 88 + 12);
  put_status(w, v.status);
  encode_optional(w, v.file_attributes);
  if (v.status == Status::Ok) {
    w.u32(v.count);
    w.boolean(v.eof);
    w.opaque_var_last(std::move(v.data));  // the data is the reply's last item
  }
}

// WRITE: resok = file_wcc, count, committed, verf; resfail = file_wcc.
void decode(xdr::Reader& r, WriteRes& v) {
  bool ok = detail::decode_result_status(r, v);
  decode(r, v.file_wcc);
  if (ok) {
    v.count = r.u32();
    v.committed = detail::decode_stable_how(r);
    decode_array(r, v.verf);
  }
}

void encode(xdr::Writer& w, const WriteRes& v) {
  put_status(w, v.status);
  encode(w, v.file_wcc);
  if (v.status == Status::Ok) {
    w.u32(v.count);
    w.u32(static_cast<std::uint32_t>(v.committed));
    w.opaque_fixed(v.verf);
  }
}

// CREATE, MKDIR, SYMLINK, MKNOD: resok = obj, obj_attributes, dir_wcc; resfail = dir_wcc.
void decode(xdr::Reader& r, CreateRes& v) {
  if (detail::decode_result_status(r, v)) {
    decode_optional(r, v.obj);
    decode_optional(r, v.obj_attributes);
  }
  decode(r, v.dir_wcc);
}

void encode(xdr::Writer& w, const CreateRes& v) {
  put_status(w, v.status);
  if (v.status == Status::Ok) {
    encode_optional(w, v.obj);
    encode_optional(w, v.obj_attributes);
  }
  encode(w, v.dir_wcc);
}

// REMOVE, RMDIR: dir_wcc in both arms.
void decode(xdr::Reader& r, RemoveRes& v) {
  detail::decode_result_status(r, v);
  decode(r, v.dir_wcc);
}

void encode(xdr::Writer& w, const RemoveRes& v) {
  put_status(w, v.status);
  encode(w, v.dir_wcc);
}

// RENAME: fromdir_wcc, todir_wcc in both arms.
void decode(xdr::Reader& r, RenameRes& v) {
  detail::decode_result_status(r, v);
  decode(r, v.fromdir_wcc);
  decode(r, v.todir_wcc);
}

void encode(xdr::Writer& w, const RenameRes& v) {
  put_status(w, v.status);
  encode(w, v.fromdir_wcc);
  encode(w, v.todir_wcc);
}

// LINK: file_attributes, linkdir_wcc in both arms.
void decode(xdr::Reader& r, LinkRes& v) {
  detail::decode_result_status(r, v);
  decode_optional(r, v.file_attributes);
  decode(r, v.linkdir_wcc);
}

void encode(xdr::Writer& w, const LinkRes& v) {
  put_status(w, v.status);
  encode_optional(w, v.file_attributes);
  encode(w, v.linkdir_wcc);
}

}  // namespace nfsgw::nfs3
