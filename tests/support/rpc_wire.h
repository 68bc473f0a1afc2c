// Hand-built ONC RPC bytes and a blocking loopback TCP socket, for feeding nfsgw
// malformed input. Deliberately independent of nfsgw's own protocol/ codec, so a
// bug there cannot hide itself in the test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace integ {

/// Big-endian XDR appender.
struct XdrOut {
  std::vector<std::uint8_t> bytes;
  XdrOut& u32(std::uint32_t v);
  XdrOut& u64(std::uint64_t v);
  XdrOut& opaque(const std::vector<std::uint8_t>& data);  // length-prefixed, padded
  XdrOut& string(const std::string& s);
};

/// A CALL header (xid, rpcvers 2, prog, vers, proc) with AUTH_SYS uid/gid 0 and an
/// AUTH_NONE verifier; procedure arguments are appended by the caller.
XdrOut rpc_call(std::uint32_t xid, std::uint32_t prog, std::uint32_t vers, std::uint32_t proc);

/// Prefixes a single last-fragment record marker.
std::vector<std::uint8_t> record(const std::vector<std::uint8_t>& body);

struct ParsedReply {
  std::uint32_t xid = 0;
  std::uint32_t msg_type = 0;      // 1 = REPLY
  std::uint32_t reply_stat = 0;    // 0 = MSG_ACCEPTED, 1 = MSG_DENIED
  std::uint32_t accept_stat = 0;   // when accepted
  std::uint32_t low = 0, high = 0; // PROG_MISMATCH range
  std::vector<std::uint8_t> results;  // bytes after accept_stat (SUCCESS) or mismatch info
  bool ok = false;                 // false when the bytes are not a well-formed reply
};
ParsedReply parse_reply(const std::vector<std::uint8_t>& body);

class TcpConn {
 public:
  /// Connects to 127.0.0.1:port; check connected().
  explicit TcpConn(std::uint16_t port);
  ~TcpConn();
  TcpConn(const TcpConn&) = delete;
  TcpConn& operator=(const TcpConn&) = delete;
  bool connected() const { return fd_ >= 0; }
  bool send_all(const std::vector<std::uint8_t>& bytes);
  /// Reads one whole record (all fragments) within `timeout_ms`; nullopt on EOF,
  /// error or timeout (see closed() to tell EOF apart).
  std::optional<std::vector<std::uint8_t>> read_record(int timeout_ms);
  /// True when the peer has closed (EOF or reset) within `timeout_ms`.
  bool wait_closed(int timeout_ms);
  bool closed() const { return closed_; }

 private:
  bool read_exact(std::uint8_t* out, std::size_t n, int timeout_ms);
  int fd_ = -1;
  bool closed_ = false;
};

}  // namespace integ
