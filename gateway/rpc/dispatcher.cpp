#include "gateway/rpc/dispatcher.h"

#include <algorithm>
#include <exception>
#include <optional>

#include <spdlog/spdlog.h>

#include "protocol/record_marking.h"
#include "protocol/rpc_message.h"

namespace nfsgw::rpc {
namespace {

constexpr std::size_t kRecordMark = 4;
/// Room for the reply header and a result with post-op attributes and wcc data.
constexpr std::size_t kTypicalReply = 512;

/// Reads the xid of a record that at least claims to be a CALL.
std::optional<std::uint32_t> call_xid(std::span<const std::uint8_t> record) {
  try {
    xdr::Reader r(record);
    const std::uint32_t xid = r.u32();
    if (r.u32() != static_cast<std::uint32_t>(MsgType::Call)) return std::nullopt;
    return xid;
  } catch (const xdr::DecodeError&) {
    return std::nullopt;
  }
}

/// Fills in the credential fields of `ctx`; false when the credential is unusable.
bool take_credential(const CallHeader& h, CallContext& ctx, AuthStat& why) {
  switch (static_cast<AuthFlavor>(h.cred.flavor)) {
    case AuthFlavor::Sys:
      try {
        AuthSys a = decode_auth_sys(h.cred.body);
        ctx.cred.uid = a.uid;
        ctx.cred.gid = a.gid;
        ctx.cred.gids.assign(a.gids.begin(), a.gids.end());  // at most 16: decoded so
        ctx.cred.machine_name = std::move(a.machinename);
        ctx.cred.auth_none = false;
        return true;
      } catch (const xdr::DecodeError&) {
        why = AuthStat::BadCred;
        return false;
      }
    case AuthFlavor::None:
      ctx.cred.auth_none = true;
      return true;
    default:
      // NULL is answered whatever the flavor, so clients can probe.
      if (h.proc == 0) {
        ctx.cred.auth_none = true;
        return true;
      }
      why = AuthStat::TooWeak;
      return false;
  }
}

void finish_record(std::vector<std::uint8_t>& out) {
  write_record_header(out.data(), static_cast<std::uint32_t>(out.size() - kRecordMark));
}

}  // namespace

void Dispatcher::add(ProgramVersion table) { tables_.push_back(std::move(table)); }

Awaitable<std::vector<std::uint8_t>> Dispatcher::dispatch(std::span<const std::uint8_t> record,
                                                          const std::string& peer) const {
  std::vector<std::uint8_t> out(kRecordMark);
  out.reserve(kTypicalReply);  // one allocation for all but READ/READDIR replies
  xdr::Writer w(out);

  const auto xid = call_xid(record);
  if (!xid) co_return std::vector<std::uint8_t>{};

  CallHeader h;
  xdr::Reader r(record);
  try {
    h = decode_call_header(r);
  } catch (const xdr::DecodeError&) {
    encode_accepted_reply(w, *xid, AcceptStat::GarbageArgs);
    finish_record(out);
    co_return out;
  }
  if (h.rpcvers != kRpcVersion) {
    encode_rpc_mismatch(w, h.xid);
    finish_record(out);
    co_return out;
  }

  const ProgramVersion* table = nullptr;
  std::uint32_t low = UINT32_MAX, high = 0;
  for (const auto& t : tables_) {
    if (t.prog != h.prog) continue;
    low = std::min(low, t.vers);
    high = std::max(high, t.vers);
    if (t.vers == h.vers) table = &t;
  }
  if (high == 0) {
    encode_accepted_reply(w, h.xid, AcceptStat::ProgUnavail);
  } else if (!table) {
    encode_prog_mismatch(w, h.xid, low, high);
  } else if (h.proc >= table->procedures.size() || !table->procedures[h.proc].handler) {
    encode_accepted_reply(w, h.xid, AcceptStat::ProcUnavail);
  } else {
    const Procedure& proc = table->procedures[h.proc];
    CallContext ctx;
    ctx.xid = h.xid;
    ctx.client_address = peer;
    ctx.proc_flags = proc.flags;
    AuthStat why = AuthStat::Ok;
    if (!take_credential(h, ctx, why)) {
      encode_auth_error(w, h.xid, why);
    } else {
      encode_accepted_reply(w, h.xid, AcceptStat::Success);
      // A hit answered at once costs no coroutine frame (procedure_table.h).
      bool answered = false;
      if (proc.now) {
        const std::size_t header_end = out.size();
        try {
          answered = proc.now(ctx, r, w);
        } catch (const std::exception&) {
          out.resize(header_end);  // the handler below tries again, and reports
        }
      }
      Outcome outcome = answered ? Outcome::Success : Outcome::SystemErr;
      if (!answered) {
        try {
          outcome = co_await proc.handler(ctx, r, w);
        } catch (const std::exception& e) {
          spdlog::error("{} from {} (xid {:#x}) failed: {}", proc.name, peer, h.xid, e.what());
        }
      }
      if (outcome != Outcome::Success) {
        out.resize(kRecordMark);
        encode_accepted_reply(w, h.xid, outcome == Outcome::GarbageArgs
                                            ? AcceptStat::GarbageArgs
                                            : AcceptStat::SystemErr);
      }
    }
  }
  finish_record(out);
  co_return out;
}

}  // namespace nfsgw::rpc
