// One relayed TCP connection: the accepted client socket, the socket to the target,
// and a Pipe per direction that reads, observes (RPC counting), delays and writes.
//
// Zero-delay fast path: when a direction has no delay and no bandwidth cap and its
// delay line is empty, a read buffer is written straight out (no copy, no timer) and
// the next read starts when the write completes. Otherwise each chunk is copied into
// the DelayLine stamped with arrival (+ shaping) + delay, reading continues at once,
// and one steady_timer per direction releases due chunks in order, coalesced into a
// single gathered write. Delay therefore never accumulates across chunks.
#pragma once

#include <utility>  // must precede Asio with Boost 1.74 under C++20

#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "tools/wan-emu/delay_line.h"
#include "tools/wan-emu/link_state.h"
#include "tools/wan-emu/rpc_stream_parser.h"
#include "tools/wan-emu/xid_tracker.h"

namespace nfsgw::wanemu {

class RelaySession : public std::enable_shared_from_this<RelaySession> {
 public:
  using tcp = boost::asio::ip::tcp;

  /// Holds the link state alive: io handlers may outlive the Emulator at shutdown.
  RelaySession(tcp::socket client, std::shared_ptr<LinkState> link);
  ~RelaySession();
  RelaySession(const RelaySession&) = delete;
  RelaySession& operator=(const RelaySession&) = delete;

  /// Connects to `target`, then relays until either side closes or close() is called.
  void start(const tcp::endpoint& target);
  /// Drops both connections at once (used by `cut`). Idempotent.
  void close();

 private:
  static constexpr std::size_t kReadBytes = 64 * 1024;

  struct Pipe {
    Pipe(tcp::socket& s, tcp::socket& d, Direction dir, boost::asio::any_io_executor ex)
        : src(s), dst(d), dir(dir), timer(ex) {}
    tcp::socket& src;
    tcp::socket& dst;
    Direction dir;
    RpcStreamParser parser;
    DelayLine line;
    boost::asio::steady_timer timer;
    std::array<std::uint8_t, kReadBytes> buf{};
    std::vector<std::vector<std::uint8_t>> inflight;  // chunks being written
    bool writing = false;
    bool timer_armed = false;
    bool read_paused = false;
    bool eof = false;        // src finished sending
    bool shut = false;       // dst's sending side has been shut down
    std::uint64_t seen_unparsed = 0;
    std::uint64_t seen_short = 0;
  };

  void read(Pipe& p);
  void on_read(Pipe& p, const boost::system::error_code& ec, std::size_t n);
  void observe(Pipe& p, std::size_t n);
  void pump(Pipe& p);
  void finish_if_drained(Pipe& p);
  void shut_down(bool reset);

  std::shared_ptr<LinkState> link_holder_;
  LinkState& link_;
  tcp::socket client_;
  tcp::socket target_;
  Pipe up_;
  Pipe down_;
  XidTracker calls_[2];  // calls seen travelling in each direction
  std::vector<RpcMessageInfo> events_;
  bool closed_ = false;
};

}  // namespace nfsgw::wanemu
