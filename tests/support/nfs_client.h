// A mounted libnfs high-level (sync) client for tests. Only forward declarations
// here: libnfs headers stay in .cpp files (they clash with tirpc's).
#pragma once

#include <string>

struct nfs_context;

namespace integ {

class NfsClient {
 public:
  /// Mounts the export named by a libnfs URL (nfs://host/path?nfsport=N&mountport=M).
  /// uid/gid < 0 keep libnfs's default (the test's own ids). Every call times out
  /// after `timeout_ms`, so a silent server fails the test instead of hanging it.
  explicit NfsClient(const std::string& url, int uid = -1, int gid = -1, int timeout_ms = 30000);
  ~NfsClient();
  NfsClient(const NfsClient&) = delete;
  NfsClient& operator=(const NfsClient&) = delete;

  /// 0 when mounted, else libnfs's negative errno.
  int mount_status() const { return mount_status_; }
  const std::string& mount_error() const { return mount_error_; }
  nfs_context* get() const { return nfs_; }
  operator nfs_context*() const { return nfs_; }
  std::string error() const;

 private:
  nfs_context* nfs_ = nullptr;
  int mount_status_ = -1;
  std::string mount_error_;
};

}  // namespace integ
