// libnfs-backed reference encoders (see libnfs_reference.h). Converts nfsgw values
// to libnfs's generated C structs and runs the matching zdr_* routine.
#include "tests/unit/protocol/libnfs_reference.h"

#include <nfsc/libnfs-zdr.h>
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <cstring>
#include <deque>
#include <string>

namespace nfsgw::test::libnfs_ref {

namespace {

using namespace nfsgw::nfs3;

constexpr std::uint32_t kBufSize = 64 * 1024;

template <class T>
Bytes run(uint32_t (*fn)(ZDR*, T*), T& value) {
  Bytes buf(kBufSize);
  ZDR z;
  zdrmem_create(&z, reinterpret_cast<caddr_t>(buf.data()), kBufSize, ZDR_ENCODE);
  bool ok = fn(&z, &value) != 0;
  std::uint32_t len = zdr_getpos(&z);
  zdr_destroy(&z);
  if (!ok) return {};
  buf.resize(len);
  return buf;
}

char* mut(const void* p) { return const_cast<char*>(static_cast<const char*>(p)); }

nfs_fh3 to(const FileHandle& h) {
  nfs_fh3 f{};
  f.data.data_len = h.len;
  f.data.data_val = mut(h.bytes.data());
  return f;
}

nfstime3 to(const Time& t) { return {t.seconds, t.nseconds}; }

fattr3 to(const Fattr& a) {
  fattr3 f{};
  f.type = static_cast<ftype3>(a.type);
  f.mode = a.mode;
  f.nlink = a.nlink;
  f.uid = a.uid;
  f.gid = a.gid;
  f.size = a.size;
  f.used = a.used;
  f.rdev = {a.rdev.major, a.rdev.minor};
  f.fsid = a.fsid;
  f.fileid = a.fileid;
  f.atime = to(a.atime);
  f.mtime = to(a.mtime);
  f.ctime = to(a.ctime);
  return f;
}

post_op_attr to(const PostOpAttr& a) {
  post_op_attr p{};
  p.attributes_follow = a.has_value();
  if (a) p.post_op_attr_u.attributes = to(*a);
  return p;
}

post_op_fh3 to(const PostOpFh& h) {
  post_op_fh3 p{};
  p.handle_follows = h.has_value();
  if (h) p.post_op_fh3_u.handle = to(*h);
  return p;
}

wcc_data to(const WccData& w) {
  wcc_data d{};
  d.before.attributes_follow = w.before.has_value();
  if (w.before) {
    d.before.pre_op_attr_u.attributes.size = w.before->size;
    d.before.pre_op_attr_u.attributes.mtime = to(w.before->mtime);
    d.before.pre_op_attr_u.attributes.ctime = to(w.before->ctime);
  }
  d.after = to(w.after);
  return d;
}

sattr3 to(const Sattr& s) {
  sattr3 a{};
  a.mode.set_it = s.mode.has_value();
  if (s.mode) a.mode.set_mode3_u.mode = *s.mode;
  a.uid.set_it = s.uid.has_value();
  if (s.uid) a.uid.set_uid3_u.uid = *s.uid;
  a.gid.set_it = s.gid.has_value();
  if (s.gid) a.gid.set_gid3_u.gid = *s.gid;
  a.size.set_it = s.size.has_value();
  if (s.size) a.size.set_size3_u.size = *s.size;
  a.atime.set_it = static_cast<time_how>(s.atime.how);
  a.atime.set_atime_u.atime = to(s.atime.time);
  a.mtime.set_it = static_cast<time_how>(s.mtime.how);
  a.mtime.set_mtime_u.mtime = to(s.mtime.time);
  return a;
}

diropargs3 to(const DirOpArgs& d) {
  diropargs3 a{};
  a.dir = to(d.dir);
  a.name = mut(d.name.c_str());
  return a;
}

nfsstat3 to(Status s) { return static_cast<nfsstat3>(s); }

}  // namespace

Bytes encode(const GetattrRes& v) {
  GETATTR3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) r.GETATTR3res_u.resok.obj_attributes = to(v.attributes);
  return run(zdr_GETATTR3res, r);
}

