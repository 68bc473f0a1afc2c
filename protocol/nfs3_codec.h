// XDR codecs for the NFSv3 types in nfs3_types.h, exactly as RFC 1813 lays them out.
//
// decode() throws xdr::DecodeError on truncated input, an out-of-range enum or a
// length above its bound (kMaxNameLen, kMaxPathLen, kMaxData, kFhSize). Both
// directions exist for every argument and result type: the server decodes
// arguments and encodes results, tests and tools do the reverse.
#pragma once

#include "protocol/nfs3_types.h"
#include "protocol/xdr.h"

namespace nfsgw::nfs3 {

// Building blocks, exposed for tests and for codecs of other programs.
void decode(xdr::Reader& r, FileHandle& v);
void encode(xdr::Writer& w, const FileHandle& v);
void decode(xdr::Reader& r, Fattr& v);
void encode(xdr::Writer& w, const Fattr& v);
void decode(xdr::Reader& r, Sattr& v);
void encode(xdr::Writer& w, const Sattr& v);
void decode(xdr::Reader& r, WccData& v);
void encode(xdr::Writer& w, const WccData& v);
void decode(xdr::Reader& r, DirOpArgs& v);
void encode(xdr::Writer& w, const DirOpArgs& v);

// Procedure arguments.
void decode(xdr::Reader& r, GetattrArgs& v);
void encode(xdr::Writer& w, const GetattrArgs& v);
void decode(xdr::Reader& r, SetattrArgs& v);
void encode(xdr::Writer& w, const SetattrArgs& v);
void decode(xdr::Reader& r, LookupArgs& v);
void encode(xdr::Writer& w, const LookupArgs& v);
void decode(xdr::Reader& r, AccessArgs& v);
void encode(xdr::Writer& w, const AccessArgs& v);
void decode(xdr::Reader& r, ReadlinkArgs& v);
void encode(xdr::Writer& w, const ReadlinkArgs& v);
void decode(xdr::Reader& r, ReadArgs& v);
void encode(xdr::Writer& w, const ReadArgs& v);
void decode(xdr::Reader& r, WriteArgs& v);
void encode(xdr::Writer& w, const WriteArgs& v);
void decode(xdr::Reader& r, CreateArgs& v);
void encode(xdr::Writer& w, const CreateArgs& v);
void decode(xdr::Reader& r, MkdirArgs& v);
void encode(xdr::Writer& w, const MkdirArgs& v);
void decode(xdr::Reader& r, SymlinkArgs& v);
void encode(xdr::Writer& w, const SymlinkArgs& v);
void decode(xdr::Reader& r, MknodArgs& v);
void encode(xdr::Writer& w, const MknodArgs& v);
void decode(xdr::Reader& r, RemoveArgs& v);
void encode(xdr::Writer& w, const RemoveArgs& v);
void decode(xdr::Reader& r, RenameArgs& v);
void encode(xdr::Writer& w, const RenameArgs& v);
void decode(xdr::Reader& r, LinkArgs& v);
void encode(xdr::Writer& w, const LinkArgs& v);
void decode(xdr::Reader& r, ReaddirArgs& v);
void encode(xdr::Writer& w, const ReaddirArgs& v);
void decode(xdr::Reader& r, ReaddirplusArgs& v);
void encode(xdr::Writer& w, const ReaddirplusArgs& v);
void decode(xdr::Reader& r, FsstatArgs& v);
void encode(xdr::Writer& w, const FsstatArgs& v);
void decode(xdr::Reader& r, FsinfoArgs& v);
void encode(xdr::Writer& w, const FsinfoArgs& v);
void decode(xdr::Reader& r, PathconfArgs& v);
void encode(xdr::Writer& w, const PathconfArgs& v);
void decode(xdr::Reader& r, CommitArgs& v);
void encode(xdr::Writer& w, const CommitArgs& v);

// Procedure results (CreateRes serves CREATE, MKDIR, SYMLINK and MKNOD).
void decode(xdr::Reader& r, AccessRes& v);
void encode(xdr::Writer& w, const AccessRes& v);
void decode(xdr::Reader& r, CommitRes& v);
void encode(xdr::Writer& w, const CommitRes& v);
void decode(xdr::Reader& r, CreateRes& v);
void encode(xdr::Writer& w, const CreateRes& v);
void decode(xdr::Reader& r, FsinfoRes& v);
void encode(xdr::Writer& w, const FsinfoRes& v);
void decode(xdr::Reader& r, FsstatRes& v);
void encode(xdr::Writer& w, const FsstatRes& v);
void decode(xdr::Reader& r, GetattrRes& v);
void encode(xdr::Writer& w, const GetattrRes& v);
void decode(xdr::Reader& r, LinkRes& v);
void encode(xdr::Writer& w, const LinkRes& v);
void decode(xdr::Reader& r, LookupRes& v);
void encode(xdr::Writer& w, const LookupRes& v);
void decode(xdr::Reader& r, PathconfRes& v);
void encode(xdr::Writer& w, const PathconfRes& v);
void decode(xdr::Reader& r, ReadRes& v);
void encode(xdr::Writer& w, const ReadRes& v);
/// The same, moving the data to the writer's detached slot when it has one
/// (xdr::Writer::detach_last_opaque_into): a READ reply written without a copy.
void encode(xdr::Writer& w, ReadRes&& v);
void decode(xdr::Reader& r, ReaddirRes& v);
void encode(xdr::Writer& w, const ReaddirRes& v);
void decode(xdr::Reader& r, ReaddirplusRes& v);
void encode(xdr::Writer& w, const ReaddirplusRes& v);
void decode(xdr::Reader& r, ReadlinkRes& v);
void encode(xdr::Writer& w, const ReadlinkRes& v);
void decode(xdr::Reader& r, RemoveRes& v);
void encode(xdr::Writer& w, const RemoveRes& v);
void decode(xdr::Reader& r, RenameRes& v);
void encode(xdr::Writer& w, const RenameRes& v);
void decode(xdr::Reader& r, SetattrRes& v);
void encode(xdr::Writer& w, const SetattrRes& v);
void decode(xdr::Reader& r, WriteRes& v);
void encode(xdr::Writer& w, const WriteRes& v);

}  // namespace nfsgw::nfs3
