#include "gateway/rpc/nfs3_procedures.h"

#include "protocol/nfs3_codec.h"

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
    } catch (const xdr::DecodeError&) {
      co_return Outcome::GarbageArgs;
    }
    Res res = co_await (program.*method)(ctx, std::move(args));
    nfs3::encode(out, res);
    co_return Outcome::Success;
  };
}

}  // namespace

ProgramVersion make_nfs3_table(Nfs3Program& p) {
  using namespace flags;
  ProgramVersion t{nfs3::kProgram, nfs3::kVersion, {}};
  t.procedures.resize(nfs3::kProcCount);
  auto set = [&](Proc proc, const char* name, std::uint32_t f, Handler h) {
    t.procedures[static_cast<std::uint32_t>(proc)] = Procedure{name, f, std::move(h)};
  };
  set(Proc::Null, "NULL", Idempotent,
      [&p](const CallContext& ctx, xdr::Reader&, xdr::Writer&) -> Awaitable<Outcome> {
        co_await p.null(ctx);
        co_return Outcome::Success;
      });
  set(Proc::Getattr, "GETATTR", Idempotent, typed(p, &Nfs3Program::getattr));
  set(Proc::Setattr, "SETATTR", Mutates, typed(p, &Nfs3Program::setattr));
  set(Proc::Lookup, "LOOKUP", Idempotent, typed(p, &Nfs3Program::lookup));
  set(Proc::Access, "ACCESS", Idempotent, typed(p, &Nfs3Program::access));
  set(Proc::Readlink, "READLINK", Idempotent, typed(p, &Nfs3Program::readlink));
  set(Proc::Read, "READ", Idempotent, typed(p, &Nfs3Program::read));
  set(Proc::Write, "WRITE", Mutates | Idempotent, typed(p, &Nfs3Program::write));
  set(Proc::Create, "CREATE", Mutates, typed(p, &Nfs3Program::create));
  set(Proc::Mkdir, "MKDIR", Mutates, typed(p, &Nfs3Program::mkdir));
  set(Proc::Symlink, "SYMLINK", Mutates, typed(p, &Nfs3Program::symlink));
  set(Proc::Mknod, "MKNOD", Mutates, typed(p, &Nfs3Program::mknod));
  set(Proc::Remove, "REMOVE", Mutates, typed(p, &Nfs3Program::remove));
  set(Proc::Rmdir, "RMDIR", Mutates, typed(p, &Nfs3Program::rmdir));
  set(Proc::Rename, "RENAME", Mutates, typed(p, &Nfs3Program::rename));
  set(Proc::Link, "LINK", Mutates, typed(p, &Nfs3Program::link));
  set(Proc::Readdir, "READDIR", Idempotent, typed(p, &Nfs3Program::readdir));
  set(Proc::Readdirplus, "READDIRPLUS", Idempotent,
      typed(p, &Nfs3Program::readdirplus));
  set(Proc::Fsstat, "FSSTAT", Idempotent, typed(p, &Nfs3Program::fsstat));
  set(Proc::Fsinfo, "FSINFO", Idempotent, typed(p, &Nfs3Program::fsinfo));
  set(Proc::Pathconf, "PATHCONF", Idempotent, typed(p, &Nfs3Program::pathconf));
  set(Proc::Commit, "COMMIT", Mutates | Idempotent, typed(p, &Nfs3Program::commit));
  return t;
}

}  // namespace nfsgw::rpc
