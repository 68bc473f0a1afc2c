// raw_rpc_call (raw_rpc_call.h): one RPC call per TCP connection, with protocol/'s
// RPC header and record-marking codecs.
#include "gateway/upstream/raw_rpc_call.h"

#include <atomic>
#include <memory>
#include <stdexcept>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"
#include "protocol/xdr.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlm::Outcome;

namespace raw_rpc_call_cpp {

constexpr std::uint32_t kPmapProgram = 100000;
constexpr std::uint32_t kPmapVersion = 2;
constexpr std::uint32_t kPmapGetport = 3;
constexpr std::uint32_t kIpprotoTcp = 6;
constexpr std::uint16_t kRpcbindPort = 111;
constexpr std::size_t kMaxReply = 64 * 1024;

using Strand = asio::strand<asio::io_context::executor_type>;

/// One call's connection (and name resolution), ended by its deadline when that
/// comes first.
struct Exchange {
  explicit Exchange(const Strand& s) : socket(s), resolver(s), deadline(s) {}
  tcp::socket socket;
  tcp::resolver resolver;
  asio::steady_timer deadline;
  bool expired = false;
};

rpc::OpaqueAuth auth_of(const std::optional<Credentials>& cred) {
  rpc::OpaqueAuth a;
  if (!cred) return a;
  rpc::AuthSys s;
  s.machinename = cred->machine_name.substr(0, rpc::kMaxMachineName);
  if (s.machinename.empty()) s.machinename = "nfsgw";
  s.uid = cred->uid;
  s.gid = cred->gid;
  s.gids.assign(cred->gids.begin(), cred->gids.end());
  a.flavor = static_cast<std::uint32_t>(rpc::AuthFlavor::Sys);
  a.body = rpc::encode_auth_sys(s);
  return a;
}

/// A whole call record (the record mark in front).
std::vector<std::uint8_t> call_record(std::uint32_t xid, std::uint32_t prog, std::uint32_t vers,
                                      std::uint32_t proc, const rpc::OpaqueAuth& auth,
                                      const std::vector<std::uint8_t>& args) {
  std::vector<std::uint8_t> out(4);
  xdr::Writer w(out);
  rpc::CallHeader h;
  h.xid = xid;
  h.prog = prog;
  h.vers = vers;
  h.proc = proc;
  h.cred = auth;
  rpc::encode_call_header(w, h);
  out.insert(out.end(), args.begin(), args.end());
  rpc::write_record_header(out.data(), static_cast<std::uint32_t>(out.size() - 4));
  return out;
}

/// Reads one reply record from `ex` (connected). Throws on I/O errors; nullopt
/// when it is past kMaxReply.
Awaitable<std::optional<std::vector<std::uint8_t>>> read_record(Exchange& ex) {
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
    if ((m & rpc::kLastFragmentBit) != 0) co_return body;
  }
  co_return std::nullopt;
}

/// Sends one call on `ex` (connected) and reads its reply. Throws on I/O errors.
Awaitable<RawReply> exchange(Exchange& ex, std::uint32_t xid, std::uint32_t prog, std::uint32_t vers,
                             std::uint32_t proc, const rpc::OpaqueAuth& auth, const std::vector<std::uint8_t>& args,
                             bool want_reply) {
  const std::vector<std::uint8_t> rec = call_record(xid, prog, vers, proc, auth, args);
  co_await asio::async_write(ex.socket, asio::buffer(rec), asio::use_awaitable);
  RawReply out;
  if (!want_reply) {
    out.outcome = Outcome::Answered;
    co_return out;
  }
  out.outcome = Outcome::NoAnswer;
  std::optional<std::vector<std::uint8_t>> body;
  try {
    auto read = read_record(ex);
    body = co_await std::move(read);
  } catch (const std::exception& e) {
    out.error = ex.expired ? "no answer in time" : std::string("connection lost: ") + e.what();
    co_return out;
  }
  if (!body) {
    out.error = "reply past 64 KiB";
    co_return out;
  }
  try {
    xdr::Reader r(*body);
    const rpc::ReplyHeader h = rpc::decode_reply_header(r);
    if (h.xid != xid) {
      out.error = "reply to another call";
    } else if (h.stat != rpc::ReplyStat::Accepted) {
      out.outcome = Outcome::Unreachable;
      out.error = "call refused (RPC denied)";
    } else if (h.accept != rpc::AcceptStat::Success) {
      // SYSTEM_ERR may have acted; every other refusal never ran.
      out.outcome = h.accept == rpc::AcceptStat::SystemErr ? Outcome::NoAnswer : Outcome::Unreachable;
      out.error = "call refused (accept_stat " + std::to_string(static_cast<std::uint32_t>(h.accept)) + ")";
    } else {
      const auto rest = r.rest();
      out.outcome = Outcome::Answered;
      out.result.assign(rest.begin(), rest.end());
    }
  } catch (const xdr::DecodeError&) {
    out.error = "reply does not decode";
  }
  co_return out;
}

