// libtirpc lives in this translation unit only: its headers clash with libnfs's.
#include "gateway/server/rpcbind_registration.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/pmap_clnt.h>

#include <spdlog/spdlog.h>

namespace nfsgw {
namespace {

constexpr std::uint32_t kNfsProgram = 100003;
constexpr std::uint32_t kMountProgram = 100005;
constexpr std::uint32_t kNlmProgram = 100021;

/// True when something accepts TCP connections on 127.0.0.1:111 within a second;
/// libtirpc itself would wait much longer for an absent rpcbind.
bool rpcbind_listening() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(111);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    ok = ::poll(&p, 1, 1000) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
         err == 0;
  }
  ::close(fd);
  return ok;
}

}  // namespace

RpcbindRegistration::RpcbindRegistration(std::uint16_t nfs_port, std::uint16_t mount_port,
                                         std::uint16_t nlm_port) {
  if (!rpcbind_listening()) {
    spdlog::warn("rpcbind is not running on 127.0.0.1:111: not registering; clients must "
                 "mount with explicit ports (port={},mountport={})",
                 nfs_port, mount_port);
    return;
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> wanted = {
      {kNfsProgram, 3}, {kMountProgram, 3}, {kMountProgram, 1}};
  if (nlm_port != 0) wanted.emplace_back(kNlmProgram, 4);
  for (const auto& [prog, vers] : wanted) {
    const std::uint16_t port = prog == kNfsProgram ? nfs_port : prog == kNlmProgram ? nlm_port : mount_port;
    if (pmap_set(prog, vers, IPPROTO_TCP, port)) {
      done_.emplace_back(prog, vers);
      spdlog::info("registered program {} version {} on TCP port {} with rpcbind", prog, vers,
                   port);
    } else {
      spdlog::warn("rpcbind refused program {} version {} (another server holds it?); clients "
                   "must give port {} explicitly",
                   prog, vers, port);
    }
  }
}

RpcbindRegistration::~RpcbindRegistration() {
  for (const auto& [prog, vers] : done_) pmap_unset(prog, vers);
}

}  // namespace nfsgw
