// libnfs results -> nfsgw results, deep-copied (libnfs frees its result after the
// callback returns). Fields are filled per RFC 1813: the "resok" arm when the
// status is NFS3_OK, the "resfail" arm otherwise.
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <cstring>

#include "gateway/upstream/libnfs_convert.h"

namespace nfsgw::upstream::convert {

namespace {
nfs3::Status status_of(::nfsstat3 s) { return static_cast<nfs3::Status>(s); }

template <std::size_t N>
void copy_verf(const char (&in)[N], std::array<std::uint8_t, N>& out) {
  std::memcpy(out.data(), in, N);
}

std::string copy_string(const char* s) { return s != nullptr ? std::string(s) : std::string(); }

/// libnfs 4.0 allocates list entries from its decode arena with 4-byte alignment,
/// less than entry3/entryplus3 (which hold uint64_t) require: reading them in place
/// is undefined behaviour. Copy each one into an aligned local first.
template <typename Entry>
Entry load_entry(const Entry* p) {
  Entry e;
  std::memcpy(static_cast<void*>(&e), static_cast<const void*>(p), sizeof e);
  return e;
}

/// CREATE, MKDIR, SYMLINK and MKNOD share one result shape.
template <typename Ok, typename Fail>
bool create_like(::nfsstat3 status, const Ok& ok, const Fail& fail, nfs3::CreateRes& out) {
  out.status = status_of(status);
  if (status == NFS3_OK) {
    if (!from_libnfs(ok.obj, out.obj)) return false;
    out.obj_attributes = from_libnfs(ok.obj_attributes);
    out.dir_wcc = from_libnfs(ok.dir_wcc);
  } else {
    out.dir_wcc = from_libnfs(fail.dir_wcc);
  }
  return true;
}
}  // namespace

bool from_libnfs(const ::GETATTR3res& in, nfs3::GetattrRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) out.attributes = from_libnfs(in.GETATTR3res_u.resok.obj_attributes);
  return true;
}

bool from_libnfs(const ::SETATTR3res& in, nfs3::SetattrRes& out) {
  out.status = status_of(in.status);
  out.obj_wcc = from_libnfs(in.status == NFS3_OK ? in.SETATTR3res_u.resok.obj_wcc
                                                  : in.SETATTR3res_u.resfail.obj_wcc);
  return true;
}

bool from_libnfs(const ::LOOKUP3res& in, nfs3::LookupRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    const auto& ok = in.LOOKUP3res_u.resok;
    if (!from_libnfs(ok.object, out.object)) return false;
    out.obj_attributes = from_libnfs(ok.obj_attributes);
    out.dir_attributes = from_libnfs(ok.dir_attributes);
  } else {
    out.dir_attributes = from_libnfs(in.LOOKUP3res_u.resfail.dir_attributes);
  }
  return true;
}

bool from_libnfs(const ::ACCESS3res& in, nfs3::AccessRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    out.obj_attributes = from_libnfs(in.ACCESS3res_u.resok.obj_attributes);
    out.access = in.ACCESS3res_u.resok.access;
  } else {
    out.obj_attributes = from_libnfs(in.ACCESS3res_u.resfail.obj_attributes);
  }
  return true;
}

bool from_libnfs(const ::READLINK3res& in, nfs3::ReadlinkRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    out.symlink_attributes = from_libnfs(in.READLINK3res_u.resok.symlink_attributes);
    out.data = copy_string(in.READLINK3res_u.resok.data);
  } else {
    out.symlink_attributes = from_libnfs(in.READLINK3res_u.resfail.symlink_attributes);
  }
  return true;
}

bool from_libnfs(const ::READ3res& in, nfs3::ReadRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    const auto& ok = in.READ3res_u.resok;
    if (ok.data.data_len > 0 && ok.data.data_val == nullptr) return false;
    out.file_attributes = from_libnfs(ok.file_attributes);
    out.eof = ok.eof != 0;
    const auto* p = reinterpret_cast<const std::uint8_t*>(ok.data.data_val);
    out.data.assign(p, p + ok.data.data_len);
    // The bytes carried are the truth; a count disagreeing with them would make
    // the gateway's encoder write a self-contradicting reply.
    out.count = ok.data.data_len;
  } else {
    out.file_attributes = from_libnfs(in.READ3res_u.resfail.file_attributes);
  }
  return true;
}

