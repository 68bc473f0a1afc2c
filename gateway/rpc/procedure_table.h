// One dispatch table per RPC program version: procedure number -> name, flags and a
// typed handler. Everything generic about a call (auth, argument decoding errors,
// the reply header, stats to come) follows from the table, not from the handlers.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

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
};

/// Decodes the arguments from `args`, runs the procedure and encodes its result into
/// `out`. Must not write to `out` unless it returns Outcome::Success.
using Handler = std::function<Awaitable<Outcome>(const CallContext& ctx,
                                                              xdr::Reader& args, xdr::Writer& out)>;

/// The procedure's answer when it can be given at once, without waiting (a cache
/// hit): decodes the arguments from `args` (a copy: the handler decodes them again
/// when this says false), encodes the result into `out` and returns true; returns
/// false, having written nothing, when the call must go to `Handler`.
using NowHandler = std::function<bool(const CallContext& ctx, xdr::Reader args, xdr::Writer& out)>;

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
  Handler handler = nullptr;
  NowHandler now = nullptr;  // optional
  ResultSize result_size = nullptr;  // optional: kSmallResultBytes when absent
};

struct ProgramVersion {
  std::uint32_t prog = 0;
  std::uint32_t vers = 0;
  std::vector<Procedure> procedures;  // indexed by procedure number
};

}  // namespace nfsgw::rpc
