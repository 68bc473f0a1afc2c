// nfsgw-hostile: clients that try to make nfsgw hold resources, for the figures of
// docs/benchmarks.md ("Bounded resources"). Plain sockets and hand-built RPC, one
// thread, every wait bounded.
//
//   nfsgw-hostile hold    --port P --file NAME [--connections 1000] [--reads 4]
//                         [--size 1048576] [--hold 10]
//       N connections each send R READs of `size` bytes of export file NAME, read
//       nothing for `hold` seconds, then read every reply. Prints one JSON line.
//   nfsgw-hostile slow    --port P --file NAME [--reads 64] [--rate 65536] [--duration 10]
//       One connection keeps R READs of 1 MiB outstanding and reads its socket at
//       `rate` bytes per second.
//   nfsgw-hostile garbage --port P [--connections 8] [--duration 10]
//       Connections send well-framed records of random bytes (half of them with a
//       CALL header for a random program) as fast as nfsgw takes them.
// The export is /export, reached over MOUNT on the same port (nfsgw's default).
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

void put32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}
void put64(Bytes& b, std::uint64_t v) {
  put32(b, static_cast<std::uint32_t>(v >> 32));
  put32(b, static_cast<std::uint32_t>(v));
}
void put_opaque(Bytes& b, const Bytes& d) {
  put32(b, static_cast<std::uint32_t>(d.size()));
  b.insert(b.end(), d.begin(), d.end());
  b.resize(b.size() + ((4 - d.size() % 4) % 4), 0);
}
std::uint32_t get32(const Bytes& b, std::size_t at) {
  if (at + 4 > b.size()) throw std::runtime_error("short reply");
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

/// A CALL header with AUTH_SYS uid 0 and an AUTH_NONE verifier.
Bytes call(std::uint32_t xid, std::uint32_t prog, std::uint32_t vers, std::uint32_t proc) {
  Bytes b;
  for (std::uint32_t v : {xid, 0u, 2u, prog, vers, proc}) put32(b, v);
  Bytes sys;
  for (std::uint32_t v : {0u, 0u}) put32(sys, v);  // stamp, empty machine name
  for (std::uint32_t v : {0u, 0u, 0u}) put32(sys, v);  // uid, gid, no groups
  put32(b, 1);
  put_opaque(b, sys);
  put32(b, 0);
  put32(b, 0);
  return b;
}
Bytes framed(const Bytes& body) {
  Bytes r;
  put32(r, 0x80000000u | static_cast<std::uint32_t>(body.size()));
  r.insert(r.end(), body.begin(), body.end());
  return r;
}

int connect_to(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool send_all(int fd, const Bytes& b) {
  std::size_t done = 0;
  while (done < b.size()) {
    const ssize_t n = ::send(fd, b.data() + done, b.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

/// Reads one record (all fragments) within `timeout`; nullopt on EOF or timeout.
std::optional<Bytes> read_record(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto read_exact = [&](std::uint8_t* out, std::size_t n) {
    while (n > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd p{fd, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
      const ssize_t r = ::recv(fd, out, n, 0);
      if (r <= 0) return false;
      out += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  };
  Bytes body;
  for (;;) {
    std::uint8_t h[4];
    if (!read_exact(h, 4)) return std::nullopt;
    const std::uint32_t m = (std::uint32_t{h[0]} << 24) | (std::uint32_t{h[1]} << 16) | (std::uint32_t{h[2]} << 8) | h[3];
    const std::size_t len = m & 0x7fffffffu, old = body.size();
    if (old + len > (64u << 20)) return std::nullopt;
    body.resize(old + len);
    if (len > 0 && !read_exact(body.data() + old, len)) return std::nullopt;
    if (m & 0x80000000u) return body;
  }
}

/// The result bytes of an accepted, successful reply (after the verifier).
Bytes results_of(const Bytes& reply) {
  if (get32(reply, 4) != 1 || get32(reply, 8) != 0) throw std::runtime_error("not an accepted reply");
  const std::size_t verf_len = get32(reply, 16);
  const std::size_t at = 20 + verf_len + (4 - verf_len % 4) % 4;
  if (get32(reply, at) != 0) throw std::runtime_error("call not accepted (stat " + std::to_string(get32(reply, at)) + ")");
  return Bytes(reply.begin() + static_cast<std::ptrdiff_t>(at + 4), reply.end());
}

Bytes read_opaque(const Bytes& b, std::size_t at) {
  const std::size_t n = get32(b, at);
  if (at + 4 + n > b.size()) throw std::runtime_error("short opaque");
  return Bytes(b.begin() + static_cast<std::ptrdiff_t>(at + 4), b.begin() + static_cast<std::ptrdiff_t>(at + 4 + n));
}

/// MNT /export and LOOKUP `name` in its root: the file's handle.
Bytes file_handle(std::uint16_t port, const std::string& name) {
  const int fd = connect_to(port);
  if (fd < 0) throw std::runtime_error("cannot connect");
  Bytes mnt = call(1, 100005, 3, 1);
  put_opaque(mnt, Bytes(std::begin("/export"), std::end("/export") - 1));
  if (!send_all(fd, framed(mnt))) throw std::runtime_error("MNT not sent");
  auto r = read_record(fd, std::chrono::seconds(30));
  if (!r) throw std::runtime_error("no MNT reply");
  Bytes res = results_of(*r);
  if (get32(res, 0) != 0) throw std::runtime_error("MNT failed");
  const Bytes root = read_opaque(res, 4);
  Bytes lk = call(2, 100003, 3, 3);
  put_opaque(lk, root);
  put_opaque(lk, Bytes(name.begin(), name.end()));
  if (!send_all(fd, framed(lk))) throw std::runtime_error("LOOKUP not sent");
  r = read_record(fd, std::chrono::seconds(30));
  ::close(fd);
  if (!r) throw std::runtime_error("no LOOKUP reply");
  res = results_of(*r);
  if (get32(res, 0) != 0) throw std::runtime_error("LOOKUP " + name + " failed: " + std::to_string(get32(res, 0)));
  return read_opaque(res, 4);
}

Bytes read_call(std::uint32_t xid, const Bytes& fh, std::uint64_t offset, std::uint32_t count) {
  Bytes b = call(xid, 100003, 3, 6);
  put_opaque(b, fh);
  put64(b, offset);
  put32(b, count);
  return framed(b);
}

struct Options {
  std::string mode;
  std::uint16_t port = 0;
  std::string file;
  unsigned connections = 0, reads = 0;
  std::uint32_t size = 1u << 20;
  double hold = 10, duration = 10;
  std::uint64_t rate = 65536;
};

int run_hold(const Options& o) {
  const unsigned conns = o.connections ? o.connections : 1000, reads = o.reads ? o.reads : 4;
  const Bytes fh = file_handle(o.port, o.file);
  std::vector<int> fds;
  unsigned refused = 0;
  for (unsigned c = 0; c < conns; ++c) {
    const int fd = connect_to(o.port);
    if (fd < 0) {
      ++refused;
      continue;
    }
    Bytes burst;
    for (unsigned i = 0; i < reads; ++i) {
      const Bytes one = read_call(c * reads + i + 1, fh, static_cast<std::uint64_t>(i) * o.size, o.size);
      burst.insert(burst.end(), one.begin(), one.end());
    }
    if (!send_all(fd, burst)) {
      ::close(fd);
      ++refused;
      continue;
    }
    fds.push_back(fd);
  }
  std::fprintf(stderr, "holding %zu connections with %u READs each\n", fds.size(), reads);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.hold));
  // Read every connection at once, as a client machine's many processes would.
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::seconds(120);
  std::vector<unsigned> got(fds.size(), 0);
  std::vector<Bytes> inbuf(fds.size());
  std::vector<std::uint8_t> chunk(1u << 16);
  unsigned replies = 0, open = static_cast<unsigned>(fds.size());
  while (open > 0 && Clock::now() < deadline) {
    std::vector<pollfd> ps;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i] < 0) continue;
      ps.push_back({fds[i], POLLIN, 0});
      which.push_back(i);
    }
    if (::poll(ps.data(), ps.size(), 1000) <= 0) continue;
    for (std::size_t k = 0; k < ps.size(); ++k) {
      if (!(ps[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const std::size_t i = which[k];
      const ssize_t n = ::recv(fds[i], chunk.data(), chunk.size(), 0);
      if (n > 0) inbuf[i].insert(inbuf[i].end(), chunk.begin(), chunk.begin() + n);
      // Whole single-fragment records (what nfsgw sends).
      while (inbuf[i].size() >= 4) {
        const std::size_t len = get32(inbuf[i], 0) & 0x7fffffffu;
        if (inbuf[i].size() < 4 + len) break;
        inbuf[i].erase(inbuf[i].begin(), inbuf[i].begin() + static_cast<std::ptrdiff_t>(4 + len));
        ++got[i];
        ++replies;
      }
      if (n <= 0 || got[i] == reads) {
        ::close(fds[i]);
        fds[i] = -1;
        --open;
      }
    }
  }
  unsigned incomplete = 0;
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (got[i] < reads) ++incomplete;
    if (fds[i] >= 0) ::close(fds[i]);
  }
  const double drain_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("{\"connections\":%zu,\"refused\":%u,\"replies\":%u,\"expected\":%zu,\"incomplete_connections\":%u,"
              "\"drain_s\":%.2f}\n",
              fds.size(), refused, replies, static_cast<std::size_t>(fds.size()) * reads, incomplete, drain_s);
  return replies == fds.size() * reads ? 0 : 1;
}

int run_slow(const Options& o) {
  const unsigned reads = o.reads ? o.reads : 64;
  const Bytes fh = file_handle(o.port, o.file);
  const int fd = connect_to(o.port);
  if (fd < 0) throw std::runtime_error("cannot connect");
  int small = 64 * 1024;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  Bytes burst;
  for (unsigned i = 0; i < reads; ++i) {
    const Bytes one = read_call(i + 1, fh, static_cast<std::uint64_t>(i) << 20, 1u << 20);
    burst.insert(burst.end(), one.begin(), one.end());
  }
  if (!send_all(fd, burst)) throw std::runtime_error("READs not sent");
  const auto end = Clock::now() + std::chrono::duration<double>(o.duration);
  std::uint64_t got = 0;
  std::vector<std::uint8_t> buf(4096);
  const auto start = Clock::now();
  while (Clock::now() < end) {
    // Read at `rate`: no more than rate * elapsed bytes so far.
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (got < static_cast<std::uint64_t>(elapsed * static_cast<double>(o.rate))) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) > 0) {
        const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) break;
        got += static_cast<std::uint64_t>(n);
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ::close(fd);
  std::printf("{\"slow_bytes_read\":%llu}\n", static_cast<unsigned long long>(got));
  return 0;
}

int run_garbage(const Options& o) {
  const unsigned conns = o.connections ? o.connections : 8;
  std::mt19937 rng(42);
  std::vector<int> fds;
  for (unsigned c = 0; c < conns; ++c) {
    const int fd = connect_to(o.port);
    if (fd >= 0) {
      ::fcntl(fd, F_SETFL, O_NONBLOCK);
      fds.push_back(fd);
    }
  }
  const auto end = Clock::now() + std::chrono::duration<double>(o.duration);
  std::uint64_t records = 0;
  std::vector<std::uint8_t> sink(65536);
  std::map<int, Bytes> pending;  // bytes not yet taken by the socket
  while (Clock::now() < end && !fds.empty()) {
    std::vector<pollfd> ps;
    for (int fd : fds) ps.push_back({fd, static_cast<short>(POLLIN | POLLOUT), 0});
    if (::poll(ps.data(), ps.size(), 100) <= 0) continue;
    for (auto& p : ps) {
      if (p.revents & POLLIN) {
        if (::recv(p.fd, sink.data(), sink.size(), 0) == 0) p.revents |= POLLHUP;
      }
      if (p.revents & (POLLHUP | POLLERR)) {
        // nfsgw closed it (a bad record mark is fatal by design): open another.
        ::close(p.fd);
        std::erase(fds, p.fd);
        pending.erase(p.fd);
        const int fd = connect_to(o.port);
        if (fd >= 0) {
          ::fcntl(fd, F_SETFL, O_NONBLOCK);
          fds.push_back(fd);
        }
        continue;
      }
      if (!(p.revents & POLLOUT)) continue;
      Bytes& out = pending[p.fd];
      if (out.empty()) {
        for (int i = 0; i < 16; ++i) {
          Bytes body;
          if (rng() % 2) body = call(rng(), 0x20000000u + rng() % 1000, 1, rng() % 8);
          const std::size_t n = 8 + rng() % 2048;
          for (std::size_t k = 0; k < n; ++k) body.push_back(static_cast<std::uint8_t>(rng()));
          const Bytes rec = framed(body);
          out.insert(out.end(), rec.begin(), rec.end());
          ++records;
        }
      }
      const ssize_t n = ::send(p.fd, out.data(), out.size(), MSG_NOSIGNAL);
      if (n > 0) out.erase(out.begin(), out.begin() + n);
    }
  }
  for (int fd : fds) ::close(fd);
  std::printf("{\"garbage_records\":%llu}\n", static_cast<unsigned long long>(records));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (argc < 2) throw std::invalid_argument("missing mode");
    o.mode = argv[1];
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(a + ": missing value");
      const std::string v = argv[++i];
      if (a == "--port") o.port = static_cast<std::uint16_t>(std::stoul(v));
      else if (a == "--file") o.file = v;
      else if (a == "--connections") o.connections = static_cast<unsigned>(std::stoul(v));
      else if (a == "--reads") o.reads = static_cast<unsigned>(std::stoul(v));
      else if (a == "--size") o.size = static_cast<std::uint32_t>(std::stoul(v));
      else if (a == "--hold") o.hold = std::stod(v);
      else if (a == "--duration") o.duration = std::stod(v);
      else if (a == "--rate") o.rate = std::stoull(v);
      else throw std::invalid_argument("unknown option " + a);
    }
    if (o.port == 0) throw std::invalid_argument("--port is required");
    if (o.hold > 600 || o.duration > 600) throw std::invalid_argument("--hold and --duration: at most 600 s");
    if (o.connections > 10000 || o.reads > 1024) throw std::invalid_argument("at most 10000 connections, 1024 reads");
    rlimit r{};
    if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
      r.rlim_cur = r.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &r);
    }
    if (o.mode == "hold") return run_hold(o);
    if (o.mode == "slow") return run_slow(o);
    if (o.mode == "garbage") return run_garbage(o);
    throw std::invalid_argument("unknown mode " + o.mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nfsgw-hostile: %s\n(see the comment at the top of tools/hostile-clients/main.cpp)\n", e.what());
    return 2;
  }
}
