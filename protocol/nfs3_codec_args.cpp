// NFSv3 procedure arguments (RFC 1813 section 3.3), in procedure order.
#include "protocol/nfs3_codec_internal.h"

namespace nfsgw::nfs3 {

using detail::decode_array;

void decode(xdr::Reader& r, GetattrArgs& v) { decode(r, v.object); }
void encode(xdr::Writer& w, const GetattrArgs& v) { encode(w, v.object); }

void decode(xdr::Reader& r, SetattrArgs& v) {
  decode(r, v.object);
  decode(r, v.new_attributes);
  detail::decode_optional(r, v.guard);  // sattrguard3
}

void encode(xdr::Writer& w, const SetattrArgs& v) {
  encode(w, v.object);
  encode(w, v.new_attributes);
  detail::encode_optional(w, v.guard);
}

void decode(xdr::Reader& r, LookupArgs& v) { decode(r, v.what); }
void encode(xdr::Writer& w, const LookupArgs& v) { encode(w, v.what); }

void decode(xdr::Reader& r, AccessArgs& v) {
  decode(r, v.object);
  v.access = r.u32();
}

void encode(xdr::Writer& w, const AccessArgs& v) {
  encode(w, v.object);
  w.u32(v.access);
}

void decode(xdr::Reader& r, ReadlinkArgs& v) { decode(r, v.symlink); }
void encode(xdr::Writer& w, const ReadlinkArgs& v) { encode(w, v.symlink); }

void decode(xdr::Reader& r, ReadArgs& v) {
  decode(r, v.file);
  v.offset = r.u64();
  v.count = r.u32();
}

void encode(xdr::Writer& w, const ReadArgs& v) {
  encode(w, v.file);
  w.u64(v.offset);
  w.u32(v.count);
}

void decode(xdr::Reader& r, WriteArgs& v) {
  decode(r, v.file);
  v.offset = r.u64();
  v.count = r.u32();
  v.stable = detail::decode_stable_how(r);
  // count and the data length may differ on the wire; the server layer decides.
  auto data = r.opaque_var(kMaxData);
  v.data.assign(data.begin(), data.end());
}

void encode(xdr::Writer& w, const WriteArgs& v) {
  detail::reserve_more(w, 4 + kFhSize + 24 + v.data.size() + 3);
  encode(w, v.file);
  w.u64(v.offset);
  w.u32(v.count);
  w.u32(static_cast<std::uint32_t>(v.stable));
  w.opaque_var(v.data);
}

void decode(xdr::Reader& r, CreateArgs& v) {
  decode(r, v.where);
  std::uint32_t mode = r.u32();
  switch (mode) {
    case static_cast<std::uint32_t>(CreateMode::Unchecked):
    case static_cast<std::uint32_t>(CreateMode::Guarded):
      v.mode = static_cast<CreateMode>(mode);
      decode(r, v.obj_attributes);
      v.verf = {};
      break;
    case static_cast<std::uint32_t>(CreateMode::Exclusive):
      v.mode = CreateMode::Exclusive;
      decode_array(r, v.verf);
      v.obj_attributes = {};
      break;
    default:
      throw xdr::DecodeError("nfs3: invalid createmode3");
  }
}

void encode(xdr::Writer& w, const CreateArgs& v) {
  encode(w, v.where);
  w.u32(static_cast<std::uint32_t>(v.mode));
  if (v.mode == CreateMode::Exclusive) {
    w.opaque_fixed(v.verf);
  } else {
    encode(w, v.obj_attributes);
  }
}

void decode(xdr::Reader& r, MkdirArgs& v) {
  decode(r, v.where);
  decode(r, v.attributes);
}

void encode(xdr::Writer& w, const MkdirArgs& v) {
  encode(w, v.where);
  encode(w, v.attributes);
}

void decode(xdr::Reader& r, SymlinkArgs& v) {
  decode(r, v.where);
  decode(r, v.symlink_attributes);
  v.symlink_data = r.string(kMaxPathLen);
}

void encode(xdr::Writer& w, const SymlinkArgs& v) {
  encode(w, v.where);
  encode(w, v.symlink_attributes);
  w.string(v.symlink_data);
}

void decode(xdr::Reader& r, MknodArgs& v) {
  decode(r, v.where);
  v.type = detail::decode_file_type(r);
  v.dev_attributes = {};
  v.spec = {};
  v.pipe_attributes = {};
  switch (v.type) {
    case FileType::Chr:
    case FileType::Blk:
      decode(r, v.dev_attributes);
      decode(r, v.spec);
      break;
    case FileType::Sock:
    case FileType::Fifo:
      decode(r, v.pipe_attributes);
      break;
    default:  // mknoddata3: void for the other types
      break;
  }
}

void encode(xdr::Writer& w, const MknodArgs& v) {
  encode(w, v.where);
  w.u32(static_cast<std::uint32_t>(v.type));
  switch (v.type) {
    case FileType::Chr:
    case FileType::Blk:
      encode(w, v.dev_attributes);
      encode(w, v.spec);
      break;
    case FileType::Sock:
    case FileType::Fifo:
      encode(w, v.pipe_attributes);
      break;
    default:
      break;
  }
}

void decode(xdr::Reader& r, RemoveArgs& v) { decode(r, v.object); }
void encode(xdr::Writer& w, const RemoveArgs& v) { encode(w, v.object); }

void decode(xdr::Reader& r, RenameArgs& v) {
  decode(r, v.from);
  decode(r, v.to);
}

void encode(xdr::Writer& w, const RenameArgs& v) {
  encode(w, v.from);
  encode(w, v.to);
}

void decode(xdr::Reader& r, LinkArgs& v) {
  decode(r, v.file);
  decode(r, v.link);
}

void encode(xdr::Writer& w, const LinkArgs& v) {
  encode(w, v.file);
  encode(w, v.link);
}

void decode(xdr::Reader& r, ReaddirArgs& v) {
  decode(r, v.dir);
  v.cookie = r.u64();
  decode_array(r, v.cookieverf);
  v.count = r.u32();
}

void encode(xdr::Writer& w, const ReaddirArgs& v) {
  encode(w, v.dir);
  w.u64(v.cookie);
  w.opaque_fixed(v.cookieverf);
  w.u32(v.count);
}

void decode(xdr::Reader& r, ReaddirplusArgs& v) {
  decode(r, v.dir);
  v.cookie = r.u64();
  decode_array(r, v.cookieverf);
  v.dircount = r.u32();
  v.maxcount = r.u32();
}

void encode(xdr::Writer& w, const ReaddirplusArgs& v) {
  encode(w, v.dir);
  w.u64(v.cookie);
  w.opaque_fixed(v.cookieverf);
  w.u32(v.dircount);
  w.u32(v.maxcount);
}

void decode(xdr::Reader& r, FsstatArgs& v) { decode(r, v.fsroot); }
void encode(xdr::Writer& w, const FsstatArgs& v) { encode(w, v.fsroot); }
void decode(xdr::Reader& r, FsinfoArgs& v) { decode(r, v.fsroot); }
void encode(xdr::Writer& w, const FsinfoArgs& v) { encode(w, v.fsroot); }
void decode(xdr::Reader& r, PathconfArgs& v) { decode(r, v.object); }
void encode(xdr::Writer& w, const PathconfArgs& v) { encode(w, v.object); }

void decode(xdr::Reader& r, CommitArgs& v) {
  decode(r, v.file);
  v.offset = r.u64();
  v.count = r.u32();
}

void encode(xdr::Writer& w, const CommitArgs& v) {
  encode(w, v.file);
  w.u64(v.offset);
  w.u32(v.count);
}

}  // namespace nfsgw::nfs3