Bytes encode(const SetattrArgs& v) {
  SETATTR3args a{};
  a.object = to(v.object);
  a.new_attributes = to(v.new_attributes);
  a.guard.check = v.guard.has_value();
  if (v.guard) a.guard.sattrguard3_u.obj_ctime = to(*v.guard);
  return run(zdr_SETATTR3args, a);
}

Bytes encode(const LookupRes& v) {
  LOOKUP3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) {
    r.LOOKUP3res_u.resok.object = to(v.object);
    r.LOOKUP3res_u.resok.obj_attributes = to(v.obj_attributes);
    r.LOOKUP3res_u.resok.dir_attributes = to(v.dir_attributes);
  } else {
    r.LOOKUP3res_u.resfail.dir_attributes = to(v.dir_attributes);
  }
  return run(zdr_LOOKUP3res, r);
}

Bytes encode(const ReadRes& v) {
  READ3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) {
    r.READ3res_u.resok.file_attributes = to(v.file_attributes);
    r.READ3res_u.resok.count = v.count;
    r.READ3res_u.resok.eof = v.eof;
    r.READ3res_u.resok.data.data_len = static_cast<u_int>(v.data.size());
    r.READ3res_u.resok.data.data_val = mut(v.data.data());
  } else {
    r.READ3res_u.resfail.file_attributes = to(v.file_attributes);
  }
  return run(zdr_READ3res, r);
}

Bytes encode(const WriteArgs& v) {
  WRITE3args a{};
  a.file = to(v.file);
  a.offset = v.offset;
  a.count = v.count;
  a.stable = static_cast<stable_how>(v.stable);
  a.data.data_len = static_cast<u_int>(v.data.size());
  a.data.data_val = mut(v.data.data());
  return run(zdr_WRITE3args, a);
}

Bytes encode(const WriteRes& v) {
  WRITE3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) {
    r.WRITE3res_u.resok.file_wcc = to(v.file_wcc);
    r.WRITE3res_u.resok.count = v.count;
    r.WRITE3res_u.resok.committed = static_cast<stable_how>(v.committed);
    std::memcpy(r.WRITE3res_u.resok.verf, v.verf.data(), v.verf.size());
  } else {
    r.WRITE3res_u.resfail.file_wcc = to(v.file_wcc);
  }
  return run(zdr_WRITE3res, r);
}

Bytes encode(const CreateArgs& v) {
  CREATE3args a{};
  a.where = to(v.where);
  a.how.mode = static_cast<createmode3>(v.mode);
  if (v.mode == CreateMode::Exclusive) {
    std::memcpy(a.how.createhow3_u.verf, v.verf.data(), v.verf.size());
  } else {
    a.how.createhow3_u.obj_attributes = to(v.obj_attributes);
  }
  return run(zdr_CREATE3args, a);
}

Bytes encode(const CreateRes& v) {
  CREATE3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) {
    r.CREATE3res_u.resok.obj = to(v.obj);
    r.CREATE3res_u.resok.obj_attributes = to(v.obj_attributes);
    r.CREATE3res_u.resok.dir_wcc = to(v.dir_wcc);
  } else {
    r.CREATE3res_u.resfail.dir_wcc = to(v.dir_wcc);
  }
  return run(zdr_CREATE3res, r);
}

Bytes encode(const SymlinkArgs& v) {
  SYMLINK3args a{};
  a.where = to(v.where);
  a.symlink.symlink_attributes = to(v.symlink_attributes);
  a.symlink.symlink_data = mut(v.symlink_data.c_str());
  return run(zdr_SYMLINK3args, a);
}

