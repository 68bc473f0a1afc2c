// ClientNlm (client_nlm.h): NLM4 GRANTED to a client's lock manager, over TCP,
// with protocol/'s RPC and NLM codecs.
#include "gateway/upstream/client_nlm.h"

#include <memory>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include "protocol/nlm4_types.h"
#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace client_nlm_cpp {

constexpr std::uint32_t kPmapProgram = 100000;
constexpr std::uint32_t kPmapVersion = 2;
constexpr std::uint32_t kPmapGetport = 3;
constexpr std::uint32_t kIpprotoTcp = 6;
constexpr std::uint16_t kRpcbindPort = 111;
constexpr std::size_t kMaxReply = 64 * 1024;

using Strand = asio::strand<asio::io_context::executor_type>;

/// One call's connection, closed by its deadline when that comes first.
struct Exchange {
  explicit Exchange(const Strand& s) : socket(s), deadline(s) {}
  tcp::socket socket;
  asio::steady_timer deadline;
};

/// A whole call record (the record mark in front).
std::vector<std::uint8_t> call_record(std::uint32_t xid, std::uint32_t prog, std::uint32_t vers,
                                      std::uint32_t proc, const std::vector<std::uint8_t>& args) {
  std::vector<std::uint8_t> out(4);
  xdr::Writer w(out);
  rpc::CallHeader h;
  h.xid = xid;
  h.prog = prog;
  h.vers = vers;
  h.proc = proc;
  rpc::encode_call_header(w, h);
  out.insert(out.end(), args.begin(), args.end());
  rpc::write_record_header(out.data(), static_cast<std::uint32_t>(out.size() - 4));
  return out;
}

/// Sends one call on `ex` (connected) and reads its reply record: the result's
/// bytes when accepted with SUCCESS, nullopt otherwise. Throws on I/O errors.
Awaitable<std::optional<std::vector<std::uint8_t>>> call(Exchange& ex, std::uint32_t xid, std::uint32_t prog,
                                                         std::uint32_t vers, std::uint32_t proc,
                                                         std::vector<std::uint8_t> args) {
  const std::vector<std::uint8_t> rec = call_record(xid, prog, vers, proc, args);
  co_await asio::async_write(ex.socket, asio::buffer(rec), asio::use_awaitable);
  std::vector<std::uint8_t> body;
  for (int fragments = 0; fragments < 64; ++fragments) {
    std::uint8_t mark[4];
    co_await asio::async_read(ex.socket, asio::buffer(mark), asio::use_awaitable);
    const std::uint32_t m = (std::uint32_t{mark[0]} << 24) | (std::uint32_t{mark[1]} << 16) |
                            (std::uint32_t{mark[2]} << 8) | mark[3];
    const std::size_t len = m & ~rpc::kLastFragmentBit;
    if (body.size() + len > kMaxReply) co_return std::nullopt;
    const std::size_t at = body.size();
    body.resize(at + len);
    co_await asio::async_read(ex.socket, asio::buffer(body.data() + at, len), asio::use_awaitable);
    if ((m & rpc::kLastFragmentBit) != 0) break;
  }
  try {
    xdr::Reader r(body);
    const rpc::ReplyHeader h = rpc::decode_reply_header(r);
    if (h.xid != xid || h.stat != rpc::ReplyStat::Accepted || h.accept != rpc::AcceptStat::Success)
      co_return std::nullopt;
    const auto rest = r.rest();
    co_return std::vector<std::uint8_t>(rest.begin(), rest.end());
  } catch (const xdr::DecodeError&) {
    co_return std::nullopt;
  }
}

/// Connects `ex` to address:port.
Awaitable<void> connect(Exchange& ex, const asio::ip::address& address, std::uint16_t port) {
  if (ex.socket.is_open()) {
    boost::system::error_code ignored;
    ex.socket.close(ignored);
  }
  co_await ex.socket.async_connect(tcp::endpoint(address, port), asio::use_awaitable);
}

/// The whole GRANTED call, on `strand`, ended by its deadline. Why it failed in `why`.
Awaitable<bool> granted_on(Strand strand, std::string client, std::uint16_t port, std::chrono::milliseconds timeout,
                           std::uint32_t xid, nlm4::TestArgs args) {
  auto ex = std::make_shared<Exchange>(strand);
  ex->deadline.expires_after(timeout);
  ex->deadline.async_wait([ex](const boost::system::error_code& ec) {
    if (ec) return;
    boost::system::error_code ignored;
    ex->socket.close(ignored);
  });
  std::string why;
  bool ok = false;
  try {
    const asio::ip::address address = asio::ip::make_address(client);
    if (port == 0) {
      auto to_rpcbind = connect(*ex, address, kRpcbindPort);
      co_await std::move(to_rpcbind);
      std::vector<std::uint8_t> q;
      xdr::Writer w(q);
      w.u32(nlm4::kProgram);
      w.u32(nlm4::kVersion);
      w.u32(kIpprotoTcp);
      w.u32(0);
      auto getport = call(*ex, xid ^ 0x5a5a5a5au, kPmapProgram, kPmapVersion, kPmapGetport, std::move(q));
      auto res = co_await std::move(getport);
      if (res && res->size() >= 4) {
        xdr::Reader r(*res);
        port = static_cast<std::uint16_t>(r.u32());
      }
      if (port == 0) why = "no NLM v4 over TCP at its rpcbind";
    }
    if (port != 0) {
      auto to_nlm = connect(*ex, address, port);
      co_await std::move(to_nlm);
      std::vector<std::uint8_t> a;
      xdr::Writer w(a);
      nlm4::encode(w, args);
      auto granted = call(*ex, xid, nlm4::kProgram, nlm4::kVersion,
                          static_cast<std::uint32_t>(nlm4::Proc::Granted), std::move(a));
      auto res = co_await std::move(granted);
      if (!res) {
        why = "its NLM refused the call";
      } else {
        xdr::Reader r(*res);
        nlm4::Res out;
        nlm4::decode(r, out);
        ok = out.stat == nlm4::Stat::Granted;
        if (!ok) why = std::string("answered ") + nlm4::name(out.stat);
      }
    }
  } catch (const std::exception& e) {
    why = ex->deadline.expiry() <= std::chrono::steady_clock::now() ? "no answer within " +
                                                                          std::to_string(timeout.count()) + " ms"
                                                                    : e.what();
  }
  ex->deadline.cancel();
  boost::system::error_code ignored;
  ex->socket.close(ignored);
  if (!ok) spdlog::info("NLM_GRANTED to {}: not taken ({})", client, why);
  co_return ok;
}

}  // namespace client_nlm_cpp

ClientNlm::ClientNlm(asio::io_context& io, Options options)
    : io_(io), options_(options), xid_(std::random_device{}()) {}

Awaitable<bool> ClientNlm::granted(std::string client_address, nlm4::TestArgs args) {
  using namespace client_nlm_cpp;
  if (stopped_) co_return false;
  Strand strand = asio::make_strand(io_);
  // Bound to names first: no temporary inside co_await (GCC 12).
  Awaitable<bool> on_strand =
      granted_on(strand, std::move(client_address), options_.port, options_.timeout, xid_++, std::move(args));
  Awaitable<bool> spawned = asio::co_spawn(strand, std::move(on_strand), asio::use_awaitable);
  co_return co_await std::move(spawned);
}

}  // namespace nfsgw::upstream
