// A stand-in origin for the pool's timeout tests: a loopback TCP server that
// answers ONC RPC calls with a bare success (enough for NFS NULL), or holds them
// like a frozen origin (the process stuck, its TCP connections open), or answers
// them one at a time like a slow one. A fake, so for upstream unit tests only: the
// integration tests freeze a real nfs-ganesha (tests/integration/frozen_origin_test).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace nfsgw::upstream::test {

class FakeOrigin {
 public:
  enum class Mode { Answer, Frozen, Slow, Stuck, Drop };

  /// Listens on 127.0.0.1 (an ephemeral port) and serves on its own thread.
  FakeOrigin();
  ~FakeOrigin();
  FakeOrigin(const FakeOrigin&) = delete;
  FakeOrigin& operator=(const FakeOrigin&) = delete;

  std::uint16_t port() const { return port_; }
  /// Frozen: calls are read and held. Answer: held calls on connections still
  /// open are answered, and new ones at once. Slow: one held call answered every
  /// `slow_interval`, oldest first. Stuck: nothing is read any more (a process
  /// stopped with SIGSTOP: its kernel takes bytes until the socket buffers fill).
  /// Drop: open connections are closed, and new ones accepted and closed at once
  /// (a relay in front of an origin it cannot reach).
  void set_mode(Mode m, std::chrono::milliseconds slow_interval = std::chrono::milliseconds(100));

  /// Connections accepted so far.
  int connections() const { return connections_.load(); }
  /// Calls received so far (re-sent ones count again).
  int calls() const { return calls_.load(); }
  /// Peer (client-side) ports of the connections accepted so far.
  std::vector<std::uint16_t> peer_ports() const;

 private:
  struct Conn {
    int fd = -1;
    std::vector<std::uint8_t> in;
    std::vector<std::uint32_t> held;  // xids not answered yet
  };
  void run();
  void read_from(Conn& c);
  void answer(Conn& c, std::uint32_t xid);

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> calls_{0};
  mutable std::mutex mu_;
  Mode mode_ = Mode::Answer;
  std::chrono::milliseconds slow_interval_{100};
  std::vector<std::uint16_t> peer_ports_;
  std::thread thread_;
};

}  // namespace nfsgw::upstream::test