Bytes encode(const MknodArgs& v) {
  MKNOD3args a{};
  a.where = to(v.where);
  a.what.type = static_cast<ftype3>(v.type);
  switch (v.type) {
    case FileType::Chr:
      a.what.mknoddata3_u.chr_device.dev_attributes = to(v.dev_attributes);
      a.what.mknoddata3_u.chr_device.spec = {v.spec.major, v.spec.minor};
      break;
    case FileType::Blk:
      a.what.mknoddata3_u.blk_device.dev_attributes = to(v.dev_attributes);
      a.what.mknoddata3_u.blk_device.spec = {v.spec.major, v.spec.minor};
      break;
    case FileType::Sock:
      a.what.mknoddata3_u.sock_attributes = to(v.pipe_attributes);
      break;
    case FileType::Fifo:
      a.what.mknoddata3_u.pipe_attributes = to(v.pipe_attributes);
      break;
    default:
      break;
  }
  return run(zdr_MKNOD3args, a);
}

Bytes encode(const ReaddirArgs& v) {
  READDIR3args a{};
  a.dir = to(v.dir);
  a.cookie = v.cookie;
  std::memcpy(a.cookieverf, v.cookieverf.data(), v.cookieverf.size());
  a.count = v.count;
  return run(zdr_READDIR3args, a);
}

Bytes encode(const ReaddirplusRes& v) {
  READDIRPLUS3res r{};
  r.status = to(v.status);
  std::deque<entryplus3> nodes;  // stable addresses for the linked list
  if (v.status == Status::Ok) {
    auto& ok = r.READDIRPLUS3res_u.resok;
    ok.dir_attributes = to(v.dir_attributes);
    std::memcpy(ok.cookieverf, v.cookieverf.data(), v.cookieverf.size());
    entryplus3* prev = nullptr;
    for (const DirEntryPlus& e : v.entries) {
      entryplus3& n = nodes.emplace_back();
      n.fileid = e.fileid;
      n.name = mut(e.name.c_str());
      n.cookie = e.cookie;
      n.name_attributes = to(e.name_attributes);
      n.name_handle = to(e.name_handle);
      n.nextentry = nullptr;
      if (prev) prev->nextentry = &n; else ok.reply.entries = &n;
      prev = &n;
    }
    ok.reply.eof = v.eof;
  } else {
    r.READDIRPLUS3res_u.resfail.dir_attributes = to(v.dir_attributes);
  }
  return run(zdr_READDIRPLUS3res, r);
}

Bytes encode(const FsinfoRes& v) {
  FSINFO3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) {
    auto& ok = r.FSINFO3res_u.resok;
    ok.obj_attributes = to(v.obj_attributes);
    ok.rtmax = v.rtmax;
    ok.rtpref = v.rtpref;
    ok.rtmult = v.rtmult;
    ok.wtmax = v.wtmax;
    ok.wtpref = v.wtpref;
    ok.wtmult = v.wtmult;
    ok.dtpref = v.dtpref;
    ok.maxfilesize = v.maxfilesize;
    ok.time_delta = to(v.time_delta);
    ok.properties = v.properties;
  } else {
    r.FSINFO3res_u.resfail.obj_attributes = to(v.obj_attributes);
  }
  return run(zdr_FSINFO3res, r);
}

Bytes encode(const PathconfRes& v) {
  PATHCONF3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) {
    auto& ok = r.PATHCONF3res_u.resok;
    ok.obj_attributes = to(v.obj_attributes);
    ok.linkmax = v.linkmax;
    ok.name_max = v.name_max;
    ok.no_trunc = v.no_trunc;
    ok.chown_restricted = v.chown_restricted;
    ok.case_insensitive = v.case_insensitive;
    ok.case_preserving = v.case_preserving;
  } else {
    r.PATHCONF3res_u.resfail.obj_attributes = to(v.obj_attributes);
  }
  return run(zdr_PATHCONF3res, r);
}

Bytes encode(const CommitRes& v) {
  COMMIT3res r{};
  r.status = to(v.status);
  if (v.status == Status::Ok) {
    r.COMMIT3res_u.resok.file_wcc = to(v.file_wcc);
    std::memcpy(r.COMMIT3res_u.resok.verf, v.verf.data(), v.verf.size());
  } else {
    r.COMMIT3res_u.resfail.file_wcc = to(v.file_wcc);
  }
  return run(zdr_COMMIT3res, r);
}

}  // namespace nfsgw::test::libnfs_ref
