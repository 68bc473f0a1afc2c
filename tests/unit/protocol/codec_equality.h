// Field-by-field equality for the codec types that do not declare operator==
// (argument and result structs), used only by the tests.
#pragma once

#include "protocol/mount3_types.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::test {

using namespace nfsgw::nfs3;

inline bool same(const FileHandle& a, const FileHandle& b) { return a == b; }
inline bool same(const Fattr& a, const Fattr& b) { return a == b; }
inline bool same(const Sattr& a, const Sattr& b) { return a == b; }
inline bool same(const WccData& a, const WccData& b) { return a == b; }
inline bool same(const DirOpArgs& a, const DirOpArgs& b) { return a.dir == b.dir && a.name == b.name; }

inline bool same(const GetattrArgs& a, const GetattrArgs& b) { return a.object == b.object; }
inline bool same(const SetattrArgs& a, const SetattrArgs& b) {
  return a.object == b.object && a.new_attributes == b.new_attributes && a.guard == b.guard;
}
inline bool same(const LookupArgs& a, const LookupArgs& b) { return same(a.what, b.what); }
inline bool same(const AccessArgs& a, const AccessArgs& b) { return a.object == b.object && a.access == b.access; }
inline bool same(const ReadlinkArgs& a, const ReadlinkArgs& b) { return a.symlink == b.symlink; }
inline bool same(const ReadArgs& a, const ReadArgs& b) {
  return a.file == b.file && a.offset == b.offset && a.count == b.count;
}
inline bool same(const WriteArgs& a, const WriteArgs& b) {
  return a.file == b.file && a.offset == b.offset && a.count == b.count && a.stable == b.stable &&
         a.data == b.data;
}
inline bool same(const CreateArgs& a, const CreateArgs& b) {
  return same(a.where, b.where) && a.mode == b.mode && a.obj_attributes == b.obj_attributes &&
         a.verf == b.verf;
}
inline bool same(const MkdirArgs& a, const MkdirArgs& b) {
  return same(a.where, b.where) && a.attributes == b.attributes;
}
inline bool same(const SymlinkArgs& a, const SymlinkArgs& b) {
  return same(a.where, b.where) && a.symlink_attributes == b.symlink_attributes &&
         a.symlink_data == b.symlink_data;
}
inline bool same(const MknodArgs& a, const MknodArgs& b) {
  return same(a.where, b.where) && a.type == b.type && a.dev_attributes == b.dev_attributes &&
         a.spec == b.spec && a.pipe_attributes == b.pipe_attributes;
}
inline bool same(const RemoveArgs& a, const RemoveArgs& b) { return same(a.object, b.object); }
inline bool same(const RenameArgs& a, const RenameArgs& b) { return same(a.from, b.from) && same(a.to, b.to); }
inline bool same(const LinkArgs& a, const LinkArgs& b) { return a.file == b.file && same(a.link, b.link); }
inline bool same(const ReaddirArgs& a, const ReaddirArgs& b) {
  return a.dir == b.dir && a.cookie == b.cookie && a.cookieverf == b.cookieverf && a.count == b.count;
}
inline bool same(const ReaddirplusArgs& a, const ReaddirplusArgs& b) {
  return a.dir == b.dir && a.cookie == b.cookie && a.cookieverf == b.cookieverf &&
         a.dircount == b.dircount && a.maxcount == b.maxcount;
}
inline bool same(const FsstatArgs& a, const FsstatArgs& b) { return a.fsroot == b.fsroot; }
inline bool same(const FsinfoArgs& a, const FsinfoArgs& b) { return a.fsroot == b.fsroot; }
inline bool same(const PathconfArgs& a, const PathconfArgs& b) { return a.object == b.object; }
inline bool same(const CommitArgs& a, const CommitArgs& b) {
  return a.file == b.file && a.offset == b.offset && a.count == b.count;
}

