// The metadata cache: attributes, ACCESS, READLINK, LOOKUP, and the calls it only
// learns from (READ, WRITE, COMMIT, SETATTR).
//
// Under strict, no reply carries attributes older than the origin's at the time of
// the call: those it carries come from an origin reply made during the call, or
// are left out (they are optional in NFSv3, and clients then ask GETATTR). A
// cached LOOKUP therefore carries the directory's fresh attributes but not the
// child's, which were only cached.
#include "gateway/made_up.h"
#include "gateway/metacache/metadata_cache.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include "gateway/metacache/store_await.h"

namespace nfsgw::metacache {

using nfs3::Proc;
using nfs3::Status;

namespace {

std::string handle_key(char kind, const nfs3::FileHandle& fh) {
  std::string k(1, kind);
  k.append(reinterpret_cast<const char*>(fh.bytes.data()), fh.len);
  return k;
}

std::string cred_key(const Credentials& c) {
  std::string k = std::to_string(c.uid) + ":" + std::to_string(c.gid);
  for (auto g : c.gids) k += "," + std::to_string(g);
  return k;
}

/// The origin says the object is gone: what depended on it must go too.
bool gone(Status s) { return s == Status::Stale || s == Status::NoEnt || s == Status::BadHandle; }

}  // namespace

MetadataCache::MetadataCache(Nfs3Program& next, cache::MetadataStore& store, std::uint32_t space,
                             const cache::CoherencySettings& settings, const cache::Clock& clock,
                             Sequence* sequence)
    : ForwardingProgram(next),
      store_(store),
      space_(space),
      windows_(settings, clock),
      own_seq_(sequence ? nullptr : std::make_unique<Sequence>(clock.now_ms())),
      seq_(sequence ? *sequence : *own_seq_),
      attrs_(store, windows_, space, seq_),
      perms_(store, windows_, space) {}

// ---- attributes ---------------------------------------------------------------

void MetadataCache::forget_if_gone(const nfs3::FileHandle& fh, Status status, bool gateway_status) {
  // The origin's own word that the object is gone, whatever the call: nothing
  // cached of it may answer again (an immutable export never asks on its own, so
  // a WRITE answered STALE, the flusher's among them, would leave its attributes
  // answering for good).
  if (!gateway_status && gone(status)) store_.erase_object(key(fh));
}

Awaitable<MetadataCache::Fresh> MetadataCache::origin_getattr(const CallContext& ctx,
                                                               const nfs3::FileHandle& fh, Proc for_proc) {
  // Others may join this fetch: it is not abandoned when this caller leaves.
  const CallContext shared = shared_work(ctx);
  auto fetch = [&]() -> Awaitable<Fresh> {
    const std::uint64_t seq = attrs_.next_seq();
    const AttrPtr before = attrs_.in_memory(fh);
    count(for_proc, ExportCounters::OriginCalls);
    nfs3::GetattrArgs args{fh};
    nfs3::GetattrRes r = co_await next_.getattr(shared, std::move(args));
    if (r.status != Status::Ok) {
      if (!r.gateway_status && gone(r.status)) store_.erase_object(key(fh));
      co_return Fresh{r.status, r.gateway_status, nullptr};
    }
    AttrPtr rec = co_await attrs_.learn(fh, r.attributes, seq);
    if (before && rec && before->gen == rec->gen) count(for_proc, ExportCounters::Revalidations);
    co_return Fresh{Status::Ok, false, rec};
  };
  // Strict: an answer must be no older than the call, so it never joins a GETATTR
  // that was sent before it arrived (the origin may have answered that one before
  // a change this caller already saw acknowledged).
  if (windows_.strict()) co_return co_await fetch();
  std::string flight = handle_key('g', fh);
  // A waiter whose client leaves gets JUKEBOX at once; the fetch goes on. (Named:
  // no braced temporary inside a co_await expression, GCC 12.)
  SingleFlight<Fresh>::Leave leave{ctx.caller_gone, Fresh{Status::Jukebox, true, nullptr}};
  co_return co_await getattr_flights_.run(std::move(flight), fetch, nullptr, std::move(leave));
}

MetadataCache::Fresh MetadataCache::fresh_in_memory(const nfs3::FileHandle& fh, bool force_origin,
                                                    cache::AnswerBasis& basis) {
  if (force_origin) return {};
  const auto rec = peek_now<cache::AttrRecord>(store_, key(fh), basis);
  if (rec && *rec && windows_.fresh_attr(**rec, basis)) return Fresh{Status::Ok, false, *rec};
  return {};
}

Awaitable<MetadataCache::Fresh> MetadataCache::fresh_attr(const CallContext& ctx, const nfs3::FileHandle& fh,
                                                           Proc for_proc, bool force_origin) {
  if (!force_origin) {
    // The hot path: a record in memory is read without another coroutine frame.
    auto peeked = store_.peek<cache::AttrRecord>(key(fh));
    AttrPtr rec = std::move(peeked.value);
    if (peeked.where == cache::MetadataStore::Where::OnDisk) rec = co_await attrs_.cached(fh);
    if (rec && windows_.fresh_attr(*rec, kNoBasis)) co_return Fresh{Status::Ok, false, rec};
  }
  co_return co_await origin_getattr(ctx, fh, for_proc);
}

AttrPtr MetadataCache::usable_attr(const nfs3::FileHandle& fh, Asked& asked, cache::AnswerBasis& basis) {
  for (const auto& [of, attr] : asked.attrs)
    if (of == fh) {
      basis.refuse();  // no record's window covers them: such an answer is never kept
      return attr;
    }
  AttrPtr attr = asked.origin_only ? nullptr : fresh_in_memory(fh, false, basis).attr;
  if (!attr) asked.attr_wanted = fh;
  return attr;
}

template <typename Res, typename Args>
Awaitable<std::optional<Res>> MetadataCache::hit_revalidating(
    const CallContext& ctx, const Args& args, Proc proc, Asked& asked,
    Now<Res> (MetadataCache::*hit)(const CallContext&, const Args&, Asked&)) {
  // A LOOKUP reads two objects' attributes, an ACCESS one; each is asked of the
  // origin at most once, since the step then has it in `asked`.
  constexpr int kMaxGetattrs = 2;
  for (int getattrs = 0;; ++getattrs) {
    Now<Res> now = (this->*hit)(ctx, args, asked);
    if (now) co_return std::move(now.res);
    if (!asked.attr_wanted || getattrs == kMaxGetattrs) co_return std::nullopt;
    const nfs3::FileHandle fh = *asked.attr_wanted;
    asked.attr_wanted.reset();
    const Fresh f = co_await origin_getattr(ctx, fh, proc);
    if (!f.attr) {
      if (!f.gateway_status && gone(f.status)) asked.gone = fh;
      co_return std::nullopt;
    }
    asked.attrs.emplace_back(fh, f.attr);
  }
}

Now<nfs3::GetattrRes> MetadataCache::getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) {
  auto now = Now<nfs3::GetattrRes>::for_call(ctx);
  Fresh f = fresh_in_memory(args.object, windows_.strict(), now.basis);
  if (!f.attr) return {};
  count(Proc::Getattr, ExportCounters::Calls, now.basis);
  count(Proc::Getattr, ExportCounters::Hits, now.basis);
  now.basis.vouch();
  now.res.emplace().attributes = f.attr->attr;
  return now;
}

