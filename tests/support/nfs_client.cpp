#include "tests/support/nfs_client.h"

#include <nfsc/libnfs.h>

#include <stdexcept>

namespace integ {

NfsClient::NfsClient(const std::string& url, int uid, int gid, int timeout_ms) {
  nfs_ = nfs_init_context();
  if (!nfs_) throw std::runtime_error("nfs_init_context failed");
  nfs_set_timeout(nfs_, timeout_ms);
  nfs_set_autoreconnect(nfs_, 0);
  nfs_set_dircache(nfs_, 0);  // every call reaches the server under test
  if (uid >= 0) nfs_set_uid(nfs_, uid);
  if (gid >= 0) nfs_set_gid(nfs_, gid);
  nfs_url* u = nfs_parse_url_dir(nfs_, url.c_str());
  if (!u) {
    mount_error_ = "bad URL " + url + ": " + error();
    return;
  }
  mount_status_ = nfs_mount(nfs_, u->server, u->path);
  if (mount_status_ != 0) mount_error_ = "mount " + url + ": " + error();
  nfs_destroy_url(u);
}

NfsClient::~NfsClient() {
  if (nfs_) nfs_destroy_context(nfs_);
}

std::string NfsClient::error() const {
  const char* e = nfs_get_error(nfs_);
  return e ? e : "";
}

}  // namespace integ
