#include "gateway/admin/admin_client.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <ostream>

namespace nfsgw::admin {

namespace {

constexpr std::size_t kMaxReplyBytes = 64u << 20;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

int unreachable(std::ostream& err, const std::string& path, const std::string& why) {
  err << "nfsgw is not running? cannot connect to " << path << ": " << why << "\n";
  return kExitUnreachable;
}

/// Connects, with send and receive timeouts; the descriptor, or -1 after printing why.
int connect_admin(const std::string& socket_path, std::chrono::seconds timeout, std::ostream& err, int& code) {
  sockaddr_un addr{};
  code = kExitOk;
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path) {
    code = unreachable(err, socket_path, "path too long for a Unix socket");
    return -1;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    code = unreachable(err, socket_path, std::strerror(errno));
    return -1;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    code = unreachable(err, socket_path, std::strerror(errno));
    ::close(fd);
    return -1;
  }
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count());
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

}  // namespace

int stream_admin_request(const std::string& socket_path, const std::string& request,
                         const std::function<void(std::string_view)>& on_line, std::ostream& err,
                         std::chrono::seconds timeout) {
  int code = kExitOk;
  Fd fd(connect_admin(socket_path, timeout, err, code));
  if (fd.get() < 0) return code;
  bool send_failed = false;
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // The server may have refused the request and closed: its reply says why.
      send_failed = true;
      break;
    }
    sent += static_cast<std::size_t>(n);
  }
  std::string pending;
  std::optional<std::string> status;
  int read_errno = 0;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read_errno = errno;
      break;
    }
    if (n == 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t eol; (eol = pending.find('\n', start)) != std::string::npos; start = eol + 1) {
      const std::string_view line = std::string_view(pending).substr(start, eol - start);
      if (status) continue;  // nothing counts after the status line
      if (line == "ok" || line == "error" || line.rfind("error ", 0) == 0) {
        status = std::string(line);
      } else {
        on_line(line);
      }
    }
    pending.erase(0, start);
    if (pending.size() > kMaxReplyBytes) {
      err << "nfsgw: a reply line from " << socket_path << " is longer than " << (kMaxReplyBytes >> 20)
          << " MiB; giving up\n";
      return kExitError;
    }
  }
  if (!status) {
    if (read_errno == EAGAIN || read_errno == EWOULDBLOCK) {
      err << "nfsgw: nothing from " << socket_path << " for " << timeout.count() << " s\n";
    } else if (read_errno != 0) {
      err << "nfsgw: reading the reply from " << socket_path << ": " << std::strerror(read_errno) << "\n";
    } else if (send_failed) {
      err << "nfsgw: cannot send the request to " << socket_path << "\n";
    } else {
      err << "nfsgw: the reply from " << socket_path << " ended without a status line (did nfsgw stop?)\n";
    }
    return kExitError;
  }
  if (*status == "ok") return kExitOk;
  err << "nfsgw: " << (status->size() > 6 ? status->substr(6) : std::string("unknown error")) << "\n";
  return kExitError;
}

int send_admin_request(const std::string& socket_path, const std::string& request_line,
                       std::ostream& out, std::ostream& err, std::chrono::seconds timeout) {
  sockaddr_un addr{};
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path)
    return unreachable(err, socket_path, "path too long for a Unix socket");
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return unreachable(err, socket_path, std::strerror(errno));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    return unreachable(err, socket_path, std::strerror(errno));

  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count());
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

  std::string request = request_line;
  if (request.empty() || request.back() != '\n') request += '\n';
  bool send_failed = false;
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // The server may have answered and closed already (a refused request): read on.
      send_failed = true;
      break;
    }
    sent += static_cast<std::size_t>(n);
  }

  // Read to the end: the status line is the last line before the server closes.
  std::string reply;
  int read_errno = 0;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read_errno = errno;
      break;
    }
    if (n == 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
    if (reply.size() > kMaxReplyBytes) {
      err << "nfsgw: the reply from " << socket_path << " is larger than "
          << (kMaxReplyBytes >> 20) << " MiB; giving up\n";
      return kExitError;
    }
  }

  // Split off the last complete line.
  std::string status;
  std::string body;
  if (!reply.empty() && reply.back() == '\n') {
    const std::size_t start = reply.rfind('\n', reply.size() - 2);
    const std::size_t status_at = start == std::string::npos ? 0 : start + 1;
    status = reply.substr(status_at, reply.size() - 1 - status_at);
    body = reply.substr(0, status_at);
  }
  // A reset after a complete reply is fine (the server closes without reading
  // what it did not need); anything else without a status line is a failure.
  const bool complete = status == "ok" || status == "error" || status.rfind("error ", 0) == 0;
  if (!complete) {
    out << reply;
    if (read_errno == EAGAIN || read_errno == EWOULDBLOCK) {
      err << "nfsgw: no reply from " << socket_path << " within " << timeout.count() << " s\n";
    } else if (read_errno != 0) {
      err << "nfsgw: reading the reply from " << socket_path << ": " << std::strerror(read_errno) << "\n";
    } else if (send_failed) {
      err << "nfsgw: cannot send the request to " << socket_path << "\n";
    } else {
      err << "nfsgw: the reply from " << socket_path << " ended without a status line\n";
    }
    return kExitError;
  }
  out << body;
  out.flush();
  if (status == "ok") return kExitOk;
  std::string message = status.size() > 6 ? status.substr(6) : std::string("unknown error");
  err << "nfsgw: " << message << "\n";
  return kExitError;
}

}  // namespace nfsgw::admin
