#include "gateway/rpc/nlm_procedures.h"

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <spdlog/spdlog.h>

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

/// What a synchronous procedure runs: the NlmService call.
template <typename Args, typename Res>
using Run = std::function<Awaitable<std::optional<Res>>(const CallContext&, Args)>;

/// A _MSG request: `run` (what the synchronous procedure runs), its result sent to
/// the client's NLM as the `res_proc` call in the background and the _MSG itself
/// answered void; nothing at all when the service left the request unanswered
/// (the client sends it again).
template <typename Args, typename Res>
Awaitable<Finished> run_msg(const CallContext& ctx, xdr::Reader& in, Run<Args, Res> run,
                            nlm::ClientResults& results, Proc res_proc) {
  Args args;
  if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
  // Bound to a name first: no temporary inside co_await (GCC 12).
  Awaitable<std::optional<Res>> running = run(ctx, std::move(args));
  const std::optional<Res> res = co_await std::move(running);
  if (!res) co_return Finished{Outcome::NoReply, false};
  std::vector<std::uint8_t> encoded;
  xdr::Writer w(encoded);
  nlm4::encode(w, *res);
  auto executor = co_await boost::asio::this_coro::executor;
  boost::asio::co_spawn(executor, results.send_result(ctx.client_address, res_proc, std::move(encoded)),
                        boost::asio::detached);
  co_return Outcome::Success;
}

/// A _RES call to nfsgw: decoded, answered void; nfsgw waits for none.
template <typename Res>
Handler result_arrived(Proc proc) {
  return [proc](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
    Res res;
    if (!decode_all(in, res)) co_return Outcome::GarbageArgs;
    spdlog::debug("NLM {} from {} ({}): nfsgw sent no request it answers; ignored", nlm4::name(proc),
                  ctx.client_address, nlm4::name(res.stat));
    co_return Outcome::Success;
  };
}

}  // namespace

ProgramVersion make_nlm4_table(nlm::NlmService& s, NlmPeers peers) {
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
  nlm::ShareService* shares = peers.shares;
  set(Proc::FreeAll, 0, [&s, shares](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
    nlm4::Notify args;
    if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
    if (shares != nullptr) {
      Awaitable<std::size_t> unshare = shares->free_all(ctx, args);  // named (GCC 12)
      co_await std::move(unshare);
    }
    co_await s.free_all(ctx, std::move(args));
    co_return Outcome::Success;
  });
  if (shares != nullptr) {
    set(Proc::Share, 0, [shares](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
      nlm4::ShareArgs args;
      if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
      Awaitable<std::optional<nlm4::ShareRes>> run = shares->share(ctx, std::move(args));  // named (GCC 12)
      co_return answer(co_await std::move(run), out);
    });
    set(Proc::Unshare, 0, [shares](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
      nlm4::ShareArgs args;
      if (!decode_all(in, args)) co_return Outcome::GarbageArgs;
      Awaitable<std::optional<nlm4::ShareRes>> run = shares->unshare(ctx, std::move(args));  // named (GCC 12)
      co_return answer(co_await std::move(run), out);
    });
  }
  // The results of requests nfsgw never made (it sends no _MSG).
  set(Proc::TestRes, 0, result_arrived<nlm4::TestRes>(Proc::TestRes));
  for (Proc p : {Proc::LockRes, Proc::CancelRes, Proc::UnlockRes, Proc::GrantedRes})
    set(p, 0, result_arrived<nlm4::Res>(p));
  if (nlm::ClientResults* r = peers.results) {
    // The asynchronous requests: what the synchronous procedure runs, its result
    // sent back as the matching _RES call.
    set(Proc::TestMsg, 0, [&s, r](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) {
      return run_msg<nlm4::TestArgs, nlm4::TestRes>(
          ctx, in, [&s](const CallContext& c, nlm4::TestArgs a) { return s.test(c, std::move(a)); }, *r,
          Proc::TestRes);
    });
    set(Proc::LockMsg, 0, [&s, r](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) {
      return run_msg<nlm4::LockArgs, nlm4::Res>(
          ctx, in, [&s](const CallContext& c, nlm4::LockArgs a) { return s.lock(c, std::move(a)); }, *r,
          Proc::LockRes);
    });
    set(Proc::CancelMsg, 0, [&s, r](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) {
      return run_msg<nlm4::CancelArgs, nlm4::Res>(
          ctx, in, [&s](const CallContext& c, nlm4::CancelArgs a) { return s.cancel(c, std::move(a)); }, *r,
          Proc::CancelRes);
    });
    set(Proc::UnlockMsg, 0, [&s, r](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) {
      return run_msg<nlm4::UnlockArgs, nlm4::Res>(
          ctx, in, [&s](const CallContext& c, nlm4::UnlockArgs a) { return s.unlock(c, std::move(a)); }, *r,
          Proc::UnlockRes);
    });
    // GRANTED_MSG: answered as GRANTED is (nfsgw asks the origin for no blocking lock).
    set(Proc::GrantedMsg, 0, [&s, r](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) {
      return run_msg<nlm4::TestArgs, nlm4::Res>(
          ctx, in,
          [&s](const CallContext& c, nlm4::TestArgs a) -> Awaitable<std::optional<nlm4::Res>> {
            co_return s.granted(c, a);
          },
          *r, Proc::GrantedRes);
    });
  }
  return t;
}

}  // namespace nfsgw::rpc
