// One dispatch table per RPC program version: procedure number -> name, flags and a
// typed handler. Everything generic about a call (auth, argument decoding errors,
// the reply header, what may be replayed) follows from the table, not from the
// handlers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "cache/answer_basis.h"
#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "gateway/rpc/procedure_flags.h"  // flags::Mutates, flags::Idempotent
#include "protocol/xdr.h"

namespace nfsgw::rpc {

using nfsgw::Awaitable;

/// What became of a call, apart from the procedure's own status.
enum class Outcome {
  Success,      // the result was encoded after the reply header
  GarbageArgs,  // the arguments did not decode
  SystemErr,    // the handler failed unexpectedly
  NoReply,      // nothing is answered: the client sends the call again (an NLM
                // call the origin's lock manager did not answer, nlm_service.h)
};

/// A call's end: its outcome and whether its reply may be sent again to a
/// retransmission of it (duplicate_cache.h). It may not when the result's status
/// is one nfsgw made up (gateway_status) or says "try again later" (JUKEBOX): the
/// retry must then be executed. Decided from the typed result, never from bytes.
struct Finished {
  Outcome outcome = Outcome::SystemErr;
  bool replayable = true;

  Finished(Outcome o, bool may_replay = true) : outcome(o), replayable(may_replay) {}  // NOLINT: from an Outcome
};

/// Decodes the arguments from `args`, runs the procedure and encodes its result into
/// `out`. Must not write to `out` unless it returns Outcome::Success.
using Handler =
    std::function<Awaitable<Finished>(const CallContext& ctx, xdr::Reader& args, xdr::Writer& out)>;

/// How a call began (Procedure::begin): answered at once, its result encoded into
/// `out` (`done`, with what the answer rests on in `basis`), or to be finished by
/// `rest`, the procedure's coroutine with the arguments already decoded.
struct Begun {
  std::optional<Finished> done;
  cache::AnswerBasis basis;
  std::optional<Awaitable<Finished>> rest;
};
/// Decodes the arguments once, asks the program's answer step (nfs3_program.h),
/// and only when it passes, starts the coroutine. Writes nothing to `out` unless
/// the call was answered with Outcome::Success.
using Begin = std::function<Begun(const CallContext& ctx, xdr::Reader& args, xdr::Writer& out)>;

/// The most bytes the call's result can take, read from its arguments (a READ's
/// count), so that a connection can reserve the reply's memory before the call runs
/// (server/connection.h). Returns 0 when the arguments do not tell (they do not
/// decode: the call will get GARBAGE_ARGS). Procedures without one are expected to
/// answer within kSmallResultBytes.
using ResultSize = std::size_t (*)(xdr::Reader args);
constexpr std::size_t kSmallResultBytes = 1024;

/// Called by a handler once it decoded the arguments: bytes left after them are
/// refused (xdr::DecodeError, so GARBAGE_ARGS), so that a small call cannot pin a
/// large record while it waits. A record may end right after the arguments; the
/// credential and verifier are in the call header, before them.
inline void expect_end_of_args(const xdr::Reader& args) {
  if (args.remaining() != 0) throw xdr::DecodeError("bytes after the procedure's arguments");
}

struct Procedure {
  const char* name = nullptr;  // nullptr: no such procedure
  std::uint32_t flags = 0;
  Handler handler = nullptr;  // a procedure without an answer step (MOUNT)
  Begin begin = nullptr;      // a procedure with one (NFS): used instead of `handler`
  ResultSize result_size = nullptr;  // optional: kSmallResultBytes when absent
  /// Its answers given at once may be kept (answer_memo.h) although its results
  /// can be large (a READ of a small file): only the ones that fit are. Procedures
  /// without a ResultSize always may; others (listings) never are.
  bool kept_when_small = false;
};

struct ProgramVersion {
  std::uint32_t prog = 0;
  std::uint32_t vers = 0;
  std::vector<Procedure> procedures;  // indexed by procedure number
};

}  // namespace nfsgw::rpc
