#include "gateway/upstream/origin_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nfsgw::upstream {

OriginSocketOptions origin_socket_options(std::chrono::milliseconds timeout) {
  using std::chrono::duration_cast;
  using std::chrono::seconds;
  const long long total_s = std::max<long long>(1, duration_cast<seconds>(timeout).count());
  OriginSocketOptions o;
  o.keepalive_count = 3;
  o.keepalive_idle_s = static_cast<int>(std::clamp<long long>(total_s / 2, 1, 32767));
  o.keepalive_interval_s = static_cast<int>(std::clamp<long long>(total_s / 6, 1, 32767));
  o.user_timeout_ms = static_cast<unsigned>(
      std::clamp<long long>(timeout.count(), 1, 0x7fffffffLL));
  return o;
}

bool apply_origin_socket_options(int fd, const OriginSocketOptions& o, std::string* error) {
  bool ok = true;
  auto set = [&](int level, int name, int value, const char* what) {
    if (::setsockopt(fd, level, name, &value, sizeof value) != 0) {
      if (ok && error != nullptr) *error = std::string(what) + ": " + std::strerror(errno);
      ok = false;
    }
  };
  set(IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
  set(SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
  set(IPPROTO_TCP, TCP_KEEPIDLE, o.keepalive_idle_s, "TCP_KEEPIDLE");
  set(IPPROTO_TCP, TCP_KEEPINTVL, o.keepalive_interval_s, "TCP_KEEPINTVL");
  set(IPPROTO_TCP, TCP_KEEPCNT, o.keepalive_count, "TCP_KEEPCNT");
  set(IPPROTO_TCP, TCP_USER_TIMEOUT, static_cast<int>(o.user_timeout_ms), "TCP_USER_TIMEOUT");
  return ok;
}

}  // namespace nfsgw::upstream