/// Connects `ex` to address:port (a new socket each time).
Awaitable<void> connect(Exchange& ex, const asio::ip::address& address, std::uint16_t port) {
  if (ex.socket.is_open()) {
    boost::system::error_code ignored;
    ex.socket.close(ignored);
  }
  co_await ex.socket.async_connect(tcp::endpoint(address, port), asio::use_awaitable);
}

/// The whole call, on `strand`, ended by its deadline.
Awaitable<RawReply> run_on(Strand strand, RawCall c, std::uint32_t xid) {
  auto ex = std::make_shared<Exchange>(strand);
  ex->deadline.expires_after(c.timeout);
  ex->deadline.async_wait([ex](const boost::system::error_code& ec) {
    if (ec) return;
    ex->expired = true;
    boost::system::error_code ignored;
    ex->resolver.cancel();
    ex->socket.close(ignored);
  });
  const rpc::OpaqueAuth auth = auth_of(c.cred);
  RawReply out;
  out.error = "not sent";
  std::uint16_t port = c.port;
  try {
    boost::system::error_code ec;
    asio::ip::address address = asio::ip::make_address(c.host, ec);
    if (ec) {
      auto resolve = ex->resolver.async_resolve(c.host, "", asio::use_awaitable);
      auto found = co_await std::move(resolve);
      if (found.empty()) throw std::runtime_error("no address for " + c.host);
      address = found.begin()->endpoint().address();
    }
    if (port == 0) {
      auto to_rpcbind = connect(*ex, address, kRpcbindPort);
      co_await std::move(to_rpcbind);
      std::vector<std::uint8_t> q;
      xdr::Writer w(q);
      w.u32(c.prog);
      w.u32(c.vers);
      w.u32(kIpprotoTcp);
      w.u32(0);
      const rpc::OpaqueAuth none;  // named: the coroutine keeps a reference to it
      auto getport = exchange(*ex, xid ^ 0x5a5a5a5au, kPmapProgram, kPmapVersion, kPmapGetport, none, q, true);
      const RawReply res = co_await std::move(getport);
      if (res.outcome == Outcome::Answered && res.result.size() >= 4) {
        xdr::Reader r(res.result);
        port = static_cast<std::uint16_t>(r.u32());
      }
      if (port == 0) {
        out.error = "no TCP port for program " + std::to_string(c.prog) + " v" + std::to_string(c.vers) +
                    " at its rpcbind" + (res.error.empty() ? "" : " (" + res.error + ")");
      }
    }
    if (port != 0) {
      auto to_program = connect(*ex, address, port);
      co_await std::move(to_program);
      auto call = exchange(*ex, xid, c.prog, c.vers, c.proc, auth, c.args, c.want_reply);
      out = co_await std::move(call);
    }
  } catch (const std::exception& e) {
    // Only what comes before the call's record is written throws here: not sent.
    out.outcome = Outcome::Unreachable;
    out.error = ex->expired ? "not sent within " + std::to_string(c.timeout.count()) + " ms" : e.what();
  }
  if (out.outcome == Outcome::NoAnswer && ex->expired) {
    out.error = "no answer within " + std::to_string(c.timeout.count()) + " ms";
  }
  ex->deadline.cancel();
  boost::system::error_code ignored;
  ex->socket.close(ignored);
  co_return out;
}

}  // namespace raw_rpc_call_cpp

Awaitable<RawReply> raw_rpc_call(asio::io_context& io, RawCall call) {
  using namespace raw_rpc_call_cpp;
  static std::atomic<std::uint32_t> next_xid{static_cast<std::uint32_t>(
      std::chrono::steady_clock::now().time_since_epoch().count())};
  Strand strand = asio::make_strand(io);
  // Bound to names first: no temporary inside co_await (GCC 12).
  Awaitable<RawReply> on_strand = run_on(strand, std::move(call), next_xid++);
  Awaitable<RawReply> spawned = asio::co_spawn(strand, std::move(on_strand), asio::use_awaitable);
  co_return co_await std::move(spawned);
}

}  // namespace nfsgw::upstream
