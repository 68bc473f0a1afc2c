#pragma once
// One libnfs raw RPC connection (MOUNT or NFS v3), driven from outside by
// poll(): fd()/events()/service(). libnfs is not thread-safe, so a Connection
// is used by one thread at a time; libnfs headers stay in the .cpp (they clash
// with tirpc and must not leak into other translation units).
//
// Every call copies what the bench needs out of libnfs's reply (libnfs frees
// it when the callback returns) into a Reply, records the call's latency and
// outcome into the attached CallStats, then runs the caller's continuation.
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct rpc_context;  // libnfs, opaque here

namespace nfsgw::bench {

struct CallStats;

using FileHandle = std::vector<std::uint8_t>;

struct Attr {
  bool present = false;
  std::uint32_t type = 0;  ///< NF3REG = 1, NF3DIR = 2, ...
  std::uint64_t size = 0;
};

struct DirEntry {
  std::string name;
  std::uint64_t cookie = 0;
  bool has_handle = false;
  FileHandle fh;
  Attr attr;
};

struct Reply {
  std::string transport_error;  ///< empty when a reply was decoded
  std::uint32_t status = 0;     ///< NFS3 (or MNT3) status
  FileHandle fh;                ///< MNT, LOOKUP, CREATE, MKDIR (when returned)
  Attr attr;                    ///< object attributes when returned
  std::uint32_t count = 0;      ///< READ / WRITE bytes
  std::array<std::uint8_t, 8> verf{};  ///< WRITE / COMMIT write verifier
  bool eof = false;             ///< READ, READDIRPLUS
  std::vector<DirEntry> entries;
  std::array<std::uint8_t, 8> cookieverf{};
  bool ok() const { return transport_error.empty() && status == 0; }
};

using ReplyFn = std::function<void(const Reply&)>;

enum class Program { Mount, Nfs, Nlm };

/// An NLM v4 lock (exclusive), as nfsgw-bench sends it.
struct NlmLock {
  FileHandle fh;
  std::string owner;  ///< the owner handle's bytes
  std::uint32_t svid = 0;
  std::uint64_t offset = 0, length = 0;
};

class Connection {
 public:
  Connection(std::uint32_t uid, std::uint32_t gid);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Starts a TCP connect to host:port (port 0: ask rpcbind for program v3; NLM v4).
  /// Returns false (with error()) if it could not even start.
  bool start_connect(const std::string& host, std::uint16_t port, Program program);
  bool connected() const { return connected_; }
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }

  int fd() const;
  short events() const;
  /// Processes poll results; false once the connection is unusable.
  bool service(short revents);
  /// Calls queued and not yet answered.
  std::size_t inflight() const { return inflight_; }

  void set_stats(CallStats* stats) { stats_ = stats; }

  // Each returns false if libnfs refused to queue (then fn is not called).
  bool mnt(const std::string& path, ReplyFn fn);
  bool null(ReplyFn fn);
  bool getattr(const FileHandle& fh, ReplyFn fn);
  bool lookup(const FileHandle& dir, const std::string& name, ReplyFn fn);
  bool access(const FileHandle& fh, std::uint32_t mask, ReplyFn fn);
  bool read(const FileHandle& fh, std::uint64_t offset, std::uint32_t count, ReplyFn fn);
  /// data must stay valid until fn runs.
  bool write(const FileHandle& fh, std::uint64_t offset, const std::uint8_t* data,
             std::uint32_t count, bool file_sync, ReplyFn fn);
  /// COMMIT of the whole file (offset 0, count 0).
  bool commit(const FileHandle& fh, ReplyFn fn);
  /// SETATTR of the mode and, when mtime_s is non-zero, of atime and mtime to
  /// that time (SET_TO_CLIENT_TIME), as `tar -x` does after writing a file.
  bool setattr(const FileHandle& fh, std::uint32_t mode, std::uint32_t mtime_s, ReplyFn fn);
  /// CREATE UNCHECKED with size 0 (truncates an existing file).
  bool create(const FileHandle& dir, const std::string& name, std::uint32_t mode, ReplyFn fn);
  bool mkdir(const FileHandle& dir, const std::string& name, std::uint32_t mode, ReplyFn fn);
  bool remove(const FileHandle& dir, const std::string& name, ReplyFn fn);
  /// NLM v4 LOCK (exclusive, non-blocking, not a reclaim) and UNLOCK of `l`, as
  /// caller 127.0.0.1. Reply::status is the NLM4 stat (0: GRANTED).
  bool nlm_lock(const NlmLock& l, ReplyFn fn);
  bool nlm_unlock(const NlmLock& l, ReplyFn fn);
  bool readdirplus(const FileHandle& dir, std::uint64_t cookie,
                   const std::array<std::uint8_t, 8>& verf, std::uint32_t dircount,
                   std::uint32_t maxcount, ReplyFn fn);

  enum class Kind { Mnt, Null, Getattr, Lookup, Access, Read, Write, Commit, Setattr, Create, Mkdir, Remove, Readdirplus,
                    NlmLock, NlmUnlock };
  struct Pending;

 private:
  static void on_connect(rpc_context* rpc, int status, void* data, void* priv);
  static void on_reply(rpc_context* rpc, int status, void* data, void* priv);
  Pending* make_pending(Kind kind, ReplyFn fn);
  bool queued(int rc, Pending* p);

  rpc_context* rpc_ = nullptr;
  CallStats* stats_ = nullptr;
  std::size_t inflight_ = 0;
  bool connected_ = false;
  bool failed_ = false;
  bool closing_ = false;
  std::string error_;
};

}  // namespace nfsgw::bench
