// The differential tester's NFSv3 client: one synchronous libnfs raw connection
// that keeps everything a reply carries which the oracle checks (status, handles,
// the object's and the directory's attributes, ACCESS bits, data, listings), in
// one Reply shape for every procedure, so that an answer of nfsgw and the origin's
// answer to the same call are compared field by field. Every call is bounded by
// a deadline; a broken or silent connection gives transport_ok = false.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/raw_nfs.h"

struct rpc_context;

namespace difftest {

using integ::Handle;
using Attr = integ::RawFattr;  // type, mode, nlink, uid, gid, size, fileid, mtime, ctime

// NFS3 statuses the tester names (RFC 1813).
constexpr std::uint32_t kOk = 0, kPerm = 1, kNoent = 2, kAcces = 13, kExist = 17, kNotdir = 20, kIsdir = 21,
                        kInval = 22, kRofs = 30, kNotempty = 66, kStale = 70, kJukebox = 10008;
// fattr3 types.
constexpr std::uint32_t kReg = 1, kDir = 2, kLnk = 5;

struct Entry {
  std::string name;
  std::uint64_t fileid = 0;
  Handle handle;              // READDIRPLUS, when the server sent one
  std::optional<Attr> attr;   // READDIRPLUS, when the server sent them
};

/// One reply, whatever the procedure; fields a procedure does not carry stay empty.
struct Reply {
  bool transport_ok = false;
  std::string error;          // why transport_ok is false
  std::uint32_t status = 0;
  Handle handle;              // LOOKUP's object; CREATE, MKDIR, SYMLINK's new object
  std::optional<Attr> attr;   // the object's (post-op) attributes
  std::optional<Attr> dir_attr;   // the directory's: LOOKUP, READDIR*, wcc after of CREATE..LINK, RENAME's from
  std::optional<Attr> dir2_attr;  // RENAME's to-directory (wcc after)
  std::uint32_t access = 0;   // ACCESS bits granted
  std::string data;           // READ's bytes, READLINK's target
  bool eof = false;           // READ
  std::uint64_t verf = 0;     // WRITE, COMMIT: the write verifier (its 8 bytes, as stored)
  std::uint32_t committed = 0;  // WRITE: how stable the server made it (0 UNSTABLE, 2 FILE_SYNC)
  std::vector<Entry> entries; // READDIR, READDIRPLUS (all pages, in the server's order)
};

/// SETATTR's changes: what is set.
struct SetAttrs {
  std::optional<std::uint32_t> mode;
  std::optional<std::uint64_t> size;
};

class Nfs3Client {
 public:
  Nfs3Client();
  ~Nfs3Client();
  Nfs3Client(const Nfs3Client&) = delete;
  Nfs3Client& operator=(const Nfs3Client&) = delete;

  /// (Re)connects to NFS v3 at 127.0.0.1:port; the credential is set again.
  bool connect(std::uint16_t port);
  /// AUTH_SYS uid, gid and supplementary groups of every later call.
  void set_credentials(std::uint32_t uid, std::uint32_t gid, const std::vector<std::uint32_t>& groups);
  std::string error() const;

  Reply getattr(const Handle& h);
  Reply lookup(const Handle& dir, const std::string& name);
  Reply access(const Handle& h, std::uint32_t bits);
  Reply readlink(const Handle& h);
  Reply read(const Handle& h, std::uint64_t offset, std::uint32_t count);
  /// Whole listings, paged until eof (bounded).
  Reply readdir(const Handle& dir);
  Reply readdirplus(const Handle& dir);
  Reply create(const Handle& dir, const std::string& name, std::uint32_t mode);  // GUARDED
  Reply mkdir(const Handle& dir, const std::string& name, std::uint32_t mode);
  Reply symlink(const Handle& dir, const std::string& name, const std::string& target);
  Reply remove(const Handle& dir, const std::string& name);
  Reply rmdir(const Handle& dir, const std::string& name);
  Reply rename(const Handle& from_dir, const std::string& from, const Handle& to_dir, const std::string& to);
  Reply link(const Handle& file, const Handle& dir, const std::string& name);
  Reply setattr(const Handle& h, const SetAttrs& what);
  /// FILE_SYNC, or UNSTABLE when `file_sync` is false.
  Reply write(const Handle& h, std::uint64_t offset, const std::string& data, bool file_sync = true);
  /// COMMIT of the whole file: its verifier and the file's attributes after.
  Reply commit(const Handle& h);

  int timeout_ms = 20000;

 private:
  struct Slot;
  /// Decodes a procedure's result into the reply (and `extra`, when given).
  using Decode = void (*)(void* result, Reply& out, void* extra);
  /// Sends with `send` (which queues the call with Slot's callback) and waits.
  template <typename Send>
  Reply call(const char* what, Decode decode, Send send, void* extra = nullptr);
  /// A whole listing (READDIR or READDIRPLUS, by `Res`), paged until eof (bounded):
  /// `args` with the directory and each page's cookie set is sent with `send`.
  template <typename Res, typename Args, typename Send>
  Reply listing(const char* what, const Handle& dir, Args args, Send send);
  bool drive(const bool& done);
  void reset();  // a fresh context after a failure (calls still queued are dropped)

  rpc_context* rpc_ = nullptr;
  std::uint16_t port_ = 0;
  std::uint32_t uid_ = 0, gid_ = 0;
  std::vector<std::uint32_t> groups_;
  std::string last_error_;
};

/// MNT of `path` at 127.0.0.1:port (MOUNT v3, as root): the root handle, or empty.
Handle mount(std::uint16_t port, const std::string& path, std::string* error = nullptr);

const char* status_name(std::uint32_t status);

}  // namespace difftest
