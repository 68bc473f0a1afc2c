// A small synchronous client over libnfs's raw RPC API, for tests that must choose
// the exact bytes of a file handle (forged handles, handles kept across a gateway
// restart). Each call is bounded by a deadline. No libnfs headers here.
#pragma once

#include <cstdint>
#include <optional>
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

struct RawAttr : RawStatus {
  std::uint32_t type = 0;
  std::uint64_t fileid = 0, size = 0;
};

struct RawLookup : RawStatus {
  Handle handle;
  std::uint64_t fileid = 0;  // from obj_attributes, 0 when absent
};

struct RawRead : RawStatus {
  std::vector<std::uint8_t> data;
  bool eof = false;
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
};

struct RawPathconf : RawStatus {
  std::uint32_t linkmax = 0, name_max = 0;
  bool no_trunc = false, chown_restricted = false, case_insensitive = false, case_preserving = false;
};

struct RawFsinfo : RawStatus {
  std::uint32_t rtmax = 0, rtpref = 0, wtmax = 0, wtpref = 0, dtpref = 0;
  std::uint64_t maxfilesize = 0;
  std::uint32_t properties = 0;
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

  RawMount mnt(const std::string& export_path);  // on a MOUNT v3 connection
  RawAttr getattr(const Handle& fh);               // on an NFS v3 connection
  RawLookup lookup(const Handle& dir, const std::string& name);
  RawRead read(const Handle& fh, std::uint64_t offset, std::uint32_t count);
  /// Plain READDIR (not PLUS), paging with `count`-byte replies until eof.
  RawReaddir readdir_all(const Handle& dir, std::uint32_t count = 4096);
  RawPathconf pathconf(const Handle& fh);
  RawFsinfo fsinfo(const Handle& root);

  int timeout_ms = 30000;

 private:
  bool drive(const bool& done);  // services the socket until done or deadline

  rpc_context* rpc_ = nullptr;
};

/// MNT `export_path` on a fresh MOUNT connection to port; root handle or failure.
RawMount mount_root(std::uint16_t port, const std::string& export_path);

}  // namespace integ
