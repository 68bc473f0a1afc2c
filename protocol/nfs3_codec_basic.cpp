// Building blocks of the NFSv3 codec (RFC 1813 section 2.5/2.6): handles, times,
// fattr3, wcc data, sattr3 and diropargs3, plus checked decoding of enums.
#include "protocol/nfs3_codec_internal.h"

namespace nfsgw::nfs3 {

namespace detail {

FileType decode_file_type(xdr::Reader& r) {
  std::uint32_t v = r.u32();
  if (v < static_cast<std::uint32_t>(FileType::Reg) || v > static_cast<std::uint32_t>(FileType::Fifo))
    throw xdr::DecodeError("nfs3: invalid ftype3");
  return static_cast<FileType>(v);
}

Status decode_status(xdr::Reader& r) {
  std::uint32_t v = r.u32();
  switch (static_cast<Status>(v)) {
    case Status::Ok: case Status::Perm: case Status::NoEnt: case Status::Io:
    case Status::NxIo: case Status::Acces: case Status::Exist: case Status::XDev:
    case Status::NoDev: case Status::NotDir: case Status::IsDir: case Status::Inval:
    case Status::FBig: case Status::NoSpc: case Status::RoFs: case Status::MLink:
    case Status::NameTooLong: case Status::NotEmpty: case Status::DQuot:
    case Status::Stale: case Status::Remote: case Status::BadHandle:
    case Status::NotSync: case Status::BadCookie: case Status::NotSupp:
    case Status::TooSmall: case Status::ServerFault: case Status::BadType:
    case Status::Jukebox:
      return static_cast<Status>(v);
  }
  throw xdr::DecodeError("nfs3: invalid nfsstat3");
}

StableHow decode_stable_how(xdr::Reader& r) {
  std::uint32_t v = r.u32();
  if (v > static_cast<std::uint32_t>(StableHow::FileSync))
    throw xdr::DecodeError("nfs3: invalid stable_how");
  return static_cast<StableHow>(v);
}

namespace {
TimeHow decode_time_how(xdr::Reader& r) {
  std::uint32_t v = r.u32();
  if (v > static_cast<std::uint32_t>(TimeHow::ClientTime))
    throw xdr::DecodeError("nfs3: invalid time_how");
  return static_cast<TimeHow>(v);
}

void decode_set_time(xdr::Reader& r, SetTime& v) {
  v.how = decode_time_how(r);
  if (v.how == TimeHow::ClientTime) {
    decode(r, v.time);
  } else {
    v.time = Time{};
  }
}

void encode_set_time(xdr::Writer& w, const SetTime& v) {
  w.u32(static_cast<std::uint32_t>(v.how));
  if (v.how == TimeHow::ClientTime) encode(w, v.time);
}

template <class T>
void decode_set(xdr::Reader& r, std::optional<T>& v) {
  if (r.boolean()) {
    if constexpr (sizeof(T) == 8) v = r.u64(); else v = r.u32();
  } else {
    v.reset();
  }
}

template <class T>
void encode_set(xdr::Writer& w, const std::optional<T>& v) {
  w.boolean(v.has_value());
  if (v) {
    if constexpr (sizeof(T) == 8) w.u64(*v); else w.u32(*v);
  }
}
}  // namespace

}  // namespace detail

void decode(xdr::Reader& r, FileHandle& v) {
  v.assign(r.opaque_var(kFhSize));
}

void encode(xdr::Writer& w, const FileHandle& v) { w.opaque_var(v.view()); }

void decode(xdr::Reader& r, Time& v) {
  v.seconds = r.u32();
  v.nseconds = r.u32();
}

void encode(xdr::Writer& w, const Time& v) {
  w.u32(v.seconds);
  w.u32(v.nseconds);
}

void decode(xdr::Reader& r, SpecData& v) {
  v.major = r.u32();
  v.minor = r.u32();
}

void encode(xdr::Writer& w, const SpecData& v) {
  w.u32(v.major);
  w.u32(v.minor);
}

void decode(xdr::Reader& r, Fattr& v) {
  v.type = detail::decode_file_type(r);
  v.mode = r.u32();
  v.nlink = r.u32();
  v.uid = r.u32();
  v.gid = r.u32();
  v.size = r.u64();
  v.used = r.u64();
  decode(r, v.rdev);
  v.fsid = r.u64();
  v.fileid = r.u64();
  decode(r, v.atime);
  decode(r, v.mtime);
  decode(r, v.ctime);
}

void encode(xdr::Writer& w, const Fattr& v) {
  // 84 bytes, in most replies (often twice): written with one resize.
  auto run = w.fixed<84>();
  run.u32(static_cast<std::uint32_t>(v.type));
  run.u32(v.mode);
  run.u32(v.nlink);
  run.u32(v.uid);
  run.u32(v.gid);
  run.u64(v.size);
  run.u64(v.used);
  run.u32(v.rdev.major);
  run.u32(v.rdev.minor);
  run.u64(v.fsid);
  run.u64(v.fileid);
  for (const Time* t : {&v.atime, &v.mtime, &v.ctime}) {
    run.u32(t->seconds);
    run.u32(t->nseconds);
  }
}

void decode(xdr::Reader& r, WccAttr& v) {
  v.size = r.u64();
  decode(r, v.mtime);
  decode(r, v.ctime);
}

void encode(xdr::Writer& w, const WccAttr& v) {
  w.u64(v.size);
  encode(w, v.mtime);
  encode(w, v.ctime);
}

void decode(xdr::Reader& r, WccData& v) {
  detail::decode_optional(r, v.before);
  detail::decode_optional(r, v.after);
}

void encode(xdr::Writer& w, const WccData& v) {
  detail::encode_optional(w, v.before);
  detail::encode_optional(w, v.after);
}

void decode(xdr::Reader& r, Sattr& v) {
  detail::decode_set(r, v.mode);
  detail::decode_set(r, v.uid);
  detail::decode_set(r, v.gid);
  detail::decode_set(r, v.size);
  detail::decode_set_time(r, v.atime);
  detail::decode_set_time(r, v.mtime);
}

void encode(xdr::Writer& w, const Sattr& v) {
  detail::encode_set(w, v.mode);
  detail::encode_set(w, v.uid);
  detail::encode_set(w, v.gid);
  detail::encode_set(w, v.size);
  detail::encode_set_time(w, v.atime);
  detail::encode_set_time(w, v.mtime);
}

void decode(xdr::Reader& r, DirOpArgs& v) {
  decode(r, v.dir);
  v.name = r.string(kMaxNameLen);
}

void encode(xdr::Writer& w, const DirOpArgs& v) {
  encode(w, v.dir);
  w.string(v.name);
}

}  // namespace nfsgw::nfs3