bool from_libnfs(const ::WRITE3res& in, nfs3::WriteRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    const auto& ok = in.WRITE3res_u.resok;
    out.file_wcc = from_libnfs(ok.file_wcc);
    out.count = ok.count;
    out.committed = static_cast<nfs3::StableHow>(ok.committed);
    copy_verf(ok.verf, out.verf);
  } else {
    out.file_wcc = from_libnfs(in.WRITE3res_u.resfail.file_wcc);
  }
  return true;
}

bool from_libnfs(const ::CREATE3res& in, nfs3::CreateRes& out) {
  return create_like(in.status, in.CREATE3res_u.resok, in.CREATE3res_u.resfail, out);
}

bool from_libnfs(const ::MKDIR3res& in, nfs3::MkdirRes& out) {
  return create_like(in.status, in.MKDIR3res_u.resok, in.MKDIR3res_u.resfail, out);
}

bool from_libnfs(const ::SYMLINK3res& in, nfs3::SymlinkRes& out) {
  return create_like(in.status, in.SYMLINK3res_u.resok, in.SYMLINK3res_u.resfail, out);
}

bool from_libnfs(const ::MKNOD3res& in, nfs3::MknodRes& out) {
  return create_like(in.status, in.MKNOD3res_u.resok, in.MKNOD3res_u.resfail, out);
}

bool from_libnfs(const ::REMOVE3res& in, nfs3::RemoveRes& out) {
  out.status = status_of(in.status);
  out.dir_wcc = from_libnfs(in.status == NFS3_OK ? in.REMOVE3res_u.resok.dir_wcc
                                                  : in.REMOVE3res_u.resfail.dir_wcc);
  return true;
}

bool from_libnfs(const ::RMDIR3res& in, nfs3::RmdirRes& out) {
  out.status = status_of(in.status);
  out.dir_wcc = from_libnfs(in.status == NFS3_OK ? in.RMDIR3res_u.resok.dir_wcc
                                                  : in.RMDIR3res_u.resfail.dir_wcc);
  return true;
}

bool from_libnfs(const ::RENAME3res& in, nfs3::RenameRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    out.fromdir_wcc = from_libnfs(in.RENAME3res_u.resok.fromdir_wcc);
    out.todir_wcc = from_libnfs(in.RENAME3res_u.resok.todir_wcc);
  } else {
    out.fromdir_wcc = from_libnfs(in.RENAME3res_u.resfail.fromdir_wcc);
    out.todir_wcc = from_libnfs(in.RENAME3res_u.resfail.todir_wcc);
  }
  return true;
}

bool from_libnfs(const ::LINK3res& in, nfs3::LinkRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    out.file_attributes = from_libnfs(in.LINK3res_u.resok.file_attributes);
    out.linkdir_wcc = from_libnfs(in.LINK3res_u.resok.linkdir_wcc);
  } else {
    out.file_attributes = from_libnfs(in.LINK3res_u.resfail.file_attributes);
    out.linkdir_wcc = from_libnfs(in.LINK3res_u.resfail.linkdir_wcc);
  }
  return true;
}

bool from_libnfs(const ::READDIR3res& in, nfs3::ReaddirRes& out) {
  out.status = status_of(in.status);
  if (in.status != NFS3_OK) {
    out.dir_attributes = from_libnfs(in.READDIR3res_u.resfail.dir_attributes);
    return true;
  }
  const auto& ok = in.READDIR3res_u.resok;
  out.dir_attributes = from_libnfs(ok.dir_attributes);
  copy_verf(ok.cookieverf, out.cookieverf);
  out.entries.clear();
  for (const ::entry3* p = ok.reply.entries; p != nullptr;) {
    const ::entry3 e = load_entry(p);
    out.entries.push_back({e.fileid, copy_string(e.name), e.cookie});
    p = e.nextentry;
  }
  out.eof = ok.reply.eof != 0;
  return true;
}

