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

struct Procedure {
  const char* name = nullptr;  // nullptr: no such procedure
  std::uint32_t flags = 0;
  Handler handler = nullptr;
  NowHandler now = nullptr;  // optional
};

struct ProgramVersion {
  std::uint32_t prog = 0;
  std::uint32_t vers = 0;
  std::vector<Procedure> procedures;  // indexed by procedure number
};

}  // namespace nfsgw::rpc