inline bool same(const GetattrRes& a, const GetattrRes& b) {
  return a.status == b.status && a.attributes == b.attributes;
}
inline bool same(const SetattrRes& a, const SetattrRes& b) {
  return a.status == b.status && a.obj_wcc == b.obj_wcc;
}
inline bool same(const LookupRes& a, const LookupRes& b) {
  return a.status == b.status && a.object == b.object && a.obj_attributes == b.obj_attributes &&
         a.dir_attributes == b.dir_attributes;
}
inline bool same(const AccessRes& a, const AccessRes& b) {
  return a.status == b.status && a.obj_attributes == b.obj_attributes && a.access == b.access;
}
inline bool same(const ReadlinkRes& a, const ReadlinkRes& b) {
  return a.status == b.status && a.symlink_attributes == b.symlink_attributes && a.data == b.data;
}
inline bool same(const ReadRes& a, const ReadRes& b) {
  return a.status == b.status && a.file_attributes == b.file_attributes && a.count == b.count &&
         a.eof == b.eof && a.data == b.data;
}
inline bool same(const WriteRes& a, const WriteRes& b) {
  return a.status == b.status && a.file_wcc == b.file_wcc && a.count == b.count &&
         a.committed == b.committed && a.verf == b.verf;
}
inline bool same(const CreateRes& a, const CreateRes& b) {
  return a.status == b.status && a.obj == b.obj && a.obj_attributes == b.obj_attributes &&
         a.dir_wcc == b.dir_wcc;
}
inline bool same(const RemoveRes& a, const RemoveRes& b) {
  return a.status == b.status && a.dir_wcc == b.dir_wcc;
}
inline bool same(const RenameRes& a, const RenameRes& b) {
  return a.status == b.status && a.fromdir_wcc == b.fromdir_wcc && a.todir_wcc == b.todir_wcc;
}
inline bool same(const LinkRes& a, const LinkRes& b) {
  return a.status == b.status && a.file_attributes == b.file_attributes && a.linkdir_wcc == b.linkdir_wcc;
}
inline bool same(const DirEntry& a, const DirEntry& b) {
  return a.fileid == b.fileid && a.name == b.name && a.cookie == b.cookie;
}
inline bool same(const DirEntryPlus& a, const DirEntryPlus& b) {
  return a.fileid == b.fileid && a.name == b.name && a.cookie == b.cookie &&
         a.name_attributes == b.name_attributes && a.name_handle == b.name_handle;
}
inline bool same(const mount3::MountEntry& a, const mount3::MountEntry& b) {
  return a.hostname == b.hostname && a.directory == b.directory;
}
inline bool same(const mount3::ExportEntry& a, const mount3::ExportEntry& b) {
  return a.dir == b.dir && a.groups == b.groups;
}
template <class E>
bool same_list(const std::vector<E>& a, const std::vector<E>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}
inline bool same(const ReaddirRes& a, const ReaddirRes& b) {
  return a.status == b.status && a.dir_attributes == b.dir_attributes && a.cookieverf == b.cookieverf &&
         same_list(a.entries, b.entries) && a.eof == b.eof;
}
inline bool same(const ReaddirplusRes& a, const ReaddirplusRes& b) {
  return a.status == b.status && a.dir_attributes == b.dir_attributes && a.cookieverf == b.cookieverf &&
         same_list(a.entries, b.entries) && a.eof == b.eof;
}
inline bool same(const FsstatRes& a, const FsstatRes& b) {
  return a.status == b.status && a.obj_attributes == b.obj_attributes && a.tbytes == b.tbytes &&
         a.fbytes == b.fbytes && a.abytes == b.abytes && a.tfiles == b.tfiles && a.ffiles == b.ffiles &&
         a.afiles == b.afiles && a.invarsec == b.invarsec;
}
inline bool same(const FsinfoRes& a, const FsinfoRes& b) {
  return a.status == b.status && a.obj_attributes == b.obj_attributes && a.rtmax == b.rtmax &&
         a.rtpref == b.rtpref && a.rtmult == b.rtmult && a.wtmax == b.wtmax && a.wtpref == b.wtpref &&
         a.wtmult == b.wtmult && a.dtpref == b.dtpref && a.maxfilesize == b.maxfilesize &&
         a.time_delta == b.time_delta && a.properties == b.properties;
}
inline bool same(const PathconfRes& a, const PathconfRes& b) {
  return a.status == b.status && a.obj_attributes == b.obj_attributes && a.linkmax == b.linkmax &&
         a.name_max == b.name_max && a.no_trunc == b.no_trunc && a.chown_restricted == b.chown_restricted &&
         a.case_insensitive == b.case_insensitive && a.case_preserving == b.case_preserving;
}
inline bool same(const CommitRes& a, const CommitRes& b) {
  return a.status == b.status && a.file_wcc == b.file_wcc && a.verf == b.verf;
}

inline bool same(const mount3::MntArgs& a, const mount3::MntArgs& b) { return a.dirpath == b.dirpath; }
inline bool same(const mount3::UmntArgs& a, const mount3::UmntArgs& b) { return a.dirpath == b.dirpath; }
inline bool same(const mount3::MntRes& a, const mount3::MntRes& b) {
  return a.status == b.status && a.fhandle == b.fhandle && a.auth_flavors == b.auth_flavors;
}
inline bool same(const mount3::DumpRes& a, const mount3::DumpRes& b) { return same_list(a, b); }
inline bool same(const mount3::ExportRes& a, const mount3::ExportRes& b) { return same_list(a, b); }

}  // namespace nfsgw::test