Awaitable<nfs3::GetattrRes> MetadataCache::getattr(const CallContext& ctx, nfs3::GetattrArgs args) {
  if (!windows_.strict()) {
    // The step passed: the record may only be on disk. Anything else the origin
    // answers, and its answer is the call's (a miss, even when it revalidates).
    co_await attrs_.cached(args.object);
    if (auto now = getattr_now(ctx, args)) co_return std::move(*now.res);
  }
  count(Proc::Getattr, ExportCounters::Calls);
  count(Proc::Getattr, ExportCounters::Misses);
  const Fresh f = co_await origin_getattr(ctx, args.object, Proc::Getattr);
  nfs3::GetattrRes res;
  if (!f.attr) {
    res.status = f.status;
    res.gateway_status = f.gateway_status;
  } else {
    res.attributes = f.attr->attr;
  }
  co_return res;
}

Awaitable<nfs3::SetattrRes> MetadataCache::setattr(const CallContext& ctx, nfs3::SetattrArgs args) {
  count(Proc::Setattr, ExportCounters::Calls);
  count(Proc::Setattr, ExportCounters::OriginCalls);
  const nfs3::FileHandle fh = args.object;
  const std::vector<nfs3::FileHandle> touched{fh};
  const JournalScope noted = co_await note_change(touched);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::SetattrRes res = co_await next_.setattr(ctx, std::move(args));
  if (!res.gateway_status) co_await learn_wcc(fh, res.obj_wcc, seq);
  forget_if_gone(fh, res.status, res.gateway_status);
  co_return res;
}

// ---- ACCESS -------------------------------------------------------------------

