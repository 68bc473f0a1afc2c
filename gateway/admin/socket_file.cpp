#include "gateway/admin/socket_file.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace nfsgw::admin {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

/// 0 when a server accepted (or would accept: its backlog is full), else errno.
int probe(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  int err = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    err = errno;
    // Non-blocking connect on a Unix socket: EAGAIN means a listener with a full
    // backlog, which is alive.
    if (err == EAGAIN || err == EINPROGRESS) err = 0;
  }
  ::close(fd);
  return err;
}

}  // namespace

void clear_stale_socket(const std::string& path) {
  if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path))
    throw std::runtime_error("admin socket path '" + path + "' is too long for a Unix socket (at most " +
                             std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes)");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw std::runtime_error("cannot inspect admin socket " + path + ": " + errno_text(errno));
  }
  if (!S_ISSOCK(st.st_mode))
    throw std::runtime_error("admin socket path " + path +
                             " exists and is not a socket; refusing to replace it");
  const int err = probe(path);
  if (err == 0)
    throw std::runtime_error("another nfsgw is already serving the admin socket " + path +
                             " (two gateways cannot share one cache dir)");
  if (err != ECONNREFUSED)
    throw std::runtime_error("cannot check whether admin socket " + path + " is in use: " +
                             errno_text(err));
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error("cannot remove stale admin socket " + path + ": " + errno_text(errno));
  spdlog::info("removed stale admin socket {}", path);
}

FileId file_id(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return {st.st_dev, st.st_ino, true};
}

void remove_if_same(const std::string& path, const FileId& id) {
  if (!id.valid) return;
  const FileId now = file_id(path);
  if (now.valid && now.dev == id.dev && now.ino == id.ino) ::unlink(path.c_str());
}

}  // namespace nfsgw::admin
