// A small synchronous client over libnfs's raw RPC API, for tests that must choose
// the exact bytes of a file handle (forged handles, handles kept across a gateway
// restart), the caller's AUTH_SYS credential, or exactly which calls are sent (so
// a relay's per-procedure counters can be compared with them). Each call is bounded
// by a deadline. No libnfs headers here.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

struct rpc_context;

namespace integ {

using Handle = std::vector<std::uint8_t>;

constexpr std::uint32_t kNfsProgram = 100003;
constexpr std::uint32_t kMountProgram = 100005;
constexpr std::uint32_t kNfs3BadHandle = 10001;

/// Outcome of one raw call: `transport_ok` false when the connection failed or the
/// deadline passed; otherwise `status` is the NFS3 (or MOUNT3) status.
struct RawStatus {
  bool transport_ok = false;
  std::uint32_t status = 0;
  std::string error;
};

constexpr std::uint32_t kNfs3Ok = 0;
constexpr std::uint32_t kNfs3ErrNoent = 2;
constexpr std::uint32_t kNfs3ErrAcces = 13;
constexpr std::uint32_t kNfs3ErrStale = 70;

/// ACCESS3 bits.
constexpr std::uint32_t kAccessRead = 0x01, kAccessLookup = 0x02, kAccessModify = 0x04, kAccessExtend = 0x08,
                        kAccessDelete = 0x10, kAccessExecute = 0x20, kAccessAll = 0x3f;

/// The fattr3 fields tests compare.
struct RawFattr {
  std::uint32_t type = 0, mode = 0, nlink = 0, uid = 0, gid = 0;
  std::uint64_t size = 0, fileid = 0;
  std::uint32_t mtime_sec = 0, mtime_nsec = 0, ctime_sec = 0, ctime_nsec = 0;
  bool operator==(const RawFattr&) const = default;
};
/// "type 1 mode 0644 size 2 fileid 123 mtime 1700000000.123456789 ..." for messages.
std::ostream& operator<<(std::ostream& os, const RawFattr& a);

struct RawAttr : RawStatus {
  std::uint32_t type = 0;
  std::uint64_t fileid = 0, size = 0;
  RawFattr attr;  // every field (type, fileid, size repeated)
};

struct RawLookup : RawStatus {
  Handle handle;
  std::uint64_t fileid = 0;  // from obj_attributes, 0 when absent
  std::optional<RawFattr> attr;  // obj_attributes when they follow
  std::optional<RawFattr> dir_attr;  // dir_attributes when they follow
};

struct RawAccess : RawStatus {
  std::uint32_t granted = 0;  // the ACCESS3 bits allowed (of those asked)
  std::optional<RawFattr> attr;  // obj_attributes when they follow
};

struct RawReadlink : RawStatus {
  std::string target;
  std::optional<RawFattr> attr;  // symlink_attributes when they follow
};

/// CREATE (and the handle it returns, when the server sends one).
struct RawCreate : RawStatus {
  Handle handle;
  std::optional<RawFattr> attr;
};

/// stable_how of WRITE3 (RFC 1813).
constexpr std::uint32_t kUnstable = 0, kDataSync = 1, kFileSync = 2;

struct RawWrite : RawStatus {
  std::uint32_t count = 0;
  std::uint32_t committed = 0;  // how the server says it stored the data
  std::uint64_t verf = 0;       // the write verifier (8 bytes, as one number)
};

struct RawCommit : RawStatus {
  std::uint64_t verf = 0;
};

struct RawRead : RawStatus {
  std::vector<std::uint8_t> data;
  bool eof = false;
  std::optional<RawFattr> attr;  // file_attributes when they follow
};

struct RawMount : RawStatus {
  Handle root;
};

struct RawDirEntry {
  std::string name;
  std::uint64_t fileid = 0;
};

struct RawReaddir : RawStatus {
  std::vector<RawDirEntry> entries;
  unsigned pages = 0;  // READDIR calls it took
  std::optional<RawFattr> dir_attr;  // of the last page
};

struct RawPlusEntry {
  std::string name;
  std::uint64_t fileid = 0;
  Handle handle;                 // empty when the server sent none
  std::optional<RawFattr> attr;  // name_attributes when they follow
};

struct RawReaddirPlus : RawStatus {
  std::vector<RawPlusEntry> entries;  // in the server's order, "." and ".." included
  std::optional<RawFattr> dir_attr;   // of the last page
  unsigned pages = 0;                 // READDIRPLUS calls it took
};

struct RawPathconf : RawStatus {
  std::uint32_t linkmax = 0, name_max = 0;
  bool no_trunc = false, chown_restricted = false, case_insensitive = false, case_preserving = false;
  std::optional<RawFattr> attr;  // obj_attributes when they follow
};

struct RawFsinfo : RawStatus {
  std::uint32_t rtmax = 0, rtpref = 0, wtmax = 0, wtpref = 0, dtpref = 0;
  std::uint64_t maxfilesize = 0;
  std::uint32_t properties = 0;
  std::optional<RawFattr> attr;  // obj_attributes when they follow
};

struct RawFsstat : RawStatus {
  std::uint64_t tbytes = 0, fbytes = 0, abytes = 0, tfiles = 0, ffiles = 0, afiles = 0;
  std::optional<RawFattr> attr;  // obj_attributes when they follow
};

/// SETATTR's new values: only those set are sent (no guard, times unchanged).
struct RawSetattr {
  std::optional<std::uint32_t> mode, uid, gid;
};

struct RawSetattrResult : RawStatus {
  std::optional<RawFattr> after;  // obj_wcc's post-op attributes when they follow
};

class RawNfsConnection {
 public:
  RawNfsConnection();
  ~RawNfsConnection();
  RawNfsConnection(const RawNfsConnection&) = delete;
  RawNfsConnection& operator=(const RawNfsConnection&) = delete;

