#include "gateway/rpc/nfs3_procedures.h"

#include "gateway/rpc/nfs3_procedure_info.h"
#include "protocol/nfs3_codec.h"

#include <algorithm>

namespace nfsgw::rpc {
namespace {

using NfsProc = nfs3::Proc;

/// May a retransmission get this result again? Not a status nfsgw made up, nor
/// "try again later" (procedure_table.h, Finished).
template <typename Res>
bool replayable(const Res& res) {
  return !res.gateway_status && res.status != nfs3::Status::Jukebox;
}

/// The rest of a call whose answer step passed: the coroutine, then the encoding.
template <typename Args, typename Res>
Awaitable<Finished> finish(Nfs3Program& program, Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args),
                           const CallContext& ctx, Args args, xdr::Writer& out) {
  Res res = co_await (program.*method)(ctx, std::move(args));
  const bool again = replayable(res);
  nfs3::encode(out, std::move(res));  // a READ's data is moved, not copied (nfs3_codec.h)
  co_return Finished{Outcome::Success, again};
}

/// One procedure's entry: decode the arguments once, ask the answer step, and
/// start the coroutine only when it passed.
template <typename Args, typename Res>
Begin typed(Nfs3Program& program, Now<Res> (Nfs3Program::*step)(const CallContext&, const Args&),
            Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args)) {
  return [&program, step, method](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Begun {
    Args args;
    try {
      nfs3::decode(in, args);
      expect_end_of_args(in);
    } catch (const xdr::DecodeError&) {
      return Begun{Finished{Outcome::GarbageArgs}, {}, std::nullopt};
    }
    Now<Res> now;
    try {
      now = (program.*step)(ctx, args);
    } catch (const std::exception&) {
      now = {};  // the coroutine tries again, and reports
    }
    if (now) {
      const bool again = replayable(*now.res);
      nfs3::encode(out, std::move(*now.res));
      return Begun{Finished{Outcome::Success, again}, now.basis, std::nullopt};
    }
    return Begun{std::nullopt, {}, finish(program, method, ctx, std::move(args), out)};
  };
}

/// Reply sizes read from the arguments (procedure_table.h, ResultSize). The data a
/// READ or READDIR returns is capped by the client's count and by nfs3::kMaxData;
/// post-op attributes and the like fit in kSmallResultBytes.
std::size_t read_result_size(xdr::Reader in) {
  try {
    in.opaque_var(nfs3::kFhSize);
    in.u64();  // offset
    return std::min<std::size_t>(in.u32(), nfs3::kMaxData) + kSmallResultBytes;
  } catch (const xdr::DecodeError&) {
    return 0;
  }
}

std::size_t readdir_result_size(xdr::Reader in) {
  try {
    in.opaque_var(nfs3::kFhSize);
    in.u64();  // cookie
    in.opaque_fixed(nfs3::kCookieVerfSize);
    return std::min<std::size_t>(in.u32(), nfs3::kMaxData) + kSmallResultBytes;  // count
  } catch (const xdr::DecodeError&) {
    return 0;
  }
}

std::size_t readdirplus_result_size(xdr::Reader in) {
  try {
    in.opaque_var(nfs3::kFhSize);
    in.u64();  // cookie
    in.opaque_fixed(nfs3::kCookieVerfSize);
    in.u32();  // dircount
    return std::min<std::size_t>(in.u32(), nfs3::kMaxData) + kSmallResultBytes;  // maxcount
  } catch (const xdr::DecodeError&) {
    return 0;
  }
}

std::size_t readlink_result_size(xdr::Reader) { return nfs3::kMaxPathLen + kSmallResultBytes; }

}  // namespace

ProgramVersion make_nfs3_table(Nfs3Program& p) {
  ProgramVersion t{nfs3::kProgram, nfs3::kVersion, {}};
  t.procedures.resize(nfs3::kProcCount);
  // Name and flags come from kNfs3Procedures (nfs3_procedure_info.h), shared with
  // the forwarder; only the handler is chosen here.
  auto set = [&](NfsProc proc, Begin begin, ResultSize size = nullptr, bool kept_when_small = false) {
    const Nfs3ProcedureInfo& info = nfs3_procedure(proc);
    Procedure& p = t.procedures[static_cast<std::uint32_t>(proc)];
    p = Procedure{info.name, info.flags, nullptr, std::move(begin), size, kept_when_small};
  };
  t.procedures[static_cast<std::uint32_t>(NfsProc::Null)] = Procedure{
      nfs3_procedure(NfsProc::Null).name, nfs3_procedure(NfsProc::Null).flags,
      [&p](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
        if (in.remaining() != 0) co_return Outcome::GarbageArgs;  // NULL takes no arguments
        co_await p.null(ctx);
        co_return Outcome::Success;
      },
      nullptr, nullptr};
  set(NfsProc::Getattr, typed(p, &Nfs3Program::getattr_now, &Nfs3Program::getattr));
  set(NfsProc::Setattr, typed(p, &Nfs3Program::setattr_now, &Nfs3Program::setattr));
  set(NfsProc::Lookup, typed(p, &Nfs3Program::lookup_now, &Nfs3Program::lookup));
  set(NfsProc::Access, typed(p, &Nfs3Program::access_now, &Nfs3Program::access));
  set(NfsProc::Readlink, typed(p, &Nfs3Program::readlink_now, &Nfs3Program::readlink), readlink_result_size);
  // A READ of a small file answered from memory may be kept (its data within the
  // answer memo's slot).
  set(NfsProc::Read, typed(p, &Nfs3Program::read_now, &Nfs3Program::read), read_result_size, true);
  set(NfsProc::Write, typed(p, &Nfs3Program::write_now, &Nfs3Program::write));
  set(NfsProc::Create, typed(p, &Nfs3Program::create_now, &Nfs3Program::create));
  set(NfsProc::Mkdir, typed(p, &Nfs3Program::mkdir_now, &Nfs3Program::mkdir));
  set(NfsProc::Symlink, typed(p, &Nfs3Program::symlink_now, &Nfs3Program::symlink));
  set(NfsProc::Mknod, typed(p, &Nfs3Program::mknod_now, &Nfs3Program::mknod));
  set(NfsProc::Remove, typed(p, &Nfs3Program::remove_now, &Nfs3Program::remove));
  set(NfsProc::Rmdir, typed(p, &Nfs3Program::rmdir_now, &Nfs3Program::rmdir));
  set(NfsProc::Rename, typed(p, &Nfs3Program::rename_now, &Nfs3Program::rename));
  set(NfsProc::Link, typed(p, &Nfs3Program::link_now, &Nfs3Program::link));
  set(NfsProc::Readdir, typed(p, &Nfs3Program::readdir_now, &Nfs3Program::readdir), readdir_result_size);
  set(NfsProc::Readdirplus, typed(p, &Nfs3Program::readdirplus_now, &Nfs3Program::readdirplus), readdirplus_result_size);
  set(NfsProc::Fsstat, typed(p, &Nfs3Program::fsstat_now, &Nfs3Program::fsstat));
  set(NfsProc::Fsinfo, typed(p, &Nfs3Program::fsinfo_now, &Nfs3Program::fsinfo));
  set(NfsProc::Pathconf, typed(p, &Nfs3Program::pathconf_now, &Nfs3Program::pathconf));
  set(NfsProc::Commit, typed(p, &Nfs3Program::commit_now, &Nfs3Program::commit));
  return t;
}

}  // namespace nfsgw::rpc
