#include "tests/upstream/fake_origin.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace nfsgw::upstream::test {

namespace {
std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}
void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  out.push_back(static_cast<std::uint8_t>(v >> 24));
  out.push_back(static_cast<std::uint8_t>(v >> 16));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
  out.push_back(static_cast<std::uint8_t>(v));
}
}  // namespace

FakeOrigin::FakeOrigin() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    throw std::runtime_error("bind/listen");
  }
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe");
  thread_ = std::thread([this] { run(); });
}

FakeOrigin::~FakeOrigin() {
  stop_ = true;
  [[maybe_unused]] auto n = ::write(wake_[1], "x", 1);
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void FakeOrigin::set_mode(Mode m, std::chrono::milliseconds slow_interval) {
  {
    std::lock_guard lock(mu_);
    mode_ = m;
    slow_interval_ = slow_interval;
  }
  [[maybe_unused]] auto n = ::write(wake_[1], "x", 1);
}

std::vector<std::uint16_t> FakeOrigin::peer_ports() const {
  std::lock_guard lock(mu_);
  return peer_ports_;
}

void FakeOrigin::answer(Conn& c, std::uint32_t xid) {
  // xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE (flavor, length 0), SUCCESS.
  std::vector<std::uint8_t> out;
  put32(out, 0x80000000u | 24u);
  put32(out, xid);
  put32(out, 1);
  put32(out, 0);
  put32(out, 0);
  put32(out, 0);
  put32(out, 0);
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::send(c.fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client went away: nothing to answer
    done += static_cast<std::size_t>(n);
  }
}

void FakeOrigin::read_from(Conn& c) {
  std::uint8_t buf[4096];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
  if (n <= 0) {
    ::close(c.fd);
    c.fd = -1;
    return;
  }
  c.in.insert(c.in.end(), buf, buf + n);
  // Single-fragment records, as libnfs sends them.
  while (c.in.size() >= 4) {
    const std::uint32_t len = be32(c.in.data()) & 0x7fffffffu;
    if (c.in.size() < 4 + len) break;
    if (len >= 4) {
      c.held.push_back(be32(c.in.data() + 4));
      ++calls_;
    }
    c.in.erase(c.in.begin(), c.in.begin() + 4 + len);
  }
}

void FakeOrigin::run() {
  std::vector<Conn> conns;
  auto next_slow = std::chrono::steady_clock::now();
  while (!stop_) {
    bool stuck;
    {
      std::lock_guard lock(mu_);
      stuck = mode_ == Mode::Stuck;
    }
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (!stuck) {
      for (auto& c : conns) fds.push_back({c.fd, POLLIN, 0});
    }
    ::poll(fds.data(), fds.size(), 20);
    if (fds[1].revents & POLLIN) {
      char drain[64];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
    }
    if (fds[0].revents & POLLIN) {
      sockaddr_in peer{};
      socklen_t len = sizeof peer;
      const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
      if (fd >= 0) {
        ++connections_;
        std::lock_guard lock(mu_);
        peer_ports_.push_back(ntohs(peer.sin_port));
        if (mode_ == Mode::Drop) {
          ::close(fd);  // accepted, then dropped at once
        } else {
          conns.push_back(Conn{fd, {}, {}});
        }
      }
    }
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(conns[i - 2]);
    }
    std::erase_if(conns, [](const Conn& c) { return c.fd < 0; });

    Mode mode;
    std::chrono::milliseconds interval;
    {
      std::lock_guard lock(mu_);
      mode = mode_;
      interval = slow_interval_;
    }
    if (mode == Mode::Drop) {
      for (auto& c : conns) ::close(c.fd);
      conns.clear();
    }
    if (mode == Mode::Answer) {
      for (auto& c : conns) {
        for (auto xid : c.held) answer(c, xid);
        c.held.clear();
      }
    } else if (mode == Mode::Slow && std::chrono::steady_clock::now() >= next_slow) {
      for (auto& c : conns) {
        if (c.held.empty()) continue;
        answer(c, c.held.front());
        c.held.erase(c.held.begin());
        next_slow = std::chrono::steady_clock::now() + interval;
        break;
      }
    }
  }
  for (auto& c : conns) ::close(c.fd);
}

}  // namespace nfsgw::upstream::test