Awaitable<void> MetadataCache::learn_access(CallContext caller, nfs3::FileHandle fh) {
  // Others may join this fetch, and it may run after the caller's answer.
  const CallContext ctx = shared_work(caller);
  auto fetch = [&]() -> Awaitable<bool> {
    const std::uint64_t seq = attrs_.next_seq();
    const std::uint32_t all = nfs3::access::Read | nfs3::access::Lookup | nfs3::access::Modify |
                              nfs3::access::Extend | nfs3::access::Delete | nfs3::access::Execute;
    count(Proc::Access, ExportCounters::OriginCalls);
    nfs3::AccessArgs args{fh, all};
    nfs3::AccessRes r = co_await next_.access(ctx, std::move(args));
    if (r.gateway_status || !r.obj_attributes) co_return false;
    AttrPtr rec = co_await attrs_.learn(fh, *r.obj_attributes, seq);
    if (r.status == Status::Ok && describes(rec, *r.obj_attributes))
      perms_.learn(ctx.cred, fh, *r.obj_attributes, all, r.access);
    co_return r.status == Status::Ok;
  };
  std::string flight = handle_key('a', fh) + cred_key(ctx.cred);
  co_await access_flights_.run(std::move(flight), fetch);
}

Awaitable<void> MetadataCache::learn_access_later(const CallContext& ctx, const nfs3::FileHandle& fh) {
  // Learnt in the background: the call that found the permission unknown goes to
  // the origin meanwhile, and the next one finds it known.
  auto ex = co_await boost::asio::this_coro::executor;
  boost::asio::co_spawn(ex, learn_access(ctx, fh), boost::asio::detached);
}

Now<nfs3::AccessRes> MetadataCache::access_now(const CallContext& ctx, const nfs3::AccessArgs& args) {
  if (windows_.strict()) return {};
  Asked none;
  return access_hit(ctx, args, none);
}

Now<nfs3::AccessRes> MetadataCache::access_hit(const CallContext& ctx, const nfs3::AccessArgs& args,
                                               Asked& asked) {
  auto now = Now<nfs3::AccessRes>::for_call(ctx);
  const AttrPtr attr = usable_attr(args.object, asked, now.basis);
  if (!attr) return {};
  const auto granted = perms_.answer_now(ctx.cred, args.object, attr->attr, args.access, now.basis);
  if (!granted) return {};
  count(Proc::Access, ExportCounters::Calls, now.basis);
  count(Proc::Access, ExportCounters::Hits, now.basis);
  now.basis.vouch();
  nfs3::AccessRes& res = now.res.emplace();
  res.obj_attributes = attr->attr;
  res.access = *granted;
  return now;
}

Awaitable<nfs3::AccessRes> MetadataCache::access(const CallContext& ctx, nfs3::AccessArgs args) {
  if (!windows_.strict()) {
    // The step passed: its records may only be on disk, the attributes' window
    // may have ended.
    co_await attrs_.cached(args.object);
    co_await perms_.load(ctx.cred, args.object);
    Asked asked;
    auto hit = co_await hit_revalidating(ctx, args, Proc::Access, asked, &MetadataCache::access_hit);
    if (hit) co_return std::move(*hit);
  }
  // An unknown permission is learnt from the origin's answer itself.
  count(Proc::Access, ExportCounters::Calls);
  count(Proc::Access, ExportCounters::Misses);
  count(Proc::Access, ExportCounters::OriginCalls);
  const nfs3::FileHandle fh = args.object;
  const std::uint32_t bits = args.access;
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::AccessRes res = co_await next_.access(ctx, std::move(args));
  if (!res.gateway_status && res.obj_attributes) {
    AttrPtr rec = co_await attrs_.learn(fh, *res.obj_attributes, seq);
    if (res.status == Status::Ok && describes(rec, *res.obj_attributes))
      perms_.learn(ctx.cred, fh, *res.obj_attributes, bits, res.access);
  }
  forget_if_gone(fh, res.status, res.gateway_status);
  co_return res;
}

// ---- READLINK -----------------------------------------------------------------

