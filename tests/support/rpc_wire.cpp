#include "tests/support/rpc_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace integ {

XdrOut& XdrOut::u32(std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) bytes.push_back(static_cast<std::uint8_t>(v >> s));
  return *this;
}

XdrOut& XdrOut::u64(std::uint64_t v) {
  u32(static_cast<std::uint32_t>(v >> 32));
  return u32(static_cast<std::uint32_t>(v));
}

XdrOut& XdrOut::opaque(const std::vector<std::uint8_t>& data) {
  u32(static_cast<std::uint32_t>(data.size()));
  bytes.insert(bytes.end(), data.begin(), data.end());
  while (bytes.size() % 4) bytes.push_back(0);
  return *this;
}

XdrOut& XdrOut::string(const std::string& s) { return opaque(std::vector<std::uint8_t>(s.begin(), s.end())); }

XdrOut rpc_call(std::uint32_t xid, std::uint32_t prog, std::uint32_t vers, std::uint32_t proc) {
  XdrOut cred;
  cred.u32(0).string("integ").u32(0).u32(0).u32(0);  // stamp, machine, uid, gid, no gids
  XdrOut x;
  x.u32(xid).u32(0 /*CALL*/).u32(2).u32(prog).u32(vers).u32(proc);
  x.u32(1 /*AUTH_SYS*/).opaque(cred.bytes);
  x.u32(0 /*AUTH_NONE*/).u32(0);
  return x;
}

std::vector<std::uint8_t> record(const std::vector<std::uint8_t>& body) {
  XdrOut x;
  x.u32(0x80000000u | static_cast<std::uint32_t>(body.size()));
  x.bytes.insert(x.bytes.end(), body.begin(), body.end());
  return x.bytes;
}

ParsedReply parse_reply(const std::vector<std::uint8_t>& b) {
  ParsedReply r;
  std::size_t pos = 0;
  auto get = [&](std::uint32_t& v) {
    if (pos + 4 > b.size()) return false;
    v = (std::uint32_t(b[pos]) << 24) | (std::uint32_t(b[pos + 1]) << 16) | (std::uint32_t(b[pos + 2]) << 8) | b[pos + 3];
    pos += 4;
    return true;
  };
  std::uint32_t flavor = 0, len = 0;
  if (!get(r.xid) || !get(r.msg_type) || !get(r.reply_stat)) return r;
  if (r.reply_stat != 0) {
    r.ok = true;  // MSG_DENIED: rest is reject info
    r.results.assign(b.begin() + pos, b.end());
    return r;
  }
  if (!get(flavor) || !get(len) || len > 400) return r;
  pos += (len + 3) & ~3u;
  if (pos > b.size() || !get(r.accept_stat)) return r;
  if (r.accept_stat == 2 && (!get(r.low) || !get(r.high))) return r;
  r.results.assign(b.begin() + pos, b.end());
  r.ok = true;
  return r;
}

TcpConn::TcpConn(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

TcpConn::~TcpConn() {
  if (fd_ >= 0) ::close(fd_);
}

bool TcpConn::send_all(const std::vector<std::uint8_t>& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

bool TcpConn::read_exact(std::uint8_t* out, std::size_t n, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::size_t got = 0;
  while (got < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int pr = ::poll(&pfd, 1, static_cast<int>(left));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return false;
    ssize_t r = ::recv(fd_, out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      closed_ = true;
      return false;
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

std::optional<std::vector<std::uint8_t>> TcpConn::read_record(int timeout_ms) {
  std::vector<std::uint8_t> body;
  for (;;) {
    std::uint8_t hdr[4];
    if (!read_exact(hdr, 4, timeout_ms)) return std::nullopt;
    std::uint32_t m = (std::uint32_t(hdr[0]) << 24) | (std::uint32_t(hdr[1]) << 16) | (std::uint32_t(hdr[2]) << 8) | hdr[3];
    std::uint32_t len = m & 0x7fffffffu;
    if (body.size() + len > (64u << 20)) return std::nullopt;  // not a sane reply
    std::size_t old = body.size();
    body.resize(old + len);
    if (len && !read_exact(body.data() + old, len, timeout_ms)) return std::nullopt;
    if (m & 0x80000000u) return body;
  }
}

bool TcpConn::wait_closed(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::uint8_t buf[4096];
  while (!closed_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int pr = ::poll(&pfd, 1, static_cast<int>(left));
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return false;
    ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) closed_ = true;  // EOF or reset; any bytes read are discarded
  }
  return true;
}

}  // namespace integ
