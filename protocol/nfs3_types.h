// NFS version 3 (RFC 1813) types: arguments and results of all 22 procedures.
//
// Results are flat structs: `status` selects which fields go on the wire (the
// "resok" fields when status == Ok, the "resfail" fields otherwise), so layers can
// fill a result without juggling unions. The codec in nfs3_codec.h follows RFC 1813
// exactly. Optional<> stands for XDR's discriminated "attributes_follow" unions.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/payload.h"

namespace nfsgw::nfs3 {

constexpr std::uint32_t kProgram = 100003;
constexpr std::uint32_t kVersion = 3;
constexpr std::size_t kFhSize = 64;           // NFS3_FHSIZE
constexpr std::size_t kCookieVerfSize = 8;    // NFS3_COOKIEVERFSIZE
constexpr std::size_t kCreateVerfSize = 8;    // NFS3_CREATEVERFSIZE
constexpr std::size_t kWriteVerfSize = 8;     // NFS3_WRITEVERFSIZE
/// Longest filename3 accepted on decode. RFC 1813 bounds names only by the server's
/// PATHCONF name_max, so a longer name is a legal request that the origin answers
/// with NFS3ERR_NAMETOOLONG; this bound only caps memory.
constexpr std::size_t kMaxNameLen = 4096;
constexpr std::size_t kMaxPathLen = 4096;     // longest nfspath3 accepted on decode
constexpr std::size_t kMaxData = 1u << 20;    // longest READ/WRITE payload accepted

enum class Proc : std::uint32_t {
  Null = 0, Getattr = 1, Setattr = 2, Lookup = 3, Access = 4, Readlink = 5,
  Read = 6, Write = 7, Create = 8, Mkdir = 9, Symlink = 10, Mknod = 11,
  Remove = 12, Rmdir = 13, Rename = 14, Link = 15, Readdir = 16,
  Readdirplus = 17, Fsstat = 18, Fsinfo = 19, Pathconf = 20, Commit = 21,
};
constexpr std::uint32_t kProcCount = 22;

enum class Status : std::uint32_t {
  Ok = 0, Perm = 1, NoEnt = 2, Io = 5, NxIo = 6, Acces = 13, Exist = 17,
  XDev = 18, NoDev = 19, NotDir = 20, IsDir = 21, Inval = 22, FBig = 27,
  NoSpc = 28, RoFs = 30, MLink = 31, NameTooLong = 63, NotEmpty = 66,
  DQuot = 69, Stale = 70, Remote = 71, BadHandle = 10001, NotSync = 10002,
  BadCookie = 10003, NotSupp = 10004, TooSmall = 10005, ServerFault = 10006,
  BadType = 10007, Jukebox = 10008,
};

enum class FileType : std::uint32_t {
  Reg = 1, Dir = 2, Blk = 3, Chr = 4, Lnk = 5, Sock = 6, Fifo = 7,
};

/// nfs_fh3: an opaque handle of at most 64 bytes, stored inline (no allocation).
struct FileHandle {
  std::uint8_t len = 0;
  std::array<std::uint8_t, kFhSize> bytes{};

