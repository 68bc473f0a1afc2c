// The metadata cache: FSINFO and PATHCONF (kept for fsinfo_ttl), FSSTAT (kept for
// fsstat_ttl), stored as the origin's XDR-encoded answer. None of them needs a
// permission: any holder of the handle gets the same answer from the origin.
// The stored answer holds the object's attributes as they were then: under strict
// a cached answer goes out without them (they are optional), since no strict reply
// may carry attributes older than the origin's.
#include "gateway/metacache/metadata_cache.h"
#include "gateway/metacache/store_await.h"
#include "protocol/nfs3_codec.h"

namespace nfsgw::metacache {

using nfs3::Proc;
using nfs3::Status;

template <typename Res, typename Args>
Awaitable<Res> MetadataCache::fs_info(const CallContext& ctx, Args args, nfs3::FileHandle fh,
                                      cache::FsKind kind, Proc proc,
                                      Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args)) {
  count(proc, ExportCounters::Calls);
  const cache::FsKey k{key(fh), kind};
  if (auto rec = co_await find<cache::FsRecord>(store_, k); rec && windows_.fresh_fs(rec->expires, kind)) {
    Res res;
    try {
      xdr::Reader r(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(rec->xdr.data()),
                                                  rec->xdr.size()));
      nfs3::decode(r, res);
      if (windows_.strict()) res.obj_attributes.reset();
      count(proc, ExportCounters::Hits);
      co_return res;
    } catch (const xdr::DecodeError&) {
      store_.erase<cache::FsRecord>(k);  // damaged: ask again
    }
  }
  count(proc, ExportCounters::Misses);
  count(proc, ExportCounters::OriginCalls);
  const std::uint64_t seq = attrs_.next_seq();
  Res res = co_await (next_.*method)(ctx, std::move(args));
  if (res.gateway_status) co_return res;
  forget_if_gone(fh, res.status, false);
  co_await attrs_.learn(fh, res.obj_attributes, seq);
  if (res.status == Status::Ok) {
    std::vector<std::uint8_t> buf;
    xdr::Writer w(buf);
    nfs3::encode(w, res);
    store_.put<cache::FsRecord>(k, cache::FsRecord{std::string(buf.begin(), buf.end()), windows_.fs_expiry(kind)});
  }
  co_return res;
}

Awaitable<nfs3::FsstatRes> MetadataCache::fsstat(const CallContext& ctx, nfs3::FsstatArgs args) {
  const nfs3::FileHandle fh = args.fsroot;
  return fs_info(ctx, std::move(args), fh, cache::FsKind::Fsstat, Proc::Fsstat, &Nfs3Program::fsstat);
}

Awaitable<nfs3::FsinfoRes> MetadataCache::fsinfo(const CallContext& ctx, nfs3::FsinfoArgs args) {
  const nfs3::FileHandle fh = args.fsroot;
  return fs_info(ctx, std::move(args), fh, cache::FsKind::Fsinfo, Proc::Fsinfo, &Nfs3Program::fsinfo);
}

Awaitable<nfs3::PathconfRes> MetadataCache::pathconf(const CallContext& ctx, nfs3::PathconfArgs args) {
  const nfs3::FileHandle fh = args.object;
  return fs_info(ctx, std::move(args), fh, cache::FsKind::Pathconf, Proc::Pathconf, &Nfs3Program::pathconf);
}

}  // namespace nfsgw::metacache
