// The NFSv3 program as a typed interface: one coroutine per procedure.
//
// Every layer of nfsgw implements this same interface and wraps another one: the
// handle translator (gateway handles <-> origin handles, export policy) over the
// forwarder (libnfs upstream pool), with the caching layers to come slotting in
// between. Layers are composed once, at start-up, from the configuration, so any
// of them can be switched off. Handlers return typed results, never bytes; an
// origin or gateway failure is a Status in the result, never an exception.
//
// Arguments are taken by value: each layer owns its copy and moves it on, so a
// WRITE's payload is not copied between layers. `ctx` is a reference the
// coroutine keeps until it completes, so callers co_await the call at once.
//
// Answers without waiting: the calls a warm cache answers most (GETATTR, LOOKUP,
// ACCESS) also have a plain function, `*_now`, that answers at once when nothing
// has to be waited for (every record in memory) and gives nullopt otherwise. The
// dispatcher tries it first: a hit then costs no coroutine frame at all. Its answer
// must be the one the coroutine would give; a layer that cannot tell says nullopt
// (the default), and the call takes the coroutine path as before.
#pragma once

#include <optional>

#include "gateway/awaitable.h"
#include "gateway/call_context.h"
#include "protocol/nfs3_types.h"

namespace nfsgw {

class Nfs3Program {
 public:
  virtual ~Nfs3Program() = default;

  virtual Awaitable<void> null(const CallContext& ctx) = 0;
  virtual Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) = 0;
  virtual Awaitable<nfs3::SetattrRes> setattr(const CallContext& ctx, nfs3::SetattrArgs args) = 0;
  virtual Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) = 0;
  virtual Awaitable<nfs3::AccessRes> access(const CallContext& ctx, nfs3::AccessArgs args) = 0;
  virtual Awaitable<nfs3::ReadlinkRes> readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) = 0;
  virtual Awaitable<nfs3::ReadRes> read(const CallContext& ctx, nfs3::ReadArgs args) = 0;
  virtual Awaitable<nfs3::WriteRes> write(const CallContext& ctx, nfs3::WriteArgs args) = 0;
  virtual Awaitable<nfs3::CreateRes> create(const CallContext& ctx, nfs3::CreateArgs args) = 0;
  virtual Awaitable<nfs3::MkdirRes> mkdir(const CallContext& ctx, nfs3::MkdirArgs args) = 0;
  virtual Awaitable<nfs3::SymlinkRes> symlink(const CallContext& ctx, nfs3::SymlinkArgs args) = 0;
  virtual Awaitable<nfs3::MknodRes> mknod(const CallContext& ctx, nfs3::MknodArgs args) = 0;
  virtual Awaitable<nfs3::RemoveRes> remove(const CallContext& ctx, nfs3::RemoveArgs args) = 0;
  virtual Awaitable<nfs3::RmdirRes> rmdir(const CallContext& ctx, nfs3::RmdirArgs args) = 0;
  virtual Awaitable<nfs3::RenameRes> rename(const CallContext& ctx, nfs3::RenameArgs args) = 0;
  virtual Awaitable<nfs3::LinkRes> link(const CallContext& ctx, nfs3::LinkArgs args) = 0;
  virtual Awaitable<nfs3::ReaddirRes> readdir(const CallContext& ctx, nfs3::ReaddirArgs args) = 0;
  virtual Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) = 0;
  virtual Awaitable<nfs3::FsstatRes> fsstat(const CallContext& ctx, nfs3::FsstatArgs args) = 0;
  virtual Awaitable<nfs3::FsinfoRes> fsinfo(const CallContext& ctx, nfs3::FsinfoArgs args) = 0;
  virtual Awaitable<nfs3::PathconfRes> pathconf(const CallContext& ctx, nfs3::PathconfArgs args) = 0;
  virtual Awaitable<nfs3::CommitRes> commit(const CallContext& ctx, nfs3::CommitArgs args) = 0;

  virtual std::optional<nfs3::GetattrRes> getattr_now(const CallContext&, const nfs3::GetattrArgs&) {
    return std::nullopt;
  }
  virtual std::optional<nfs3::LookupRes> lookup_now(const CallContext&, const nfs3::LookupArgs&) {
    return std::nullopt;
  }
  virtual std::optional<nfs3::AccessRes> access_now(const CallContext&, const nfs3::AccessArgs&) {
    return std::nullopt;
  }
};

}  // namespace nfsgw
