// Names for NFSv3 procedures and status codes, used in logs and metric labels.
#include "protocol/nfs3_types.h"

namespace nfsgw::nfs3 {

const char* proc_name(std::uint32_t proc) {
  static constexpr const char* kNames[kProcCount] = {
      "NULL",   "GETATTR", "SETATTR", "LOOKUP",  "ACCESS", "READLINK",    "READ",   "WRITE",
      "CREATE", "MKDIR",   "SYMLINK", "MKNOD",   "REMOVE", "RMDIR",       "RENAME", "LINK",
      "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
  };
  return proc < kProcCount ? kNames[proc] : "UNKNOWN";
}

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "NFS3_OK";
    case Status::Perm: return "NFS3ERR_PERM";
    case Status::NoEnt: return "NFS3ERR_NOENT";
    case Status::Io: return "NFS3ERR_IO";
    case Status::NxIo: return "NFS3ERR_NXIO";
    case Status::Acces: return "NFS3ERR_ACCES";
    case Status::Exist: return "NFS3ERR_EXIST";
    case Status::XDev: return "NFS3ERR_XDEV";
    case Status::NoDev: return "NFS3ERR_NODEV";
    case Status::NotDir: return "NFS3ERR_NOTDIR";
    case Status::IsDir: return "NFS3ERR_ISDIR";
    case Status::Inval: return "NFS3ERR_INVAL";
    case Status::FBig: return "NFS3ERR_FBIG";
    case Status::NoSpc: return "NFS3ERR_NOSPC";
    case Status::RoFs: return "NFS3ERR_ROFS";
    case Status::MLink: return "NFS3ERR_MLINK";
    case Status::NameTooLong: return "NFS3ERR_NAMETOOLONG";
    case Status::NotEmpty: return "NFS3ERR_NOTEMPTY";
    case Status::DQuot: return "NFS3ERR_DQUOT";
    case Status::Stale: return "NFS3ERR_STALE";
    case Status::Remote: return "NFS3ERR_REMOTE";
    case Status::BadHandle: return "NFS3ERR_BADHANDLE";
    case Status::NotSync: return "NFS3ERR_NOT_SYNC";
    case Status::BadCookie: return "NFS3ERR_BAD_COOKIE";
    case Status::NotSupp: return "NFS3ERR_NOTSUPP";
    case Status::TooSmall: return "NFS3ERR_TOOSMALL";
    case Status::ServerFault: return "NFS3ERR_SERVERFAULT";
    case Status::BadType: return "NFS3ERR_BADTYPE";
    case Status::Jukebox: return "NFS3ERR_JUKEBOX";
  }
  return "NFS3ERR_UNKNOWN";
}

}  // namespace nfsgw::nfs3
