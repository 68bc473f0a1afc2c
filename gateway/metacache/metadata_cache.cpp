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
                                                    cache::AnswerBasis* basis) {
  if (force_origin) return {};
  auto peeked = store_.peek<cache::AttrRecord>(key(fh), basis != nullptr && basis->through_memory_layer());
  if (basis != nullptr) basis->rests_on(peeked.watch);
  if (peeked.value && windows_.fresh_attr(*peeked.value, basis)) return Fresh{Status::Ok, false, peeked.value, true};
  return {};
}

Awaitable<MetadataCache::Fresh> MetadataCache::fresh_attr(const CallContext& ctx, const nfs3::FileHandle& fh,
                                                           Proc for_proc, bool force_origin) {
  if (!force_origin) {
    // The hot path: a record in memory is read without another coroutine frame.
    auto peeked = store_.peek<cache::AttrRecord>(key(fh));
    AttrPtr rec = std::move(peeked.value);
    if (peeked.where == cache::MetadataStore::Where::OnDisk) rec = co_await attrs_.cached(fh);
    if (rec && windows_.fresh_attr(*rec)) co_return Fresh{Status::Ok, false, rec, true};
  }
  co_return co_await origin_getattr(ctx, fh, for_proc);
}

Now<nfs3::GetattrRes> MetadataCache::getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) {
  Now<nfs3::GetattrRes> now{std::nullopt, cache::AnswerBasis(ctx.refresh_records)};
  Fresh f = fresh_in_memory(args.object, windows_.strict(), &now.basis);
  if (!f.attr) return {};
  count(Proc::Getattr, ExportCounters::Calls, now.basis);
  count(Proc::Getattr, ExportCounters::Hits, now.basis);
  now.basis.vouch();
  now.res.emplace().attributes = f.attr->attr;
  return now;
}

Awaitable<nfs3::GetattrRes> MetadataCache::getattr(const CallContext& ctx, nfs3::GetattrArgs args) {
  count(Proc::Getattr, ExportCounters::Calls);
  Fresh f = fresh_in_memory(args.object, windows_.strict());
  if (!f.attr) f = co_await fresh_attr(ctx, args.object, Proc::Getattr, windows_.strict());
  nfs3::GetattrRes res;
  if (!f.attr) {
    res.status = f.status;
    res.gateway_status = f.gateway_status;
  } else {
    res.attributes = f.attr->attr;
  }
  count(Proc::Getattr, f.from_cache ? ExportCounters::Hits : ExportCounters::Misses);
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
  Now<nfs3::AccessRes> now{std::nullopt, cache::AnswerBasis(ctx.refresh_records)};
  Fresh f = fresh_in_memory(args.object, false, &now.basis);
  if (!f.attr) return {};
  const auto answer = perms_.answer_now(ctx.cred, args.object, f.attr->attr, args.access, now.basis);
  if (!answer.granted) return {};
  count(Proc::Access, ExportCounters::Calls, now.basis);
  count(Proc::Access, ExportCounters::Hits, now.basis);
  now.basis.vouch();
  nfs3::AccessRes& res = now.res.emplace();
  res.obj_attributes = f.attr->attr;
  res.access = *answer.granted;
  return now;
}

Awaitable<nfs3::AccessRes> MetadataCache::access(const CallContext& ctx, nfs3::AccessArgs args) {
  count(Proc::Access, ExportCounters::Calls);
  if (!windows_.strict()) {
    Fresh f = fresh_in_memory(args.object, false);
    if (!f.attr) f = co_await fresh_attr(ctx, args.object, Proc::Access, false);
    if (f.attr) {
      cache::AnswerBasis unused;  // a coroutine's answer is never kept
      auto now = perms_.answer_now(ctx.cred, args.object, f.attr->attr, args.access, unused);
      std::optional<std::uint32_t> granted = now.granted;
      if (!now.known) granted = co_await perms_.answer(ctx.cred, args.object, f.attr->attr, args.access);
      if (granted) {
        count(Proc::Access, ExportCounters::Hits);
        nfs3::AccessRes res;
        res.obj_attributes = f.attr->attr;
        res.access = *granted;
        co_return res;
      }
    }
  }
  count(Proc::Access, ExportCounters::Misses);
  count(Proc::Access, ExportCounters::OriginCalls);
  const nfs3::FileHandle fh = args.object;
  const std::uint32_t asked = args.access;
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::AccessRes res = co_await next_.access(ctx, std::move(args));
  if (!res.gateway_status && res.obj_attributes) {
    AttrPtr rec = co_await attrs_.learn(fh, *res.obj_attributes, seq);
    if (res.status == Status::Ok && describes(rec, *res.obj_attributes))
      perms_.learn(ctx.cred, fh, *res.obj_attributes, asked, res.access);
  }
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
  // The hit of lookup() below when every record it needs is in memory and nothing
  // is to be learnt; anything else is left to it. Never under strict: there the
  // directory's GETATTR to the origin comes first.
  if (windows_.strict()) return {};
  Now<nfs3::LookupRes> now{std::nullopt, cache::AnswerBasis(ctx.refresh_records)};
  cache::AnswerBasis& basis = now.basis;
  const nfs3::FileHandle& dir = args.what.dir;
  Fresh d = fresh_in_memory(dir, false, &basis);
  if (!d.attr || d.attr->attr.type != nfs3::FileType::Dir) return {};
  auto found = peek_now<cache::LookupRecord>(store_, name_key(dir, args.what.name), basis);
  if (!found || !*found) return {};
  const cache::LookupRecord& rec = **found;
  if (rec.dir_gen != d.attr->gen || !(rec.exists || windows_.fresh_negative(rec.expires, &basis))) return {};
  const auto permit = perms_.check_now(ctx.cred, dir, d.attr->attr, nfs3::access::Lookup, basis);
  if (!permit || *permit != Permit::Yes) return {};
  nfs3::LookupRes& res = now.res.emplace();
  res.dir_attributes = d.attr->attr;
  if (!rec.exists) {
    res.status = Status::NoEnt;
  } else {
    // The child's attributes come with the answer while fresh.
    const AttrPtr child = fresh_in_memory(rec.child, false, &basis).attr;
    if (!child) return {};  // to be revalidated: the coroutine's work
    res.object = rec.child;
    res.obj_attributes = child->attr;
  }
  count(Proc::Lookup, ExportCounters::Calls, basis);
  count(Proc::Lookup, ExportCounters::Hits, basis);
  basis.vouch();
  return now;
}