Awaitable<nfs3::ReadlinkRes> MetadataCache::readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) {
  count(Proc::Readlink, ExportCounters::Calls);
  const nfs3::FileHandle fh = args.symlink;
  Fresh f = co_await fresh_attr(ctx, fh, Proc::Readlink, windows_.strict());
  if (f.attr && f.attr->attr.type == nfs3::FileType::Lnk) {
    auto link = co_await find<cache::LinkRecord>(store_, key(fh));
    if (link && link->link == cache::Stamp::of(f.attr->attr)) {
      const Permit p = co_await perms_.check(ctx.cred, fh, f.attr->attr, nfs3::access::Read);
      if (p == Permit::Yes) {
        count(Proc::Readlink, ExportCounters::Hits);
        nfs3::ReadlinkRes res;
        res.symlink_attributes = f.attr->attr;
        res.data = link->target;
        co_return res;
      }
      if (p == Permit::Unknown) co_await learn_access_later(ctx, fh);
    }
  }
  count(Proc::Readlink, ExportCounters::Misses);
  count(Proc::Readlink, ExportCounters::OriginCalls);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::ReadlinkRes res = co_await next_.readlink(ctx, std::move(args));
  if (!res.gateway_status && res.symlink_attributes) {
    AttrPtr rec = co_await attrs_.learn(fh, *res.symlink_attributes, seq);
    if (res.status == Status::Ok && describes(rec, *res.symlink_attributes))
      store_.put<cache::LinkRecord>(key(fh), cache::LinkRecord{cache::Stamp::of(rec->attr), res.data});
  } else if (!res.gateway_status && gone(res.status)) {
    store_.erase_object(key(fh));
  }
  co_return res;
}

// ---- LOOKUP -------------------------------------------------------------------

Now<nfs3::LookupRes> MetadataCache::lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) {
  // Never under strict: there the directory's GETATTR to the origin comes first.
  if (windows_.strict()) return {};
  Asked none;
  return lookup_hit(ctx, args, none);
}

// LOOKUP's one hit logic: lookup_now's with memory alone, lookup()'s once it has
// brought records in and revalidated attributes.
Now<nfs3::LookupRes> MetadataCache::lookup_hit(const CallContext& ctx, const nfs3::LookupArgs& args,
                                               Asked& asked) {
  auto now = Now<nfs3::LookupRes>::for_call(ctx);
  cache::AnswerBasis& basis = now.basis;
  const nfs3::FileHandle& dir = args.what.dir;
  const AttrPtr d = usable_attr(dir, asked, basis);
  if (!d || d->attr.type != nfs3::FileType::Dir) return {};
  // Looked at before the name: a permission not known is learnt at the first miss
  // already, so that the next LOOKUP in this directory (a second probe of a
  // missing name) is answered.
  const auto permit = perms_.check_now(ctx.cred, dir, d->attr, nfs3::access::Lookup, basis);
  if (permit == Permit::Unknown) asked.permission_unknown = dir;
  if (permit != Permit::Yes) return {};
  auto found = peek_now<cache::LookupRecord>(store_, name_key(dir, args.what.name), basis);
  if (!found || !*found) return {};
  const cache::LookupRecord& rec = **found;
  if (rec.dir_gen != d->gen || !(rec.exists || windows_.fresh_negative(rec.expires, basis))) return {};
  nfs3::LookupRes& res = now.res.emplace();
  res.dir_attributes = d->attr;
  if (!rec.exists) {
    res.status = Status::NoEnt;
  } else {
    res.object = rec.child;
    // The child's attributes come with the answer. Strict leaves them out (the
    // client asks GETATTR itself): only the directory was asked of the origin in
    // this call, and a strict answer carries nothing older than the origin's
    // (issue 18).
    if (!asked.origin_only) {
      const AttrPtr child = usable_attr(rec.child, asked, basis);
      if (!child) return {};
      res.obj_attributes = child->attr;
    }
  }
  count(Proc::Lookup, ExportCounters::Calls, basis);
  count(Proc::Lookup, ExportCounters::Hits, basis);
  basis.vouch();
  return now;
}

Awaitable<void> MetadataCache::load_lookup_records(const Credentials& cred, const nfs3::DirOpArgs& what,
                                                   bool with_attrs) {
  const auto nk = name_key(what.dir, what.name);
  std::shared_ptr<const cache::LookupRecord> rec = co_await find<cache::LookupRecord>(store_, nk);
  co_await perms_.load(cred, what.dir);
  if (!with_attrs) co_return;
  co_await attrs_.cached(what.dir);
  if (rec && rec->exists) co_await attrs_.cached(rec->child);
}

