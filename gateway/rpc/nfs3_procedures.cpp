#include "gateway/rpc/nfs3_procedures.h"

#include "gateway/rpc/nfs3_procedure_info.h"
#include "protocol/nfs3_codec.h"

#include <algorithm>

namespace nfsgw::rpc {
namespace {

using nfs3::Proc;

/// The handler for one procedure: decode, call the program, encode.
template <typename Args, typename Res>
Handler typed(Nfs3Program& program,
              Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args)) {
  return [&program, method](const CallContext& ctx, xdr::Reader& in,
                            xdr::Writer& out) -> Awaitable<Outcome> {
    Args args;
    try {
      nfs3::decode(in, args);
      expect_end_of_args(in);
    } catch (const xdr::DecodeError&) {
      co_return Outcome::GarbageArgs;
    }
    Res res = co_await (program.*method)(ctx, std::move(args));
    nfs3::encode(out, std::move(res));  // a READ's data is moved, not copied (nfs3_codec.h)
    co_return Outcome::Success;
  };
}

/// The answer-now path of a procedure that has one (nfs3_program.h).
template <typename Args, typename Res>
NowHandler typed_now(Nfs3Program& program,
                     std::optional<Res> (Nfs3Program::*method)(const CallContext&, const Args&)) {
  return [&program, method](const CallContext& ctx, xdr::Reader in, xdr::Writer& out) -> bool {
    Args args;
    try {
      nfs3::decode(in, args);
      expect_end_of_args(in);
    } catch (const xdr::DecodeError&) {
      return false;  // the handler answers GARBAGE_ARGS
    }
    std::optional<Res> res = (program.*method)(ctx, args);
    if (!res) return false;
    nfs3::encode(out, *res);
    return true;
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
  auto set = [&](Proc proc, Handler h, NowHandler now = nullptr, ResultSize size = nullptr) {
    const Nfs3ProcedureInfo& info = nfs3_procedure(proc);
    t.procedures[static_cast<std::uint32_t>(proc)] =
        Procedure{info.name, info.flags, std::move(h), std::move(now), size};
  };
  set(Proc::Null, [&p](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) -> Awaitable<Outcome> {
    if (in.remaining() != 0) co_return Outcome::GarbageArgs;  // NULL takes no arguments
    co_await p.null(ctx);
    co_return Outcome::Success;
  });
  set(Proc::Getattr, typed(p, &Nfs3Program::getattr), typed_now(p, &Nfs3Program::getattr_now));
  set(Proc::Setattr, typed(p, &Nfs3Program::setattr));
  set(Proc::Lookup, typed(p, &Nfs3Program::lookup), typed_now(p, &Nfs3Program::lookup_now));
  set(Proc::Access, typed(p, &Nfs3Program::access), typed_now(p, &Nfs3Program::access_now));
  set(Proc::Readlink, typed(p, &Nfs3Program::readlink), nullptr, readlink_result_size);
  set(Proc::Read, typed(p, &Nfs3Program::read), nullptr, read_result_size);
  set(Proc::Write, typed(p, &Nfs3Program::write));
  set(Proc::Create, typed(p, &Nfs3Program::create));
  set(Proc::Mkdir, typed(p, &Nfs3Program::mkdir));
  set(Proc::Symlink, typed(p, &Nfs3Program::symlink));
  set(Proc::Mknod, typed(p, &Nfs3Program::mknod));
  set(Proc::Remove, typed(p, &Nfs3Program::remove));
  set(Proc::Rmdir, typed(p, &Nfs3Program::rmdir));
  set(Proc::Rename, typed(p, &Nfs3Program::rename));
  set(Proc::Link, typed(p, &Nfs3Program::link));
  set(Proc::Readdir, typed(p, &Nfs3Program::readdir), nullptr, readdir_result_size);
  set(Proc::Readdirplus, typed(p, &Nfs3Program::readdirplus), nullptr, readdirplus_result_size);
  set(Proc::Fsstat, typed(p, &Nfs3Program::fsstat));
  set(Proc::Fsinfo, typed(p, &Nfs3Program::fsinfo));
  set(Proc::Pathconf, typed(p, &Nfs3Program::pathconf));
  set(Proc::Commit, typed(p, &Nfs3Program::commit));
  return t;
}

}  // namespace nfsgw::rpc