Awaitable<nfs3::LookupRes> MetadataCache::lookup(const CallContext& ctx, nfs3::LookupArgs args) {
  count(Proc::Lookup, ExportCounters::Calls);
  const nfs3::FileHandle dir = args.what.dir;
  const std::string name = args.what.name;
  const bool strict = windows_.strict();  // one answer under one setting, across a reload
  Fresh d = fresh_in_memory(dir, strict);
  if (!d.attr) d = co_await fresh_attr(ctx, dir, Proc::Lookup, strict);
  if (d.attr && d.attr->attr.type == nfs3::FileType::Dir) {
    // Hot path: records in memory are read without further coroutine frames.
    const auto nk = name_key(dir, name);
    std::shared_ptr<const cache::LookupRecord> rec = co_await find<cache::LookupRecord>(store_, nk);
    cache::AnswerBasis unused;  // a coroutine's answer is never kept
    const auto pn = perms_.check_now(ctx.cred, dir, d.attr->attr, nfs3::access::Lookup, unused);
    const Permit p = pn ? *pn : co_await perms_.check(ctx.cred, dir, d.attr->attr, nfs3::access::Lookup);
    // Learnt at the first miss already, so that the next LOOKUP in this
    // directory (a second probe of a missing name) is answered here.
    if (p == Permit::Unknown) co_await learn_access_later(ctx, dir);
    if (rec && rec->dir_gen == d.attr->gen && (rec->exists || windows_.fresh_negative(rec->expires))) {
      if (p == Permit::Yes && !rec->exists) {
        count(Proc::Lookup, ExportCounters::Hits);
        nfs3::LookupRes res;
        res.status = Status::NoEnt;
        res.dir_attributes = d.attr->attr;
        co_return res;
      }
      if (p == Permit::Yes) {
        // The child's attributes come with the answer: revalidated when their
        // window ended. Strict leaves them out (the client asks GETATTR itself):
        // only the directory was asked of the origin in this call, and a strict
        // answer carries nothing older than the origin's (issue 18).
        AttrPtr child;
        if (!strict) {
          Fresh c = fresh_in_memory(rec->child, false);
          if (!c.attr) c = co_await fresh_attr(ctx, rec->child, Proc::Lookup, false);
          child = c.attr;
          if (!c.attr && !c.gateway_status && gone(c.status)) store_.erase<cache::LookupRecord>(name_key(dir, name));
        }
        if (child || strict) {
          count(Proc::Lookup, ExportCounters::Hits);
          nfs3::LookupRes res;
          res.object = rec->child;
          if (child) res.obj_attributes = child->attr;
          res.dir_attributes = d.attr->attr;
          co_return res;
        }
      }
    }
  }
  count(Proc::Lookup, ExportCounters::Misses);
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
  co_return res;
}

Awaitable<nfs3::WriteRes> MetadataCache::write(const CallContext& ctx, nfs3::WriteArgs args) {
  const nfs3::FileHandle fh = args.file;
  const std::vector<nfs3::FileHandle> touched{fh};
  const JournalScope noted = co_await note_change(touched);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::WriteRes res = co_await next_.write(ctx, std::move(args));
  if (!res.gateway_status) co_await learn_wcc(fh, res.file_wcc, seq);
  co_return res;
}

Awaitable<nfs3::CommitRes> MetadataCache::commit(const CallContext& ctx, nfs3::CommitArgs args) {
  const nfs3::FileHandle fh = args.file;
  const std::vector<nfs3::FileHandle> touched{fh};
  const JournalScope noted = co_await note_change(touched);  // usually still written down by its WRITEs
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::CommitRes res = co_await next_.commit(ctx, std::move(args));
  if (!res.gateway_status) co_await learn_wcc(fh, res.file_wcc, seq);
  co_return res;
}

}  // namespace nfsgw::metacache
