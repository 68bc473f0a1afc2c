// Conversions between libnfs 4.0's rpcgen structs and nfsgw::nfs3 types.
//
// Internal to this folder. The libnfs structs are only forward-declared here;
// the definitions come from libnfs's headers, included by the .cpp files only.
//
// Arguments (to_libnfs): the libnfs struct points INTO the nfsgw argument (handle
// bytes, names, write data), so the argument must outlive the queueing of the call.
// libnfs copies everything into its send buffer when the call is queued.
//
// Results (from_libnfs): everything is deep-copied, since libnfs frees its result
// right after the callback. They return false when the origin's reply cannot be
// represented (a handle longer than 64 bytes), which the caller answers with
// NFS3ERR_SERVERFAULT.
#pragma once

#include "protocol/nfs3_types.h"

struct nfs_fh3;
struct fattr3;
struct post_op_attr;
struct wcc_data;
struct sattr3;
struct post_op_fh3;
struct GETATTR3args; struct GETATTR3res;
struct SETATTR3args; struct SETATTR3res;
struct LOOKUP3args; struct LOOKUP3res;
struct ACCESS3args; struct ACCESS3res;
struct READLINK3args; struct READLINK3res;
struct READ3args; struct READ3res;
struct WRITE3args; struct WRITE3res;
struct CREATE3args; struct CREATE3res;
struct MKDIR3args; struct MKDIR3res;
struct SYMLINK3args; struct SYMLINK3res;
struct MKNOD3args; struct MKNOD3res;
struct REMOVE3args; struct REMOVE3res;
struct RMDIR3args; struct RMDIR3res;
struct RENAME3args; struct RENAME3res;
struct LINK3args; struct LINK3res;
struct READDIR3args; struct READDIR3res;
struct READDIRPLUS3args; struct READDIRPLUS3res;
struct FSSTAT3args; struct FSSTAT3res;
struct FSINFO3args; struct FSINFO3res;
struct PATHCONF3args; struct PATHCONF3res;
struct COMMIT3args; struct COMMIT3res;

namespace nfsgw::upstream::convert {

// ---- attributes (libnfs_convert_attrs.cpp) ----
void to_libnfs(const nfs3::FileHandle& in, ::nfs_fh3& out);
void to_libnfs(const nfs3::Sattr& in, ::sattr3& out);
[[nodiscard]] bool from_libnfs(const ::nfs_fh3& in, nfs3::FileHandle& out);
nfs3::Fattr from_libnfs(const ::fattr3& in);
nfs3::PostOpAttr from_libnfs(const ::post_op_attr& in);
nfs3::WccData from_libnfs(const ::wcc_data& in);
[[nodiscard]] bool from_libnfs(const ::post_op_fh3& in, nfs3::PostOpFh& out);

// ---- arguments (libnfs_convert_args.cpp) ----
void to_libnfs(const nfs3::GetattrArgs& in, ::GETATTR3args& out);
void to_libnfs(const nfs3::SetattrArgs& in, ::SETATTR3args& out);
void to_libnfs(const nfs3::LookupArgs& in, ::LOOKUP3args& out);
void to_libnfs(const nfs3::AccessArgs& in, ::ACCESS3args& out);
void to_libnfs(const nfs3::ReadlinkArgs& in, ::READLINK3args& out);
void to_libnfs(const nfs3::ReadArgs& in, ::READ3args& out);
void to_libnfs(const nfs3::WriteArgs& in, ::WRITE3args& out);
void to_libnfs(const nfs3::CreateArgs& in, ::CREATE3args& out);
void to_libnfs(const nfs3::MkdirArgs& in, ::MKDIR3args& out);
void to_libnfs(const nfs3::SymlinkArgs& in, ::SYMLINK3args& out);
void to_libnfs(const nfs3::MknodArgs& in, ::MKNOD3args& out);
void to_libnfs(const nfs3::RemoveArgs& in, ::REMOVE3args& out);
void to_libnfs(const nfs3::RmdirArgs& in, ::RMDIR3args& out);
void to_libnfs(const nfs3::RenameArgs& in, ::RENAME3args& out);
void to_libnfs(const nfs3::LinkArgs& in, ::LINK3args& out);
void to_libnfs(const nfs3::ReaddirArgs& in, ::READDIR3args& out);
void to_libnfs(const nfs3::ReaddirplusArgs& in, ::READDIRPLUS3args& out);
void to_libnfs(const nfs3::FsstatArgs& in, ::FSSTAT3args& out);
void to_libnfs(const nfs3::FsinfoArgs& in, ::FSINFO3args& out);
void to_libnfs(const nfs3::PathconfArgs& in, ::PATHCONF3args& out);
void to_libnfs(const nfs3::CommitArgs& in, ::COMMIT3args& out);

// ---- results (libnfs_convert_results.cpp) ----
[[nodiscard]] bool from_libnfs(const ::GETATTR3res& in, nfs3::GetattrRes& out);
[[nodiscard]] bool from_libnfs(const ::SETATTR3res& in, nfs3::SetattrRes& out);
[[nodiscard]] bool from_libnfs(const ::LOOKUP3res& in, nfs3::LookupRes& out);
[[nodiscard]] bool from_libnfs(const ::ACCESS3res& in, nfs3::AccessRes& out);
[[nodiscard]] bool from_libnfs(const ::READLINK3res& in, nfs3::ReadlinkRes& out);
[[nodiscard]] bool from_libnfs(const ::READ3res& in, nfs3::ReadRes& out);
[[nodiscard]] bool from_libnfs(const ::WRITE3res& in, nfs3::WriteRes& out);
[[nodiscard]] bool from_libnfs(const ::CREATE3res& in, nfs3::CreateRes& out);
[[nodiscard]] bool from_libnfs(const ::MKDIR3res& in, nfs3::MkdirRes& out);
[[nodiscard]] bool from_libnfs(const ::SYMLINK3res& in, nfs3::SymlinkRes& out);
[[nodiscard]] bool from_libnfs(const ::MKNOD3res& in, nfs3::MknodRes& out);
[[nodiscard]] bool from_libnfs(const ::REMOVE3res& in, nfs3::RemoveRes& out);
[[nodiscard]] bool from_libnfs(const ::RMDIR3res& in, nfs3::RmdirRes& out);
[[nodiscard]] bool from_libnfs(const ::RENAME3res& in, nfs3::RenameRes& out);
[[nodiscard]] bool from_libnfs(const ::LINK3res& in, nfs3::LinkRes& out);
[[nodiscard]] bool from_libnfs(const ::READDIR3res& in, nfs3::ReaddirRes& out);
[[nodiscard]] bool from_libnfs(const ::READDIRPLUS3res& in, nfs3::ReaddirplusRes& out);
[[nodiscard]] bool from_libnfs(const ::FSSTAT3res& in, nfs3::FsstatRes& out);
[[nodiscard]] bool from_libnfs(const ::FSINFO3res& in, nfs3::FsinfoRes& out);
[[nodiscard]] bool from_libnfs(const ::PATHCONF3res& in, nfs3::PathconfRes& out);
[[nodiscard]] bool from_libnfs(const ::COMMIT3res& in, nfs3::CommitRes& out);

}  // namespace nfsgw::upstream::convert