  /// Connects to 127.0.0.1:port for `program`/`version` (no rpcbind). False on failure.
  bool connect(std::uint16_t port, std::uint32_t program, std::uint32_t version);
  std::string error() const;

  /// Every later call carries AUTH_SYS with this uid, gid and supplementary groups
  /// (libnfs's default is the test process's own ids).
  void set_credentials(std::uint32_t uid, std::uint32_t gid, const std::vector<std::uint32_t>& groups = {});

  RawMount mnt(const std::string& export_path);  // on a MOUNT v3 connection
  RawAttr getattr(const Handle& fh);               // on an NFS v3 connection
  RawLookup lookup(const Handle& dir, const std::string& name);
  RawRead read(const Handle& fh, std::uint64_t offset, std::uint32_t count);
  /// Plain READDIR (not PLUS), paging with `count`-byte replies until eof.
  RawReaddir readdir_all(const Handle& dir, std::uint32_t count = 4096);
  RawPathconf pathconf(const Handle& fh);
  RawFsinfo fsinfo(const Handle& root);
  RawFsstat fsstat(const Handle& fh);
  RawSetattrResult setattr(const Handle& fh, const RawSetattr& set);
  RawAccess access(const Handle& fh, std::uint32_t bits = kAccessAll);
  RawReadlink readlink(const Handle& link);
  /// READDIRPLUS paged until eof (`dircount`/`maxcount` per reply). A failing page
  /// (say NFS3ERR_ACCES) ends the listing with that page's status.
  RawReaddirPlus readdirplus_all(const Handle& dir, std::uint32_t dircount = 8192, std::uint32_t maxcount = 65536);
  /// CREATE, GUARDED (EXIST when the name is taken), with `mode`.
  RawCreate create(const Handle& dir, const std::string& name, std::uint32_t mode = 0644);
  RawStatus remove(const Handle& dir, const std::string& name);
  RawStatus rename(const Handle& from_dir, const std::string& from, const Handle& to_dir, const std::string& to);
  /// WRITE, FILE_SYNC unless `stable` says otherwise (kUnstable, kDataSync).
  RawWrite write(const Handle& fh, std::uint64_t offset, const std::string& data,
                 std::uint32_t stable = kFileSync);
  /// COMMIT of [offset, offset + count) (count 0: to the end of the file).
  RawCommit commit(const Handle& fh, std::uint64_t offset = 0, std::uint32_t count = 0);

  /// GETATTR of every handle, at most `window` calls in flight on this one
  /// connection at a time (window >= handles.size(): all sent before any reply is
  /// read). One result per handle, in order. timeout_ms bounds each wait for a
  /// reply; when it passes, the unanswered calls fail and the connection is closed
  /// (connect again, and set the credentials again, to go on).
  std::vector<RawAttr> getattr_pipelined(const std::vector<Handle>& handles, unsigned window = 64);

  /// Each call waits at most this long. A call that fails on the transport (the
  /// deadline passed, the connection broke) drops the connection with every call
  /// still queued in it: connect again, and set the credentials again, to go on.
  int timeout_ms = 30000;

 private:
  bool drive(const bool& done);  // services the socket until done or deadline
  /// A fresh libnfs context in place of the current one; calls still queued in the
  /// old one are called back (as failed) now, while their callers' state is alive.
  void abandon();
  template <typename Pred>
  bool drive_until(Pred finished);  // the same, until finished() is true

  rpc_context* rpc_ = nullptr;
  std::string abandoned_error_;  // why the last context was dropped
};

/// MNT `export_path` on a fresh MOUNT connection to port; root handle or failure.
RawMount mount_root(std::uint16_t port, const std::string& export_path);

}  // namespace integ
