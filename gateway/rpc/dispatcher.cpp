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

void finish_record(ReplyRecord& reply) {
  write_record_header(reply.bytes.data(), static_cast<std::uint32_t>(reply.size() - kRecordMark));
}

/// Settles a call registered as First in the duplicate cache exactly once, even
/// when the coroutine is destroyed before it answers (its duplicates then get no
/// reply and the client retransmits).
class DuplicateClaim {
 public:
  DuplicateClaim(DuplicateCache* cache, std::string key) : cache_(cache), key_(std::move(key)) {}
  ~DuplicateClaim() {
    if (cache_) cache_->finish(key_, {}, false);
  }
  DuplicateClaim(const DuplicateClaim&) = delete;
  DuplicateClaim& operator=(const DuplicateClaim&) = delete;
  void settle(const std::vector<std::uint8_t>& reply, bool replayable) {
    if (!cache_) return;
    cache_->finish(key_, reply, replayable);
    cache_ = nullptr;
  }

 private:
  DuplicateCache* cache_;
  std::string key_;
};

/// Reply header room: record mark, xid, REPLY, MSG_ACCEPTED, an AUTH_NONE verifier,
/// the accept status (or a mismatch's version range).
constexpr std::size_t kReplyHeader = 64;

}  // namespace

Dispatcher::Preview Dispatcher::preview(std::span<const std::uint8_t> record) const {
  try {
    // The call header, skipped without copying the credential (dispatch() decodes it).
    xdr::Reader r(record);
    r.u32();  // xid
    if (r.u32() != static_cast<std::uint32_t>(MsgType::Call)) return {};  // never answered
    const bool rpc2 = r.u32() == kRpcVersion;
    const std::uint32_t prog = r.u32(), vers = r.u32(), proc = r.u32();
    for (int auth = 0; auth < 2; ++auth) {
      r.u32();  // flavor
      r.opaque_var(kMaxAuthBytes);
    }
    for (const auto& t : tables_) {
      if (t.prog != prog || t.vers != vers || proc >= t.procedures.size()) continue;
      const Procedure& p = t.procedures[proc];
      if (!p.handler && !p.begin) break;
      const std::size_t result = p.result_size ? p.result_size(r) : kSmallResultBytes;
      return {kReplyHeader + std::max(result, kSmallResultBytes), rpc2};
    }
  } catch (const xdr::DecodeError&) {
    // GARBAGE_ARGS or no answer at all: a header's worth.
  }
  return {kReplyHeader, false};
}

std::vector<std::uint8_t> ReplyRecord::flat() const {
  std::vector<std::uint8_t> out;
  out.reserve(size());
  out.insert(out.end(), bytes.begin(), bytes.end());
  out.insert(out.end(), data.begin(), data.end());
  out.resize(size(), 0);  // the data's padding
  return out;
}

void Dispatcher::add(ProgramVersion table) { tables_.push_back(std::move(table)); }

std::optional<Finished> Dispatcher::begin(const Procedure& proc, const CallHeader& h, CallContext& ctx,
                                          xdr::Reader& args, ReplyRecord& reply, xdr::Writer& w,
                                          std::optional<std::size_t> memo_hash,
                                          std::optional<Awaitable<Finished>>& rest) const {
  std::vector<std::uint8_t>& out = reply.bytes;
  const std::size_t header_end = out.size();
  thread_local std::string key;  // no allocation per call once it has grown; no wait below
  std::uint64_t epoch = 0;
  if (memo_hash) {
    // A copy of the same call's answer, while what it rests on holds.
    AnswerMemo::make_key(key, h.prog, h.vers, h.proc, ctx, args.rest());
    const AnswerMemo::Found found = memo_.answer(*memo_hash, key, out);
    if (found == AnswerMemo::Found::Yes) return Finished{Outcome::Success};
    ctx.refresh_records = found == AnswerMemo::Found::Refresh;
    epoch = memo_.epoch();
  }
  Begun begun = proc.begin(ctx, args, w);
  if (!begun.done) {
    rest.emplace(std::move(*begun.rest));
    return std::nullopt;
  }
  // Kept only when the layer that built it vouched for it. A READ's data is apart,
  // in reply.data: kept after the rest of the result (when it all fits), and a
  // copy given again is one flat reply.
  if (memo_hash && begun.done->outcome == Outcome::Success)
    memo_.keep(*memo_hash, key, epoch, std::span<const std::uint8_t>(out).subspan(header_end),
               std::span<const std::uint8_t>(reply.data.data(), reply.data.size()), begun.basis);
  return begun.done;
}

