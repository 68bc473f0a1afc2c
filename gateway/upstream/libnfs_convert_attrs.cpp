// Handles, attributes, sattr3, wcc data: the pieces every procedure shares.
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <algorithm>

#include "gateway/upstream/libnfs_convert.h"

namespace nfsgw::upstream::convert {

namespace {
nfs3::Time time_from_libnfs(const ::nfstime3& t) { return {t.seconds, t.nseconds}; }
::nfstime3 time_to_libnfs(const nfs3::Time& t) { return {t.seconds, t.nseconds}; }
}  // namespace

void to_libnfs(const nfs3::FileHandle& in, ::nfs_fh3& out) {
  // libnfs only reads argument buffers (it copies them into the send buffer).
  out.data.data_len = in.len;
  out.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(in.bytes.data()));
}

void to_libnfs(const nfs3::Sattr& in, ::sattr3& out) {
  out = {};
  out.mode.set_it = in.mode.has_value();
  if (in.mode) out.mode.set_mode3_u.mode = *in.mode;
  out.uid.set_it = in.uid.has_value();
  if (in.uid) out.uid.set_uid3_u.uid = *in.uid;
  out.gid.set_it = in.gid.has_value();
  if (in.gid) out.gid.set_gid3_u.gid = *in.gid;
  out.size.set_it = in.size.has_value();
  if (in.size) out.size.set_size3_u.size = *in.size;
  out.atime.set_it = static_cast<::time_how>(in.atime.how);
  if (in.atime.how == nfs3::TimeHow::ClientTime) out.atime.set_atime_u.atime = time_to_libnfs(in.atime.time);
  out.mtime.set_it = static_cast<::time_how>(in.mtime.how);
  if (in.mtime.how == nfs3::TimeHow::ClientTime) out.mtime.set_mtime_u.mtime = time_to_libnfs(in.mtime.time);
}

bool from_libnfs(const ::nfs_fh3& in, nfs3::FileHandle& out) {
  if (in.data.data_len > nfs3::kFhSize || (in.data.data_len > 0 && in.data.data_val == nullptr)) {
    return false;
  }
  out.assign({reinterpret_cast<const std::uint8_t*>(in.data.data_val), in.data.data_len});
  return true;
}

nfs3::Fattr from_libnfs(const ::fattr3& in) {
  nfs3::Fattr f;
  f.type = static_cast<nfs3::FileType>(in.type);
  f.mode = in.mode;
  f.nlink = in.nlink;
  f.uid = in.uid;
  f.gid = in.gid;
  f.size = in.size;
  f.used = in.used;
  f.rdev = {in.rdev.specdata1, in.rdev.specdata2};
  f.fsid = in.fsid;
  f.fileid = in.fileid;
  f.atime = time_from_libnfs(in.atime);
  f.mtime = time_from_libnfs(in.mtime);
  f.ctime = time_from_libnfs(in.ctime);
  return f;
}

nfs3::PostOpAttr from_libnfs(const ::post_op_attr& in) {
  if (!in.attributes_follow) return std::nullopt;
  return from_libnfs(in.post_op_attr_u.attributes);
}

nfs3::WccData from_libnfs(const ::wcc_data& in) {
  nfs3::WccData w;
  if (in.before.attributes_follow) {
    const ::wcc_attr& a = in.before.pre_op_attr_u.attributes;
    w.before = nfs3::WccAttr{a.size, time_from_libnfs(a.mtime), time_from_libnfs(a.ctime)};
  }
  w.after = from_libnfs(in.after);
  return w;
}

bool from_libnfs(const ::post_op_fh3& in, nfs3::PostOpFh& out) {
  out.reset();
  if (!in.handle_follows) return true;
  nfs3::FileHandle fh;
  if (!from_libnfs(in.post_op_fh3_u.handle, fh)) return false;
  out = fh;
  return true;
}

}  // namespace nfsgw::upstream::convert