  FileHandle() = default;
  explicit FileHandle(std::span<const std::uint8_t> b) { assign(b); }
  /// Copies at most kFhSize bytes.
  void assign(std::span<const std::uint8_t> b) {
    len = static_cast<std::uint8_t>(std::min(b.size(), kFhSize));
    std::copy_n(b.begin(), len, bytes.begin());
  }
  std::span<const std::uint8_t> view() const { return {bytes.data(), len}; }
  bool empty() const { return len == 0; }
  friend bool operator==(const FileHandle& a, const FileHandle& b) {
    return a.len == b.len && std::equal(a.bytes.begin(), a.bytes.begin() + a.len, b.bytes.begin());
  }
};

struct Time {
  std::uint32_t seconds = 0;
  std::uint32_t nseconds = 0;
  friend bool operator==(const Time&, const Time&) = default;
};

struct SpecData {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  friend bool operator==(const SpecData&, const SpecData&) = default;
};

/// fattr3
struct Fattr {
  FileType type = FileType::Reg;
  std::uint32_t mode = 0;
  std::uint32_t nlink = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t size = 0;
  std::uint64_t used = 0;
  SpecData rdev;
  std::uint64_t fsid = 0;
  std::uint64_t fileid = 0;
  Time atime;
  Time mtime;
  Time ctime;
  friend bool operator==(const Fattr&, const Fattr&) = default;
};

/// wcc_attr
struct WccAttr {
  std::uint64_t size = 0;
  Time mtime;
  Time ctime;
  friend bool operator==(const WccAttr&, const WccAttr&) = default;
};

using PostOpAttr = std::optional<Fattr>;
using PreOpAttr = std::optional<WccAttr>;
using PostOpFh = std::optional<FileHandle>;

struct WccData {
  PreOpAttr before;
  PostOpAttr after;
  friend bool operator==(const WccData&, const WccData&) = default;
};

enum class TimeHow : std::uint32_t { DontChange = 0, ServerTime = 1, ClientTime = 2 };

struct SetTime {
  TimeHow how = TimeHow::DontChange;
  Time time;  // when how == ClientTime
  friend bool operator==(const SetTime&, const SetTime&) = default;
};

/// sattr3
struct Sattr {
  std::optional<std::uint32_t> mode;
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  std::optional<std::uint64_t> size;
  SetTime atime;
  SetTime mtime;
  friend bool operator==(const Sattr&, const Sattr&) = default;
};

/// diropargs3
struct DirOpArgs {
  FileHandle dir;
  std::string name;
};

using CookieVerf = std::array<std::uint8_t, kCookieVerfSize>;
using CreateVerf = std::array<std::uint8_t, kCreateVerfSize>;
using WriteVerf = std::array<std::uint8_t, kWriteVerfSize>;

// ---- procedure arguments and results -------------------------------------------
//
// Statuses nfsgw makes up: every result has `gateway_status`, false when the status
// (and the rest of the result) is what the origin answered. It is set by the layer
// that made the status up instead: JUKEBOX for a call lost with its connection,
// SERVERFAULT for an unusable origin reply, ACCES for an RPC credential the origin
// refused, INVAL for a NUL in a name the upstream client cannot send. It is never
// encoded on the wire (the client sees an ordinary status), and a cache never stores
// such a result: it says nothing about the file system.

// GETATTR (1)
struct GetattrArgs { FileHandle object; };
struct GetattrRes {
  Status status = Status::Ok;
  Fattr attributes;  // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// SETATTR (2)
struct SetattrArgs {
  FileHandle object;
  Sattr new_attributes;
  std::optional<Time> guard;  // sattrguard3: check ctime when present
};
struct SetattrRes {
  Status status = Status::Ok;
  WccData obj_wcc;  // ok and fail
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// LOOKUP (3)
struct LookupArgs { DirOpArgs what; };
struct LookupRes {
  Status status = Status::Ok;
  FileHandle object;          // ok
  PostOpAttr obj_attributes;  // ok
  PostOpAttr dir_attributes;  // ok and fail
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// ACCESS (4)
namespace access {
constexpr std::uint32_t Read = 0x01, Lookup = 0x02, Modify = 0x04, Extend = 0x08,
                        Delete = 0x10, Execute = 0x20;
}
struct AccessArgs {
  FileHandle object;
  std::uint32_t access = 0;
};
struct AccessRes {
  Status status = Status::Ok;
  PostOpAttr obj_attributes;  // ok and fail
  std::uint32_t access = 0;   // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// READLINK (5)
struct ReadlinkArgs { FileHandle symlink; };
struct ReadlinkRes {
  Status status = Status::Ok;
  PostOpAttr symlink_attributes;  // ok and fail
  std::string data;               // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// READ (6)
struct ReadArgs {
  FileHandle file;
  std::uint64_t offset = 0;
  std::uint32_t count = 0;
};
struct ReadRes {
  Status status = Status::Ok;
  PostOpAttr file_attributes;  // ok and fail
  std::uint32_t count = 0;     // ok
  bool eof = false;            // ok
  Payload data;                // ok (not zero-filled when made for a reader: payload.h)
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// WRITE (7)
enum class StableHow : std::uint32_t { Unstable = 0, DataSync = 1, FileSync = 2 };
struct WriteArgs {
  FileHandle file;
  std::uint64_t offset = 0;
  std::uint32_t count = 0;
  StableHow stable = StableHow::Unstable;
  std::vector<std::uint8_t> data;
};
struct WriteRes {
  Status status = Status::Ok;
  WccData file_wcc;            // ok and fail
  std::uint32_t count = 0;     // ok
  StableHow committed = StableHow::Unstable;  // ok
  WriteVerf verf{};            // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// CREATE (8)
enum class CreateMode : std::uint32_t { Unchecked = 0, Guarded = 1, Exclusive = 2 };
struct CreateArgs {
  DirOpArgs where;
  CreateMode mode = CreateMode::Unchecked;
  Sattr obj_attributes;  // Unchecked / Guarded
  CreateVerf verf{};     // Exclusive
};
/// Shared by CREATE, MKDIR, SYMLINK and MKNOD.
struct CreateRes {
  Status status = Status::Ok;
  PostOpFh obj;               // ok
  PostOpAttr obj_attributes;  // ok
  WccData dir_wcc;            // ok and fail
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// MKDIR (9)
struct MkdirArgs {
  DirOpArgs where;
  Sattr attributes;
};
using MkdirRes = CreateRes;

// SYMLINK (10)
struct SymlinkArgs {
  DirOpArgs where;
  Sattr symlink_attributes;
  std::string symlink_data;
};
using SymlinkRes = CreateRes;

// MKNOD (11)
struct MknodArgs {
  DirOpArgs where;
  FileType type = FileType::Reg;
  Sattr dev_attributes;  // Chr / Blk
  SpecData spec;         // Chr / Blk
  Sattr pipe_attributes; // Sock / Fifo
};
using MknodRes = CreateRes;

// REMOVE (12) and RMDIR (13)
struct RemoveArgs { DirOpArgs object; };
struct RemoveRes {
  Status status = Status::Ok;
  WccData dir_wcc;  // ok and fail
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};
using RmdirArgs = RemoveArgs;
using RmdirRes = RemoveRes;

// RENAME (14)
struct RenameArgs {
  DirOpArgs from;
  DirOpArgs to;
};
struct RenameRes {
  Status status = Status::Ok;
  WccData fromdir_wcc;  // ok and fail
  WccData todir_wcc;    // ok and fail
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// LINK (15)
struct LinkArgs {
  FileHandle file;
  DirOpArgs link;
};
struct LinkRes {
  Status status = Status::Ok;
  PostOpAttr file_attributes;  // ok and fail
  WccData linkdir_wcc;         // ok and fail
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// READDIR (16)
struct ReaddirArgs {
  FileHandle dir;
  std::uint64_t cookie = 0;
  CookieVerf cookieverf{};
  std::uint32_t count = 0;
};
struct DirEntry {
  std::uint64_t fileid = 0;
  std::string name;
  std::uint64_t cookie = 0;
};
struct ReaddirRes {
  Status status = Status::Ok;
  PostOpAttr dir_attributes;  // ok and fail
  CookieVerf cookieverf{};    // ok
  std::vector<DirEntry> entries;  // ok
  bool eof = false;               // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// READDIRPLUS (17)
struct ReaddirplusArgs {
  FileHandle dir;
  std::uint64_t cookie = 0;
  CookieVerf cookieverf{};
  std::uint32_t dircount = 0;
  std::uint32_t maxcount = 0;
};
struct DirEntryPlus {
  std::uint64_t fileid = 0;
  std::string name;
  std::uint64_t cookie = 0;
  PostOpAttr name_attributes;
  PostOpFh name_handle;
};
struct ReaddirplusRes {
  Status status = Status::Ok;
  PostOpAttr dir_attributes;  // ok and fail
  CookieVerf cookieverf{};    // ok
  std::vector<DirEntryPlus> entries;  // ok
  bool eof = false;                   // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// FSSTAT (18)
struct FsstatArgs { FileHandle fsroot; };
struct FsstatRes {
  Status status = Status::Ok;
  PostOpAttr obj_attributes;  // ok and fail
  std::uint64_t tbytes = 0, fbytes = 0, abytes = 0;  // ok
  std::uint64_t tfiles = 0, ffiles = 0, afiles = 0;  // ok
  std::uint32_t invarsec = 0;                         // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// FSINFO (19)
namespace fsf {
constexpr std::uint32_t Link = 0x1, Symlink = 0x2, Homogeneous = 0x8, CanSetTime = 0x10;
}
struct FsinfoArgs { FileHandle fsroot; };
struct FsinfoRes {
  Status status = Status::Ok;
  PostOpAttr obj_attributes;  // ok and fail
  std::uint32_t rtmax = 0, rtpref = 0, rtmult = 0;   // ok
  std::uint32_t wtmax = 0, wtpref = 0, wtmult = 0;   // ok
  std::uint32_t dtpref = 0;                          // ok
  std::uint64_t maxfilesize = 0;                     // ok
  Time time_delta;                                   // ok
  std::uint32_t properties = 0;                      // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// PATHCONF (20)
struct PathconfArgs { FileHandle object; };
struct PathconfRes {
  Status status = Status::Ok;
  PostOpAttr obj_attributes;  // ok and fail
  std::uint32_t linkmax = 0;  // ok
  std::uint32_t name_max = 0; // ok
  bool no_trunc = false;      // ok
  bool chown_restricted = false;  // ok
  bool case_insensitive = false;  // ok
  bool case_preserving = false;   // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

// COMMIT (21)
struct CommitArgs {
  FileHandle file;
  std::uint64_t offset = 0;
  std::uint32_t count = 0;
};
struct CommitRes {
  Status status = Status::Ok;
  WccData file_wcc;  // ok and fail
  WriteVerf verf{};  // ok
  bool gateway_status = false;  // see "Statuses nfsgw makes up" above
};

/// Human-readable procedure name ("GETATTR"), for logs and metrics.
const char* proc_name(std::uint32_t proc);
/// Human-readable status name ("NFS3ERR_NOENT").
const char* status_name(Status s);

}  // namespace nfsgw::nfs3