Awaitable<ReplyRecord> Dispatcher::dispatch(std::span<const std::uint8_t> record, std::string peer,
                                            const CallerGone* caller_gone) const {
  const auto xid = call_xid(record);
  if (!xid) co_return ReplyRecord{};

  ReplyRecord reply;
  std::vector<std::uint8_t>& out = reply.bytes;
  out.resize(kRecordMark);
  out.reserve(kTypicalReply);  // one allocation for all but READDIR replies
  xdr::Writer w(out);
  // A READ's data stays in its own buffer (ReplyRecord::data) instead of being copied.
  w.detach_last_opaque_into(&reply.data);

  CallHeader h;
  xdr::Reader r(record);
  try {
    h = decode_call_header(r);
  } catch (const xdr::DecodeError&) {
    encode_accepted_reply(w, *xid, AcceptStat::GarbageArgs);
    finish_record(reply);
    co_return reply;
  }
  if (h.rpcvers != kRpcVersion) {
    encode_rpc_mismatch(w, h.xid);
    finish_record(reply);
    co_return reply;
  }

  std::optional<DuplicateClaim> claim;  // settled with the reply
  bool replayable = true;               // that reply may go to a retransmission
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
  } else if (h.proc >= table->procedures.size() ||
             (!table->procedures[h.proc].handler && !table->procedures[h.proc].begin)) {
    encode_accepted_reply(w, h.xid, AcceptStat::ProcUnavail);
  } else {
    const Procedure& proc = table->procedures[h.proc];
    // Where a kept copy of this call's answer would be (answer_memo.h): its lines
    // load while the credential is decoded.
    std::optional<std::size_t> memo_hash;
    // Only calls that change nothing and whose results are small (no ResultSize:
    // within kSmallResultBytes), or may be (a READ of a small file), can have a
    // kept answer: a listing's would not fit inline, so it pays no key and no probe.
    if (memo_on_ && proc.begin && (proc.flags & flags::Mutates) == 0 &&
        (proc.result_size == nullptr || proc.kept_when_small)) {
      memo_hash = AnswerMemo::call_hash(h.prog, h.vers, h.proc, r.rest());
      memo_.prefetch(*memo_hash);
    }
    CallContext ctx;
    ctx.xid = h.xid;
    ctx.client_address = std::move(peer);  // used below instead of `peer`
    ctx.caller_gone = caller_gone;
    ctx.proc_flags = proc.flags;
    AuthStat why = AuthStat::Ok;
    if (!take_credential(h, ctx, why)) {
      encode_auth_error(w, h.xid, why);
    } else {
      if (duplicates_ != nullptr && (proc.flags & flags::Mutates) != 0) {
        // A retransmission gets the first call's reply (duplicate_cache.h).
        CallIdentity call{ctx.client_address, h.xid, h.prog, h.vers, h.proc, ctx.cred.uid, ctx.cred.gid, r.rest()};
        DuplicateCache::Seen seen = duplicates_->begin(call);
        switch (seen.kind) {
          case DuplicateCache::Seen::Kind::Replay:
            co_return ReplyRecord{std::move(seen.reply), {}};
          case DuplicateCache::Seen::Kind::InFlight: {
            auto first = DuplicateCache::wait(std::move(seen.pending));
            Reply first_reply = co_await std::move(first);
            co_return ReplyRecord{std::move(first_reply), {}};
          }
          case DuplicateCache::Seen::Kind::First:
            claim.emplace(duplicates_, std::move(seen.key));
            break;
          case DuplicateCache::Seen::Kind::Untracked:
            break;
        }
      }
      encode_accepted_reply(w, h.xid, AcceptStat::Success);
      // A hit answered at once costs no coroutine frame (nfs3_program.h).
      Finished finished{Outcome::SystemErr};
      try {
        std::optional<Awaitable<Finished>> rest;
        if (!proc.begin) {
          finished = co_await proc.handler(ctx, r, w);
        } else if (auto done = begin(proc, h, ctx, r, reply, w, memo_hash, rest)) {
          finished = *done;
        } else {
          finished = co_await std::move(*rest);
        }
      } catch (const std::exception& e) {
        spdlog::error("{} from {} (xid {:#x}) failed: {}", proc.name, ctx.client_address, h.xid, e.what());
      }
      if (finished.outcome == Outcome::NoReply) co_return ReplyRecord{};  // a claim settles unreplayable
      if (finished.outcome != Outcome::Success) {
        out.resize(kRecordMark);
        reply.data = {};
        encode_accepted_reply(w, h.xid, finished.outcome == Outcome::GarbageArgs
                                            ? AcceptStat::GarbageArgs
                                            : AcceptStat::SystemErr);
      }
      replayable = finished.outcome != Outcome::SystemErr && finished.replayable;
    }
  }
  finish_record(reply);
  // Only procedures that change the file system are kept, and none of them has
  // detached data (only a READ's is); flat() would hold it all the same.
  if (claim) claim->settle(reply.data.empty() ? reply.bytes : reply.flat(), replayable);
  co_return reply;
}

}  // namespace nfsgw::rpc
