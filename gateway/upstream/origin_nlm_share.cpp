// OriginNlm's SHARE and UNSHARE (origin_nlm.h): raw calls, as libnfs 4.0's NLM
// client has neither. No libnfs header here: protocol/'s codecs only.
#include <string>
#include <utility>

#include "gateway/upstream/origin_nlm.h"
#include "gateway/upstream/raw_rpc_call.h"
#include "protocol/xdr.h"

namespace nfsgw::upstream {

Awaitable<nlm::OriginReply<nlm4::ShareRes>> OriginNlm::share(const Credentials& cred, nlm4::ShareArgs args) {
  return share_call(nlm4::Proc::Share, cred, std::move(args));
}

Awaitable<nlm::OriginReply<nlm4::ShareRes>> OriginNlm::unshare(const Credentials& cred, nlm4::ShareArgs args) {
  return share_call(nlm4::Proc::Unshare, cred, std::move(args));
}

Awaitable<nlm::OriginReply<nlm4::ShareRes>> OriginNlm::share_call(nlm4::Proc proc, Credentials cred,
                                                                  nlm4::ShareArgs args) {
  const std::string what = std::string(nlm4::name(proc)) + " at " + host_;
  nlm::OriginReply<nlm4::ShareRes> out;
  if (stopped_) {
    out.error = what + ": stopped";
    co_return out;
  }
  if (args.share.caller_name.empty()) args.share.caller_name = caller_name_;
  RawCall c;
  c.host = host_;
  c.port = nlm_port_;
  c.prog = nlm4::kProgram;
  c.vers = nlm4::kVersion;
  c.proc = static_cast<std::uint32_t>(proc);
  c.cred = with_machine(cred);
  xdr::Writer w(c.args);
  nlm4::encode(w, args);
  c.timeout = call_timeout_;
  // Bound to a name first: no temporary inside co_await (GCC 12).
  Awaitable<RawReply> sent = raw_rpc_call(io_, std::move(c));
  const RawReply r = co_await std::move(sent);
  out.outcome = r.outcome;
  if (r.outcome != nlm::Outcome::Answered) {
    out.error = what + ": " + r.error;
    co_return out;
  }
  try {
    xdr::Reader rd(r.result);
    nlm4::ShareRes res;
    nlm4::decode(rd, res);
    if (rd.remaining() != 0) throw xdr::DecodeError("bytes after the result");
    out.reply = std::move(res);
  } catch (const xdr::DecodeError& e) {
    out.outcome = nlm::Outcome::NoAnswer;
    out.error = what + ": malformed reply (" + e.what() + ")";
  }
  co_return out;
}

}  // namespace nfsgw::upstream