Awaitable<nfs3::LookupRes> MetadataCache::lookup(const CallContext& ctx, nfs3::LookupArgs args) {
  const nfs3::FileHandle& dir = args.what.dir;
  const std::string& name = args.what.name;
  // The step passed: its records may only be on disk, the attributes' windows may
  // have ended. Strict: it is given the directory's attributes from the origin.
  // One answer under one setting, across a reload.
  Asked asked;
  asked.origin_only = windows_.strict();
  co_await load_lookup_records(ctx.cred, args.what, !asked.origin_only);
  auto hit = co_await hit_revalidating(ctx, args, Proc::Lookup, asked, &MetadataCache::lookup_hit);
  if (hit) co_return std::move(*hit);
  if (asked.permission_unknown) co_await learn_access_later(ctx, *asked.permission_unknown);
  // A child the origin says is gone takes its name with it.
  if (asked.gone && *asked.gone != dir) store_.erase<cache::LookupRecord>(name_key(dir, name));
  count(Proc::Lookup, ExportCounters::Calls);
  count(Proc::Lookup, ExportCounters::Misses);
  co_return co_await lookup_origin(ctx, dir, name);
}

Awaitable<nfs3::LookupRes> MetadataCache::lookup_origin(const CallContext& ctx, const nfs3::FileHandle& dir,
                                                        const std::string& name) {
  const CallContext shared = shared_work(ctx);  // others may join this fetch
  auto fetch = [&]() -> Awaitable<nfs3::LookupRes> {
    const std::uint64_t seq = attrs_.next_seq();
    count(Proc::Lookup, ExportCounters::OriginCalls);
    // Named: GCC 12 destroys a braced temporary inside a co_await expression twice.
    nfs3::LookupArgs forwarded{nfs3::DirOpArgs{dir, name}};
    nfs3::LookupRes res = co_await next_.lookup(shared, std::move(forwarded));
    if (res.gateway_status) co_return res;
    AttrPtr drec;
    if (res.dir_attributes) drec = co_await attrs_.learn(dir, *res.dir_attributes, seq);
    // Only an answer that is the newest word on the directory may be kept.
    const bool current = res.dir_attributes && describes(drec, *res.dir_attributes);
    if (res.status == Status::Ok) {
      co_await attrs_.learn(res.object, res.obj_attributes, seq);
      if (current)
        store_.put<cache::LookupRecord>(name_key(dir, name),
                                        cache::LookupRecord{true, res.object, drec->gen, cache::kNever});
    } else if (res.status == Status::NoEnt) {
      if (current)
        store_.put<cache::LookupRecord>(
            name_key(dir, name), cache::LookupRecord{false, {}, drec->gen, windows_.negative_expiry()});
    } else if (gone(res.status)) {
      store_.erase_object(key(dir));
    }
    co_return res;
  };
  if (windows_.strict()) co_return co_await fetch();  // joins no earlier LOOKUP (see origin_getattr)
  std::string flight = handle_key('l', dir) + '/' + name + '/' + cred_key(ctx.cred);
  // For a waiter whose client leaves; the fetch goes on.
  nfs3::LookupRes left = made_up<nfs3::LookupRes>(Status::Jukebox);
  SingleFlight<nfs3::LookupRes>::Leave leave{ctx.caller_gone, std::move(left)};
  co_return co_await lookup_flights_.run(std::move(flight), fetch, nullptr, std::move(leave));
}

// ---- calls that only teach ----------------------------------------------------

Awaitable<nfs3::ReadRes> MetadataCache::read(const CallContext& ctx, nfs3::ReadArgs args) {
  const nfs3::FileHandle fh = args.file;
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::ReadRes res = co_await next_.read(ctx, std::move(args));
  if (!res.gateway_status) co_await attrs_.learn(fh, res.file_attributes, seq);
  forget_if_gone(fh, res.status, res.gateway_status);
  co_return res;
}

Awaitable<nfs3::WriteRes> MetadataCache::write(const CallContext& ctx, nfs3::WriteArgs args) {
  const nfs3::FileHandle fh = args.file;
  const std::vector<nfs3::FileHandle> touched{fh};
  const JournalScope noted = co_await note_change(touched);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::WriteRes res = co_await next_.write(ctx, std::move(args));
  if (!res.gateway_status) co_await learn_wcc(fh, res.file_wcc, seq);
  forget_if_gone(fh, res.status, res.gateway_status);
  co_return res;
}

Awaitable<nfs3::CommitRes> MetadataCache::commit(const CallContext& ctx, nfs3::CommitArgs args) {
  const nfs3::FileHandle fh = args.file;
  const std::vector<nfs3::FileHandle> touched{fh};
  const JournalScope noted = co_await note_change(touched);  // usually still written down by its WRITEs
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::CommitRes res = co_await next_.commit(ctx, std::move(args));
  if (!res.gateway_status) co_await learn_wcc(fh, res.file_wcc, seq);
  forget_if_gone(fh, res.status, res.gateway_status);
  co_return res;
}

}  // namespace nfsgw::metacache
