// nfsgw arguments -> libnfs arguments. The libnfs structs borrow the nfsgw
// argument's storage (see libnfs_convert.h); nothing here allocates.
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <algorithm>
#include <cstring>

#include "gateway/upstream/libnfs_convert.h"

namespace nfsgw::upstream::convert {

namespace {
char* borrow(const std::string& s) { return const_cast<char*>(s.c_str()); }

void dirop_to_libnfs(const nfs3::DirOpArgs& in, ::diropargs3& out) {
  to_libnfs(in.dir, out.dir);
  out.name = borrow(in.name);
}

template <std::size_t N>
void copy_verf(const std::array<std::uint8_t, N>& in, char (&out)[N]) {
  std::memcpy(out, in.data(), N);
}
}  // namespace

void to_libnfs(const nfs3::GetattrArgs& in, ::GETATTR3args& out) {
  out = {};
  to_libnfs(in.object, out.object);
}

void to_libnfs(const nfs3::SetattrArgs& in, ::SETATTR3args& out) {
  out = {};
  to_libnfs(in.object, out.object);
  to_libnfs(in.new_attributes, out.new_attributes);
  out.guard.check = in.guard.has_value();
  if (in.guard) out.guard.sattrguard3_u.obj_ctime = {in.guard->seconds, in.guard->nseconds};
}

void to_libnfs(const nfs3::LookupArgs& in, ::LOOKUP3args& out) {
  out = {};
  dirop_to_libnfs(in.what, out.what);
}

void to_libnfs(const nfs3::AccessArgs& in, ::ACCESS3args& out) {
  out = {};
  to_libnfs(in.object, out.object);
  out.access = in.access;
}

void to_libnfs(const nfs3::ReadlinkArgs& in, ::READLINK3args& out) {
  out = {};
  to_libnfs(in.symlink, out.symlink);
}

void to_libnfs(const nfs3::ReadArgs& in, ::READ3args& out) {
  out = {};
  to_libnfs(in.file, out.file);
  out.offset = in.offset;
  out.count = in.count;
}

void to_libnfs(const nfs3::WriteArgs& in, ::WRITE3args& out) {
  out = {};
  to_libnfs(in.file, out.file);
  out.offset = in.offset;
  // The payload actually carried is what counts; never claim more than we send.
  const auto n = static_cast<u_int>(std::min<std::size_t>(in.data.size(), in.count));
  out.count = n;
  out.stable = static_cast<::stable_how>(in.stable);
  out.data.data_len = n;
  out.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(in.data.data()));
}

void to_libnfs(const nfs3::CreateArgs& in, ::CREATE3args& out) {
  out = {};
  dirop_to_libnfs(in.where, out.where);
  out.how.mode = static_cast<::createmode3>(in.mode);
  switch (in.mode) {
    case nfs3::CreateMode::Unchecked:
      to_libnfs(in.obj_attributes, out.how.createhow3_u.obj_attributes);
      break;
    case nfs3::CreateMode::Guarded:
      to_libnfs(in.obj_attributes, out.how.createhow3_u.g_obj_attributes);
      break;
    case nfs3::CreateMode::Exclusive:
      copy_verf(in.verf, out.how.createhow3_u.verf);
      break;
  }
}

void to_libnfs(const nfs3::MkdirArgs& in, ::MKDIR3args& out) {
  out = {};
  dirop_to_libnfs(in.where, out.where);
  to_libnfs(in.attributes, out.attributes);
}

void to_libnfs(const nfs3::SymlinkArgs& in, ::SYMLINK3args& out) {
  out = {};
  dirop_to_libnfs(in.where, out.where);
  to_libnfs(in.symlink_attributes, out.symlink.symlink_attributes);
  out.symlink.symlink_data = borrow(in.symlink_data);
}

void to_libnfs(const nfs3::MknodArgs& in, ::MKNOD3args& out) {
  out = {};
  dirop_to_libnfs(in.where, out.where);
  out.what.type = static_cast<::ftype3>(in.type);
  switch (in.type) {
    case nfs3::FileType::Chr:
      to_libnfs(in.dev_attributes, out.what.mknoddata3_u.chr_device.dev_attributes);
      out.what.mknoddata3_u.chr_device.spec = {in.spec.major, in.spec.minor};
      break;
    case nfs3::FileType::Blk:
      to_libnfs(in.dev_attributes, out.what.mknoddata3_u.blk_device.dev_attributes);
      out.what.mknoddata3_u.blk_device.spec = {in.spec.major, in.spec.minor};
      break;
    case nfs3::FileType::Sock:
      to_libnfs(in.pipe_attributes, out.what.mknoddata3_u.sock_attributes);
      break;
    case nfs3::FileType::Fifo:
      to_libnfs(in.pipe_attributes, out.what.mknoddata3_u.pipe_attributes);
      break;
    default:
      break;  // other types carry no data; the origin answers NFS3ERR_BADTYPE
  }
}

void to_libnfs(const nfs3::RemoveArgs& in, ::REMOVE3args& out) {
  out = {};
  dirop_to_libnfs(in.object, out.object);
}

void to_libnfs(const nfs3::RmdirArgs& in, ::RMDIR3args& out) {
  out = {};
  dirop_to_libnfs(in.object, out.object);
}

void to_libnfs(const nfs3::RenameArgs& in, ::RENAME3args& out) {
  out = {};
  dirop_to_libnfs(in.from, out.from);
  dirop_to_libnfs(in.to, out.to);
}

void to_libnfs(const nfs3::LinkArgs& in, ::LINK3args& out) {
  out = {};
  to_libnfs(in.file, out.file);
  dirop_to_libnfs(in.link, out.link);
}

void to_libnfs(const nfs3::ReaddirArgs& in, ::READDIR3args& out) {
  out = {};
  to_libnfs(in.dir, out.dir);
  out.cookie = in.cookie;
  copy_verf(in.cookieverf, out.cookieverf);
  out.count = in.count;
}

void to_libnfs(const nfs3::ReaddirplusArgs& in, ::READDIRPLUS3args& out) {
  out = {};
  to_libnfs(in.dir, out.dir);
  out.cookie = in.cookie;
  copy_verf(in.cookieverf, out.cookieverf);
  out.dircount = in.dircount;
  out.maxcount = in.maxcount;
}

void to_libnfs(const nfs3::FsstatArgs& in, ::FSSTAT3args& out) {
  out = {};
  to_libnfs(in.fsroot, out.fsroot);
}

void to_libnfs(const nfs3::FsinfoArgs& in, ::FSINFO3args& out) {
  out = {};
  to_libnfs(in.fsroot, out.fsroot);
}

void to_libnfs(const nfs3::PathconfArgs& in, ::PATHCONF3args& out) {
  out = {};
  to_libnfs(in.object, out.object);
}

void to_libnfs(const nfs3::CommitArgs& in, ::COMMIT3args& out) {
  out = {};
  to_libnfs(in.file, out.file);
  out.offset = in.offset;
  out.count = in.count;
}

}  // namespace nfsgw::upstream::convert
