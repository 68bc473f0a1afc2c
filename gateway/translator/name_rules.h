// Which names a client may send in a procedure that takes one, checked by nfsgw
// before anything reaches a cache or the origin. Linux knfsd is the reference:
//   - longer than 255 bytes: NFS3ERR_NAMETOOLONG;
//   - a '/' or a NUL inside: NFS3ERR_INVAL (knfsd refuses such a name while
//     decoding the call, with GARBAGE_ARGS; nfsgw answers with the NFSv3 status
//     nearest to it, which clients report as EINVAL instead of an I/O error);
//   - "" (empty): LOOKUP, REMOVE and RMDIR NFS3ERR_ACCES, CREATE, MKDIR, SYMLINK,
//     MKNOD, LINK and RENAME NFS3ERR_PERM (knfsd's nfsd_create/nfsd_link/nfsd_rename);
//   - "." and "..": LOOKUP passes them on; CREATE, MKDIR, SYMLINK, MKNOD and LINK
//     NFS3ERR_EXIST, REMOVE and RMDIR NFS3ERR_ACCES, RENAME (either name)
//     NFS3ERR_PERM, as knfsd's nfsd_create, nfsd_unlink and nfsd_rename answer.
#pragma once

#include <string_view>

#include "protocol/nfs3_types.h"

namespace nfsgw {

/// The longest name nfsgw passes on (NAME_MAX, knfsd's NFS3_MAXNAMLEN).
inline constexpr std::size_t kMaxNameBytes = 255;

enum class NameUse {
  Lookup,  // LOOKUP
  Create,  // CREATE, MKDIR, SYMLINK, MKNOD, LINK (the new name)
  Remove,  // REMOVE, RMDIR
  Rename,  // RENAME, both names
};

/// Ok, or the status that refuses `name` for `use`.
nfs3::Status check_name(NameUse use, std::string_view name);

}  // namespace nfsgw
