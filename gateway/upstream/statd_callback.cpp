// StatdCallback (statd_callback.h): statd's reboot callback over UDP on the loopback.
#include "gateway/upstream/statd_callback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include "gateway/nlm/status_monitor.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;
using asio::ip::udp;

namespace statd_callback_cpp {

constexpr std::uint32_t kPmapProgram = 100000;
constexpr std::uint32_t kPmapSet = 1;
constexpr std::uint32_t kPmapUnset = 2;
constexpr std::uint32_t kIpprotoUdp = 17;
constexpr std::uint32_t kCallbackVersionBase = 0x6e670000u;  // "ng" + the NLM port

}  // namespace statd_callback_cpp

std::uint32_t origin_callback_version(std::uint32_t client_version) { return client_version + 0x10000; }

std::uint32_t callback_version(std::uint16_t nlm_port) {
  return statd_callback_cpp::kCallbackVersionBase | nlm_port;
}

bool pmap_udp(bool set, std::uint32_t prog, std::uint32_t vers, std::uint16_t port) {
  using namespace statd_callback_cpp;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(111);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<std::uint8_t> msg;
  xdr::Writer w(msg);
  rpc::CallHeader h;
  h.xid = static_cast<std::uint32_t>(::getpid()) * 2654435761u + (set ? 1 : 2) + port;
  h.prog = kPmapProgram;
  h.vers = 2;
  h.proc = set ? kPmapSet : kPmapUnset;
  rpc::encode_call_header(w, h);
  w.u32(prog);
  w.u32(vers);
  w.u32(kIpprotoUdp);
  w.u32(port);
  bool answer = false;
  if (::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
      static_cast<ssize_t>(msg.size())) {
    // Other datagrams cannot arrive (nobody knows this socket): one answer, or none.
    std::uint8_t buf[512];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      try {
        xdr::Reader r({buf, static_cast<std::size_t>(n)});
        const rpc::ReplyHeader rh = rpc::decode_reply_header(r);
        answer = rh.xid == h.xid && rh.stat == rpc::ReplyStat::Accepted && rh.accept == rpc::AcceptStat::Success &&
                 r.u32() == 1;
      } catch (const xdr::DecodeError&) {
      }
    }
  }
  ::close(fd);
  return answer;
}

StatdCallback::StatdCallback(asio::io_context& io, std::uint32_t version, OnReboot on_reboot)
    : socket_(asio::make_strand(io)), buf_(8192), version_(version), on_reboot_(std::move(on_reboot)) {
  socket_.open(udp::v4());
  socket_.bind(udp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0));
  port_ = socket_.local_endpoint().port();
}

bool StatdCallback::start() {
  pmap_udp(false, nlm::kCallbackProgram, version_, 0);  // a leftover of a killed run
  pmap_udp(false, nlm::kCallbackProgram, origin_callback_version(version_), 0);
  const bool ok = pmap_udp(true, nlm::kCallbackProgram, version_, port_) &&
                  pmap_udp(true, nlm::kCallbackProgram, origin_callback_version(version_), port_);
  registered_ = ok;
  if (ok) {
    spdlog::info("NLM: statd's callback on UDP 127.0.0.1:{} (program {} version {:#x}, registered with rpcbind)",
                 port_, nlm::kCallbackProgram, version_);
  } else {
    spdlog::error("NLM: rpcbind refused program {} version {:#x} on UDP port {}: statd cannot tell nfsgw that a "
                  "client rebooted (its locks stay held until it unlocks them)",
                  nlm::kCallbackProgram, version_, port_);
  }
  asio::post(socket_.get_executor(), [this] { receive(); });
  return ok;
}

void StatdCallback::stop() {
  if (registered_.exchange(false)) {
    pmap_udp(false, nlm::kCallbackProgram, version_, 0);
    pmap_udp(false, nlm::kCallbackProgram, origin_callback_version(version_), 0);
  }
  // On the socket's strand: a receive's handler may be running on another thread.
  asio::dispatch(socket_.get_executor(), [this] {
    boost::system::error_code ignored;
    socket_.close(ignored);
  });
}

StatdCallback::~StatdCallback() {
  if (registered_.exchange(false)) {
    pmap_udp(false, nlm::kCallbackProgram, version_, 0);
    pmap_udp(false, nlm::kCallbackProgram, origin_callback_version(version_), 0);
  }
  boost::system::error_code ignored;
  socket_.close(ignored);  // the io_context runs no more handlers of it by now
}

void StatdCallback::receive() {  // on the socket's strand
  socket_.async_receive_from(asio::buffer(buf_), from_, [this](const boost::system::error_code& ec, std::size_t n) {
    if (ec == asio::error::operation_aborted || !socket_.is_open()) return;
    if (!ec) serve(n);
    receive();
  });
}

void StatdCallback::serve(std::size_t n) {
  if (!from_.address().is_loopback() || from_.port() >= 1024) {
    spdlog::warn("NLM: statd callback from {}:{} dropped (not a privileged port of this host)",
                 from_.address().to_string(), from_.port());
    return;
  }
  std::vector<std::uint8_t> reply;
  xdr::Writer w(reply);
  std::optional<nsm::Status> reboot;
  nlm::Rebooted who = nlm::Rebooted::ClientHost;
  rpc::CallHeader h;
  try {
    xdr::Reader r({buf_.data(), n});
    h = rpc::decode_call_header(r);
    if (h.prog != nlm::kCallbackProgram) {
      rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::ProgUnavail);
    } else if (h.vers != version_ && h.vers != origin_callback_version(version_)) {
      rpc::encode_prog_mismatch(w, h.xid, version_, origin_callback_version(version_));
    } else if (h.proc == 0) {
      rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
    } else if (h.proc != static_cast<std::uint32_t>(nlm::kCallbackProc)) {
      rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::ProcUnavail);
    } else {
      if (h.vers == origin_callback_version(version_)) who = nlm::Rebooted::Origin;
      nsm::Status st;
      try {
        nsm::decode(r, st);
        if (r.remaining() != 0) throw xdr::DecodeError("bytes after the arguments");
        rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::Success);
        reboot = std::move(st);
      } catch (const xdr::DecodeError&) {
        reply.clear();
        rpc::encode_accepted_reply(w, h.xid, rpc::AcceptStat::GarbageArgs);
      }
    }
  } catch (const xdr::DecodeError&) {
    return;  // not an RPC call: nothing to answer
  }
  boost::system::error_code ignored;
  socket_.send_to(asio::buffer(reply), from_, 0, ignored);
  if (reboot && on_reboot_) on_reboot_(std::move(*reboot), who);
}

}  // namespace nfsgw::upstream
