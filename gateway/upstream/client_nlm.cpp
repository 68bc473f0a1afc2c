// ClientNlm (client_nlm.h): NLM v4 calls to a client's lock manager, over TCP,
// with protocol/'s NLM codecs and raw_rpc_call.
#include "gateway/upstream/client_nlm.h"

#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/nlm4_types.h"
#include "protocol/xdr.h"

namespace nfsgw::upstream {

namespace asio = boost::asio;

ClientNlm::ClientNlm(asio::io_context& io, Options options) : io_(io), options_(options) {}

Awaitable<RawReply> ClientNlm::call(std::string client_address, nlm4::Proc proc, std::vector<std::uint8_t> args,
                                    bool want_reply) {
  RawCall c;
  c.host = std::move(client_address);
  c.port = options_.port;
  c.prog = nlm4::kProgram;
  c.vers = nlm4::kVersion;
  c.proc = static_cast<std::uint32_t>(proc);
  c.args = std::move(args);
  c.timeout = options_.timeout;
  c.want_reply = want_reply;
  // Bound to a name first: no temporary inside co_await (GCC 12).
  Awaitable<RawReply> sent = raw_rpc_call(io_, std::move(c));
  co_return co_await std::move(sent);
}

Awaitable<bool> ClientNlm::granted(std::string client_address, nlm4::TestArgs args) {
  if (stopped_) co_return false;
  std::vector<std::uint8_t> a;
  xdr::Writer w(a);
  nlm4::encode(w, args);
  Awaitable<RawReply> sent = call(client_address, nlm4::Proc::Granted, std::move(a));
  const RawReply r = co_await std::move(sent);
  std::string why = r.error;
  bool ok = false;
  if (r.outcome == nlm::Outcome::Answered) {
    try {
      xdr::Reader rd(r.result);
      nlm4::Res out;
      nlm4::decode(rd, out);
      ok = out.stat == nlm4::Stat::Granted;
      if (!ok) why = std::string("answered ") + nlm4::name(out.stat);
    } catch (const xdr::DecodeError&) {
      why = "its answer does not decode";
    }
  }
  if (!ok) spdlog::info("NLM_GRANTED to {}: not taken ({})", client_address, why);
  co_return ok;
}

Awaitable<bool> ClientNlm::send_result(std::string client_address, nlm4::Proc proc, std::vector<std::uint8_t> args) {
  const char* name = nlm4::name(proc);
  if (stopped_) co_return false;
  if (results_in_flight_.fetch_add(1) >= options_.max_results) {
    results_in_flight_.fetch_sub(1);
    spdlog::warn("NLM {} to {}: not sent ({} in flight already; the client asks again)", name ? name : "?",
                 client_address, options_.max_results);
    co_return false;
  }
  Awaitable<RawReply> sent = call(client_address, proc, std::move(args), /*want_reply=*/false);
  const RawReply r = co_await std::move(sent);
  results_in_flight_.fetch_sub(1);
  if (r.outcome != nlm::Outcome::Answered) {
    spdlog::info("NLM {} to {}: not sent ({})", name ? name : "?", client_address, r.error);
    co_return false;
  }
  co_return true;
}

}  // namespace nfsgw::upstream
