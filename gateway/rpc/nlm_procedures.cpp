#include "gateway/rpc/nlm_procedures.h"

#include <optional>

namespace nfsgw::rpc {
namespace {

using nlm4::Proc;

/// Decodes `Args` to the end of the record; false when they do not decode.
template <typename Args>
bool decode_all(xdr::Reader& in, Args& args) {
  try {
    nlm4::decode(in, args);
    expect_end_of_args(in);
    return true;
  } catch (const xdr::DecodeError&) {
    return false;
  }
}

/// A result, or no reply when the service left the call unanswered.
template <typename Res>
Finished answer(const std::optional<Res>& res, xdr::Writer& out) {
  if (!res) return Finished{Outcome::NoReply, false};
  nlm4::encode(out, *res);
  return Outcome::Success;
}

}  // namespace

ProgramVersion make_nlm4_table(nlm::NlmService& s) {
  ProgramVersion t{nlm4::kProgram, nlm4::kVersion, {}};
  t.procedures.resize(static_cast<std::size_t>(Proc::FreeAll) + 1);
  auto set = [&](Proc proc, std::uint32_t f, Handler h) {
    t.procedures[static_cast<std::uint32_t>(proc)] = Procedure{nlm4::name(proc), f, std::move(h)};
  };
  set(Proc::Null, flags::Idempotent, [](const CallContext&, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
    co_return in.remaining() == 0 ? Outcome::Success : Outcome::GarbageArgs;
  });
  set(Proc::Test, flags::Idempotent,
      [&s](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
        nlm4::TestArgs args;
        if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
        co_return answer(co_await s.test(ctx, std::move(args)), out);
      });
  set(Proc::Lock, 0, [&s](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
    nlm4::LockArgs args;
    if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
    co_return answer(co_await s.lock(ctx, std::move(args)), out);
  });
  set(Proc::Cancel, 0, [&s](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
    nlm4::CancelArgs args;
    if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
    co_return answer(co_await s.cancel(ctx, std::move(args)), out);
  });
  set(Proc::Unlock, 0, [&s](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
    nlm4::UnlockArgs args;
    if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
    co_return answer(co_await s.unlock(ctx, std::move(args)), out);
  });
  set(Proc::Granted, 0, [&s](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
    nlm4::TestArgs args;
    if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
    nlm4::encode(out, s.granted(ctx, args));
    co_return Outcome::Success;
  });
  // NM_LOCK: a lock of a client that has no status monitor (not monitored); it never blocks.
  set(Proc::NmLock, 0, [&s](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
    nlm4::LockArgs args;
    if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
    args.block = false;
    co_return answer(co_await s.lock(ctx, std::move(args), /*monitor=*/false), out);
  });
  set(Proc::FreeAll, 0, [&s](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
    nlm4::Notify args;
    if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
    co_await s.free_all(ctx, std::move(args));
    co_return Outcome::Success;
  });
  return t;
}

}  // namespace nfsgw::rpc
