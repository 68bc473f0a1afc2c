// Routes one RPC record to its procedure and builds the reply record.
//
// The dispatcher owns everything generic about ONC RPC: the call header, the
// credential, PROG_UNAVAIL / PROG_MISMATCH / PROC_UNAVAIL, GARBAGE_ARGS for
// arguments that do not decode, SYSTEM_ERR for a handler that failed. Handlers only
// see typed arguments and return typed results.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gateway/rpc/answer_memo.h"
#include "gateway/rpc/duplicate_cache.h"
#include "gateway/rpc/procedure_table.h"
#include "protocol/rpc_message.h"

namespace nfsgw::rpc {

/// A reply record as it is written: `bytes` (record mark, reply header and result),
/// then, for a READ, its data kept in the buffer it was read into (never copied),
/// then the data's XDR padding. Empty when nothing may be answered.
struct ReplyRecord {
  std::vector<std::uint8_t> bytes;
  nfs3::Payload data;

  bool empty() const { return bytes.empty(); }
  /// Bytes on the wire, record mark included.
  std::size_t size() const { return bytes.size() + data.size() + xdr::padding(data.size()); }
  /// The whole record in one buffer (tests; a cache of replies).
  std::vector<std::uint8_t> flat() const;
};

class Dispatcher {
 public:
  void add(ProgramVersion table);
  /// Answers retransmitted calls of procedures that change the file system
  /// (flags::Mutates) from `cache` (duplicate_cache.h); it must outlive the
  /// dispatcher. Without one, every call is executed.
  void use_duplicate_cache(DuplicateCache* cache) { duplicates_ = cache; }
  /// Keeps copies of answers given at once (answer_memo.h). On by default.
  void use_answer_memo(bool on) { memo_on_ = on; }
  /// Voids every kept answer: the configuration changed (a reload).
  void forget_answers() { memo_.forget_all(); }

  /// Handles one call record. Returns the reply as a complete record (record mark
  /// included, ready to write), or an empty one when nothing may be answered (not
  /// a call, or too short to carry an xid).
  /// `record` must stay valid until the returned awaitable completes; `peer` (the
  /// client's address) is copied. `caller_gone`, when given, is the connection's
  /// flag (CallContext::caller_gone): it must be owned by a shared_ptr and outlive
  /// the call.
  Awaitable<ReplyRecord> dispatch(std::span<const std::uint8_t> record, std::string peer,
                                  const CallerGone* caller_gone = nullptr) const;

  /// What a connection needs to know of a call before it runs it, read from the
  /// record without running it. Never throws.
  struct Preview {
    /// The most bytes the reply is expected to take (record mark and header
    /// included): a READ's count plus room for its attributes, a small constant
    /// for most procedures. A connection reserves this much before the call runs.
    std::size_t reply_bytes = 0;
    /// A CALL to a program, version and procedure of these tables. False for
    /// records that get no answer or an RPC-level refusal (PROG_UNAVAIL and the
    /// like): a connection may slow down a client that sends many of them.
    bool known_procedure = false;
  };
  Preview preview(std::span<const std::uint8_t> record) const;

 private:
  /// Begins a call of a procedure with an answer step (procedure_table.h, Begin):
  /// a kept copy of its answer when the memo has one under `memo_hash`
  /// (answer_memo.h), else the step's answer, kept when its basis allows. Returns
  /// how the call finished when it was answered at once; otherwise nullopt, with
  /// the coroutine that finishes it in `rest`.
  std::optional<Finished> begin(const Procedure& proc, const CallHeader& h, CallContext& ctx, xdr::Reader& args,
                                ReplyRecord& reply, xdr::Writer& w, std::optional<std::size_t> memo_hash,
                                std::optional<Awaitable<Finished>>& rest) const;

  std::vector<ProgramVersion> tables_;
  DuplicateCache* duplicates_ = nullptr;
  AnswerMemo memo_;
  bool memo_on_ = true;
};

}  // namespace nfsgw::rpc