bool from_libnfs(const ::READDIRPLUS3res& in, nfs3::ReaddirplusRes& out) {
  out.status = status_of(in.status);
  if (in.status != NFS3_OK) {
    out.dir_attributes = from_libnfs(in.READDIRPLUS3res_u.resfail.dir_attributes);
    return true;
  }
  const auto& ok = in.READDIRPLUS3res_u.resok;
  out.dir_attributes = from_libnfs(ok.dir_attributes);
  copy_verf(ok.cookieverf, out.cookieverf);
  out.entries.clear();
  for (const ::entryplus3* p = ok.reply.entries; p != nullptr;) {
    const ::entryplus3 e = load_entry(p);
    nfs3::DirEntryPlus d;
    d.fileid = e.fileid;
    d.name = copy_string(e.name);
    d.cookie = e.cookie;
    d.name_attributes = from_libnfs(e.name_attributes);
    if (!from_libnfs(e.name_handle, d.name_handle)) return false;
    out.entries.push_back(std::move(d));
    p = e.nextentry;
  }
  out.eof = ok.reply.eof != 0;
  return true;
}

bool from_libnfs(const ::FSSTAT3res& in, nfs3::FsstatRes& out) {
  out.status = status_of(in.status);
  if (in.status != NFS3_OK) {
    out.obj_attributes = from_libnfs(in.FSSTAT3res_u.resfail.obj_attributes);
    return true;
  }
  const auto& ok = in.FSSTAT3res_u.resok;
  out.obj_attributes = from_libnfs(ok.obj_attributes);
  out.tbytes = ok.tbytes;
  out.fbytes = ok.fbytes;
  out.abytes = ok.abytes;
  out.tfiles = ok.tfiles;
  out.ffiles = ok.ffiles;
  out.afiles = ok.afiles;
  out.invarsec = ok.invarsec;
  return true;
}

bool from_libnfs(const ::FSINFO3res& in, nfs3::FsinfoRes& out) {
  out.status = status_of(in.status);
  if (in.status != NFS3_OK) {
    out.obj_attributes = from_libnfs(in.FSINFO3res_u.resfail.obj_attributes);
    return true;
  }
  const auto& ok = in.FSINFO3res_u.resok;
  out.obj_attributes = from_libnfs(ok.obj_attributes);
  out.rtmax = ok.rtmax;
  out.rtpref = ok.rtpref;
  out.rtmult = ok.rtmult;
  out.wtmax = ok.wtmax;
  out.wtpref = ok.wtpref;
  out.wtmult = ok.wtmult;
  out.dtpref = ok.dtpref;
  out.maxfilesize = ok.maxfilesize;
  out.time_delta = {ok.time_delta.seconds, ok.time_delta.nseconds};
  out.properties = ok.properties;
  return true;
}

bool from_libnfs(const ::PATHCONF3res& in, nfs3::PathconfRes& out) {
  out.status = status_of(in.status);
  if (in.status != NFS3_OK) {
    out.obj_attributes = from_libnfs(in.PATHCONF3res_u.resfail.obj_attributes);
    return true;
  }
  const auto& ok = in.PATHCONF3res_u.resok;
  out.obj_attributes = from_libnfs(ok.obj_attributes);
  out.linkmax = ok.linkmax;
  out.name_max = ok.name_max;
  out.no_trunc = ok.no_trunc != 0;
  out.chown_restricted = ok.chown_restricted != 0;
  out.case_insensitive = ok.case_insensitive != 0;
  out.case_preserving = ok.case_preserving != 0;
  return true;
}

bool from_libnfs(const ::COMMIT3res& in, nfs3::CommitRes& out) {
  out.status = status_of(in.status);
  if (in.status == NFS3_OK) {
    out.file_wcc = from_libnfs(in.COMMIT3res_u.resok.file_wcc);
    copy_verf(in.COMMIT3res_u.resok.verf, out.verf);
  } else {
    out.file_wcc = from_libnfs(in.COMMIT3res_u.resfail.file_wcc);
  }
  return true;
}

}  // namespace nfsgw::upstream::convert
