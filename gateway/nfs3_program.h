// The NFSv3 program as a typed interface: every procedure has two parts, an answer
// step and a coroutine.
//
// Every layer of nfsgw implements this same interface and wraps another one: the
// handle translator (gateway handles <-> origin handles, export policy) over the
// metadata cache, the data cache and the forwarder (libnfs upstream pool). Layers
// are composed once, at start-up, from the configuration, so any of them can be
// switched off. A layer derives from ForwardingProgram (forwarding_program.h) and
// overrides only the procedures it changes. Handlers return typed results, never
// bytes; an origin or gateway failure is a Status in the result, never an
// exception, and a status nfsgw made up is marked so (gateway_status).
//
// The answer step (`*_now`) answers a call at once, without waiting, or passes it
// on (an empty Now). The dispatcher decodes a call's arguments once, asks the step
// first, and runs the coroutine only when the step passed: a hit then costs no
// coroutine frame, and a miss goes down the stack once. The step's answer must be
// the one the coroutine would give. It comes with its basis (cache/answer_basis.h):
// what the layer that built it read, so that a copy may be given again while that
// holds. Only the layer that built an answer knows its basis, and it returns it as
// a value with the answer; nothing is recorded on the side.
//
// Arguments of the coroutine are taken by value: each layer owns its copy and
// moves it on, so a WRITE's payload is not copied between layers. `ctx` is a
// reference the coroutine keeps until it completes, so callers co_await the call at
// once.
#pragma once

#include <optional>

#include "cache/answer_basis.h"
#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "protocol/nfs3_types.h"

namespace nfsgw {

/// What an answer step gives: an answer with its basis, or nothing (pass on).
template <typename Res>
struct Now {
  std::optional<Res> res;
  cache::AnswerBasis basis;

  /// An answer step's start: no answer yet, a basis that follows the call (records
  /// read through the store's memory layer when the memo asks, counters only noted
  /// for a tentative ask: CallContext). Every step builds its basis here, so none
  /// can drop either.
  static Now for_call(const CallContext& ctx) {
    return {std::nullopt, cache::AnswerBasis(ctx.refresh_records, ctx.tentative)};
  }

  explicit operator bool() const { return res.has_value(); }
  const Res& operator*() const { return *res; }
  const Res* operator->() const { return &*res; }
};

/// Every procedure but NULL, as X(method, Proc, Res, Args), for the code that does
/// the same for each (the interface below, ForwardingProgram, the meter).
#define NFSGW_NFS3_PROCEDURES(X)                           \
  X(getattr, Getattr, GetattrRes, GetattrArgs)             \
  X(setattr, Setattr, SetattrRes, SetattrArgs)             \
  X(lookup, Lookup, LookupRes, LookupArgs)                 \
  X(access, Access, AccessRes, AccessArgs)                 \
  X(readlink, Readlink, ReadlinkRes, ReadlinkArgs)         \
  X(read, Read, ReadRes, ReadArgs)                         \
  X(write, Write, WriteRes, WriteArgs)                     \
  X(create, Create, CreateRes, CreateArgs)                 \
  X(mkdir, Mkdir, MkdirRes, MkdirArgs)                     \
  X(symlink, Symlink, SymlinkRes, SymlinkArgs)             \
  X(mknod, Mknod, MknodRes, MknodArgs)                     \
  X(remove, Remove, RemoveRes, RemoveArgs)                 \
  X(rmdir, Rmdir, RmdirRes, RmdirArgs)                     \
  X(rename, Rename, RenameRes, RenameArgs)                 \
  X(link, Link, LinkRes, LinkArgs)                         \
  X(readdir, Readdir, ReaddirRes, ReaddirArgs)             \
  X(readdirplus, Readdirplus, ReaddirplusRes, ReaddirplusArgs) \
  X(fsstat, Fsstat, FsstatRes, FsstatArgs)                 \
  X(fsinfo, Fsinfo, FsinfoRes, FsinfoArgs)                 \
  X(pathconf, Pathconf, PathconfRes, PathconfArgs)         \
  X(commit, Commit, CommitRes, CommitArgs)

class Nfs3Program {
 public:
  virtual ~Nfs3Program() = default;

  virtual Awaitable<void> null(const CallContext& ctx) = 0;

#define NFSGW_NFS3_DECLARE(method, P, Res, Args)                                            \
  virtual Awaitable<nfs3::Res> method(const CallContext& ctx, nfs3::Args args) = 0;         \
  /** The answer at once, or an empty Now: pass on (by default). */                          \
  virtual Now<nfs3::Res> method##_now(const CallContext& /*ctx*/, const nfs3::Args& /*args*/) { \
    return {};                                                                               \
  }
  NFSGW_NFS3_PROCEDURES(NFSGW_NFS3_DECLARE)
#undef NFSGW_NFS3_DECLARE
};

}  // namespace nfsgw
