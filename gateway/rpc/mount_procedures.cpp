#include "gateway/rpc/mount_procedures.h"

namespace nfsgw::rpc {
namespace {

using MountProc = mount3::Proc;

/// Fills a table for `vers`; MNT only for version 3.
ProgramVersion make_table(MountProgram& p, std::uint32_t vers) {
  ProgramVersion t{mount3::kProgram, vers, {}};
  t.procedures.resize(6);
  auto set = [&](MountProc proc, const char* name, std::uint32_t f, Handler h) {
    t.procedures[static_cast<std::uint32_t>(proc)] = Procedure{name, f, std::move(h)};
  };
  set(MountProc::Null, "NULL", flags::Idempotent,
      [](const CallContext&, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
        co_return in.remaining() == 0 ? Outcome::Success : Outcome::GarbageArgs;
      });
  if (vers == mount3::kVersion3) {
    set(MountProc::Mnt, "MNT", 0,
        [&p](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
          mount3::MntArgs args;
          try {
            mount3::decode(in, args);
            expect_end_of_args(in);
          } catch (const xdr::DecodeError&) {
            co_return Outcome::GarbageArgs;
          }
          mount3::encode(out, co_await p.mnt(ctx, args));
          co_return Outcome::Success;
        });
  }
  set(MountProc::Dump, "DUMP", flags::Idempotent,
      [&p](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
        if (in.remaining() != 0) co_return Outcome::GarbageArgs;
        mount3::encode(out, p.dump(ctx.client_address));
        co_return Outcome::Success;
      });
  set(MountProc::Umnt, "UMNT", 0,
      [&p](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
        mount3::UmntArgs args;
        try {
          mount3::decode(in, args);
          expect_end_of_args(in);
        } catch (const xdr::DecodeError&) {
          co_return Outcome::GarbageArgs;
        }
        p.umnt(ctx.client_address, args);
        co_return Outcome::Success;
      });
  set(MountProc::Umntall, "UMNTALL", 0,
      [&p](const CallContext& ctx, xdr::Reader& in, xdr::Writer&) -> Awaitable<Finished> {
        if (in.remaining() != 0) co_return Outcome::GarbageArgs;
        p.umntall(ctx.client_address);
        co_return Outcome::Success;
      });
  set(MountProc::Export, "EXPORT", flags::Idempotent,
      [&p](const CallContext& ctx, xdr::Reader& in, xdr::Writer& out) -> Awaitable<Finished> {
        if (in.remaining() != 0) co_return Outcome::GarbageArgs;
        mount3::encode(out, p.exports(ctx.client_address));
        co_return Outcome::Success;
      });
  return t;
}

}  // namespace

ProgramVersion make_mount3_table(MountProgram& p) { return make_table(p, mount3::kVersion3); }
ProgramVersion make_mount1_table(MountProgram& p) { return make_table(p, mount3::kVersion1); }

}  // namespace nfsgw::rpc
