// The metadata cache: calls that change the file system. Each is forwarded first;
// the cache then learns from the origin's reply. When a directory's WCC pre-op
// attributes match the cached ones, this call alone changed it, so its listing and
// lookups are edited in place (an entry inserted, removed or renamed) and keep
// their generation; otherwise the directory gets a new generation and they are
// fetched again on next use. Negative entries for a created name are replaced, and
// a removed or renamed object's own entries are dropped.
#include "gateway/metacache/metadata_cache.h"
#include "gateway/metacache/store_await.h"

namespace nfsgw::metacache {

using nfs3::Proc;
using nfs3::Status;
using DirEdit = std::function<void(std::uint64_t gen, const cache::ListingRecord*)>;

Awaitable<JournalScope> MetadataCache::note_change(const std::vector<nfs3::FileHandle>& objects) {
  if (journal_ == nullptr) co_return JournalScope{};
  std::vector<cache::ObjectKey> keys;
  keys.reserve(objects.size());
  for (const auto& o : objects) keys.push_back(key(o));
  // Still written down by an earlier change (a stream of WRITEs): no hop through
  // the journal's thread.
  if (journal_->try_begin(keys)) co_return JournalScope(journal_, std::move(keys));
  auto begun = journal_begin(journal_, std::move(keys));
  co_return co_await std::move(begun);
}

Awaitable<void> MetadataCache::learn_wcc(const nfs3::FileHandle& fh, const nfs3::WccData& wcc,
                                         std::uint64_t seq) {
  if (!wcc.after) co_return;
  AttrPtr cur = co_await attrs_.cached(fh);
  if (cur && wcc.before && same_as(*wcc.before, cur->attr)) {
    // Changed only by this call (data or attributes): what depends on the
    // object's entries, not on its attributes, stays true.
    const InPlace in_place{*wcc.before, cur->gen};
    co_await attrs_.learn(fh, *wcc.after, seq, &in_place);
  } else {
    co_await attrs_.learn(fh, *wcc.after, seq);
  }
}

Awaitable<void> MetadataCache::dir_changed(
    const nfs3::FileHandle& dir, const nfs3::WccData& wcc, std::uint64_t seq,
    const std::function<void(std::uint64_t gen, const cache::ListingRecord*)>& edit) {
  if (!wcc.after) {
    // Nothing learnt about the directory after the change: forget what depends on it.
    attrs_.forget(dir);
    co_return;
  }
  AttrPtr cur = co_await attrs_.cached(dir);
  if (cur && wcc.before && same_as(*wcc.before, cur->attr)) {
    ListingPtr l = co_await cached_listing(dir, *cur);
    edit(cur->gen, l.get());
    const InPlace in_place{*wcc.before, cur->gen};
    co_await attrs_.learn(dir, *wcc.after, seq, &in_place);
  } else {
    co_await attrs_.learn(dir, *wcc.after, seq);
  }
}

Awaitable<void> MetadataCache::entries_unknown(const nfs3::FileHandle& dir, const nfs3::WccData& wcc,
                                               std::uint64_t seq) {
  // A directory learnt afresh gets a new generation, whatever its attributes: its
  // listing and lookups, filed under the old one, are not used again.
  attrs_.forget(dir);
  if (wcc.after) co_await attrs_.learn(dir, *wcc.after, seq);
}

void MetadataCache::put_entry(const nfs3::FileHandle& dir, std::uint64_t gen,
                              const cache::ListingRecord* listing, const std::string& name,
                              const nfs3::FileHandle& child, std::uint64_t fileid) {
  if (listing) store_.put<cache::ListingRecord>(key(dir), *with_entry(*listing, gen, name, fileid, child));
  store_.put<cache::LookupRecord>(name_key(dir, name), cache::LookupRecord{true, child, gen, cache::kNever});
}

void MetadataCache::put_absent(const nfs3::FileHandle& dir, std::uint64_t gen,
                               const cache::ListingRecord* listing, const std::string& name) {
  if (listing) store_.put<cache::ListingRecord>(key(dir), *without_entry(*listing, gen, name));
  store_.put<cache::LookupRecord>(name_key(dir, name),
                                  cache::LookupRecord{false, {}, gen, windows_.negative_expiry()});
}

Awaitable<MetadataCache::Named> MetadataCache::named_objects(const CallContext& ctx, const nfs3::FileHandle& dir,
                                                             const std::string& name) {
  Named out;
  auto rec = co_await find<cache::LookupRecord>(store_, name_key(dir, name));
  // Only an immutable export may trust its cached lookup: anywhere else the name
  // may have been given to another object on the origin inside the window, and
  // that object (another name of it keeps it alive) would keep attributes older
  // than this change. Found by nfsgw-difftest (docs/difftest.md).
  if (windows_.immutable() && rec) {
    AttrPtr d = co_await attrs_.cached(dir);
    if (d && windows_.fresh_attr(*d, kNoBasis) && rec->dir_gen == d->gen &&
        (rec->exists || windows_.fresh_negative(rec->expires, kNoBasis))) {
      if (rec->exists) {
        out.now = rec->child;
        out.all.push_back(rec->child);
      }
      out.known = true;
      co_return out;
    }
  }
  // Not known for sure: ask. Whatever the answer, the call that follows decides.
  count(Proc::Lookup, ExportCounters::OriginCalls);
  nfs3::LookupArgs args{nfs3::DirOpArgs{dir, name}};
  const nfs3::LookupRes found = co_await next_.lookup(ctx, std::move(args));
  if (found.status == Status::Ok) {
    out.now = found.object;
    out.all.push_back(found.object);
  }
  out.known = !found.gateway_status && (found.status == Status::Ok || found.status == Status::NoEnt);
  if (rec && rec->exists && !(out.now && *out.now == rec->child)) out.all.push_back(rec->child);
  co_return out;
}

// ---- CREATE, MKDIR, SYMLINK, MKNOD --------------------------------------------

Awaitable<nfs3::CreateRes> MetadataCache::made(const CallContext& ctx, const nfs3::DirOpArgs& where,
                                               std::uint64_t seq, nfs3::CreateRes res) {
  if (res.gateway_status) co_return res;
  // An UNCHECKED or EXCLUSIVE CREATE may have opened (and truncated) an object
  // that is cached already: written down before what the reply says of it is
  // learnt, as every change is. A new object has nothing a crash could bring back.
  std::optional<JournalScope> opened;
  if (res.status == Status::Ok && res.obj && co_await attrs_.cached(*res.obj)) {
    const std::vector<nfs3::FileHandle> touched{*res.obj};
    opened.emplace(co_await note_change(touched));
  }
  if (res.status == Status::Ok) {
    if (res.obj) co_await attrs_.learn(*res.obj, res.obj_attributes, seq);
    const bool known = res.obj && res.obj_attributes;
    const DirEdit edit = [&](std::uint64_t gen, const cache::ListingRecord* l) {
      if (known) {
        put_entry(where.dir, gen, l, where.name, *res.obj, res.obj_attributes->fileid);
      } else {
        // Created, but not told as what: learn it on next use.
        store_.erase<cache::ListingRecord>(key(where.dir));
        store_.erase<cache::LookupRecord>(name_key(where.dir, where.name));
      }
    };
    co_await dir_changed(where.dir, res.dir_wcc, seq, edit);
  } else {
    co_await learn_wcc(where.dir, res.dir_wcc, seq);
    if (res.status == Status::Stale) store_.erase_object(key(where.dir));
  }
  co_return res;
}

template <typename Args>
Awaitable<nfs3::CreateRes> MetadataCache::make_object(
    const CallContext& ctx, Args args, Proc proc,
    Awaitable<nfs3::CreateRes> (Nfs3Program::*method)(const CallContext&, Args)) {
  count(proc, ExportCounters::OriginCalls);
  const nfs3::DirOpArgs where = args.where;
  const std::vector<nfs3::FileHandle> touched{where.dir};
  const JournalScope noted = co_await note_change(touched);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::CreateRes res = co_await (next_.*method)(ctx, std::move(args));
  co_return co_await made(ctx, where, seq, std::move(res));
}

Awaitable<nfs3::CreateRes> MetadataCache::create(const CallContext& ctx, nfs3::CreateArgs args) {
  return make_object(ctx, std::move(args), Proc::Create, &Nfs3Program::create);
}

Awaitable<nfs3::MkdirRes> MetadataCache::mkdir(const CallContext& ctx, nfs3::MkdirArgs args) {
  return make_object(ctx, std::move(args), Proc::Mkdir, &Nfs3Program::mkdir);
}

Awaitable<nfs3::SymlinkRes> MetadataCache::symlink(const CallContext& ctx, nfs3::SymlinkArgs args) {
  return make_object(ctx, std::move(args), Proc::Symlink, &Nfs3Program::symlink);
}

Awaitable<nfs3::MknodRes> MetadataCache::mknod(const CallContext& ctx, nfs3::MknodArgs args) {
  return make_object(ctx, std::move(args), Proc::Mknod, &Nfs3Program::mknod);
}

// ---- REMOVE, RMDIR --------------------------------------------------------------

Awaitable<nfs3::RemoveRes> MetadataCache::unlinked(const nfs3::DirOpArgs& what, std::uint64_t seq,
                                                   const std::vector<nfs3::FileHandle>& victims,
                                                   nfs3::RemoveRes res) {
  if (res.gateway_status) co_return res;
  if (res.status == Status::Ok) {
    const DirEdit edit = [&](std::uint64_t gen, const cache::ListingRecord* l) {
      put_absent(what.dir, gen, l, what.name);
    };
    co_await dir_changed(what.dir, res.dir_wcc, seq, edit);
    // Its link count and ctime changed, or it is gone.
    for (const auto& v : victims) store_.erase_object(key(v));
  } else {
    co_await learn_wcc(what.dir, res.dir_wcc, seq);
    if (res.status == Status::Stale) store_.erase_object(key(what.dir));
  }
  co_return res;
}

Awaitable<nfs3::RemoveRes> MetadataCache::unlink_name(
    const CallContext& ctx, nfs3::RemoveArgs args, Proc proc,
    Awaitable<nfs3::RemoveRes> (Nfs3Program::*method)(const CallContext&, nfs3::RemoveArgs)) {
  count(proc, ExportCounters::OriginCalls);
  const nfs3::DirOpArgs what = args.object;
  const std::vector<nfs3::FileHandle> victims = (co_await named_objects(ctx, what.dir, what.name)).all;
  std::vector<nfs3::FileHandle> touched = victims;
  touched.push_back(what.dir);
  const JournalScope noted = co_await note_change(touched);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::RemoveRes res = co_await (next_.*method)(ctx, std::move(args));
  co_return co_await unlinked(what, seq, victims, std::move(res));
}

Awaitable<nfs3::RemoveRes> MetadataCache::remove(const CallContext& ctx, nfs3::RemoveArgs args) {
  return unlink_name(ctx, std::move(args), Proc::Remove, &Nfs3Program::remove);
}

Awaitable<nfs3::RmdirRes> MetadataCache::rmdir(const CallContext& ctx, nfs3::RmdirArgs args) {
  return unlink_name(ctx, std::move(args), Proc::Rmdir, &Nfs3Program::rmdir);
}

// ---- RENAME, LINK ----------------------------------------------------------------

Awaitable<nfs3::RenameRes> MetadataCache::rename(const CallContext& ctx, nfs3::RenameArgs args) {
  count(Proc::Rename, ExportCounters::OriginCalls);
  const nfs3::DirOpArgs from = args.from, to = args.to;
  const Named from_named = co_await named_objects(ctx, from.dir, from.name);
  const Named to_named = co_await named_objects(ctx, to.dir, to.name);
  const std::vector<nfs3::FileHandle>& from_objects = from_named.all;
  const std::vector<nfs3::FileHandle>& replaced = to_named.all;
  // The object moved: its new name can be cached.
  const std::optional<nfs3::FileHandle> moved = from_named.now;
  std::optional<std::uint64_t> fileid;
  if (moved) {
    if (AttrPtr a = co_await attrs_.cached(*moved)) fileid = a->attr.fileid;
  }
  std::vector<nfs3::FileHandle> touched = from_objects;
  touched.insert(touched.end(), replaced.begin(), replaced.end());
  touched.push_back(from.dir);
  if (!(to.dir == from.dir)) touched.push_back(to.dir);
  const JournalScope noted = co_await note_change(touched);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::RenameRes res = co_await next_.rename(ctx, std::move(args));
  if (res.gateway_status) co_return res;
  // Two names of one object: the origin renames nothing and both names stay
  // (POSIX), so nothing is edited in place. Found by nfsgw-difftest.
  const bool same_object = moved && to_named.now && *to_named.now == *moved;
  if (res.status != Status::Ok || same_object) {
    // STALE names no handle: either directory may be the one gone (NOENT here is
    // the name's, not a directory's).
    if (res.status == Status::Stale || res.status == Status::BadHandle) {
      forget_if_gone(from.dir, res.status, false);
      forget_if_gone(to.dir, res.status, false);
    }
    co_await learn_wcc(from.dir, res.fromdir_wcc, seq);
    if (!(to.dir == from.dir)) co_await learn_wcc(to.dir, res.todir_wcc, seq);
    if (same_object && res.status == Status::Ok) store_.erase_object(key(*moved));  // its ctime may have moved
    co_return res;
  }
  if (!from_named.known || !to_named.known) {
    // The origin renamed, but a LOOKUP before it was refused or not answered, so
    // the names may have been two of one object, which the origin leaves as they
    // are (ganesha answers OK to a caller it refuses that LOOKUP). Nothing is
    // edited in place: both directories' entries are read again. Found by
    // nfsgw-difftest (docs/difftest.md).
    co_await entries_unknown(from.dir, res.fromdir_wcc, seq);
    if (!(to.dir == from.dir)) co_await entries_unknown(to.dir, res.todir_wcc, seq);
    for (const auto& m : from_objects) store_.erase_object(key(m));
    for (const auto& r : replaced) store_.erase_object(key(r));
    co_return res;
  }
  auto add_to = [&](std::uint64_t gen, const cache::ListingRecord* l) {
    if (moved && fileid) {
      put_entry(to.dir, gen, l, to.name, *moved, *fileid);
    } else {
      store_.erase<cache::ListingRecord>(key(to.dir));
      store_.erase<cache::LookupRecord>(name_key(to.dir, to.name));
    }
  };
  if (to.dir == from.dir) {
    const DirEdit edit = [&](std::uint64_t gen, const cache::ListingRecord* l) {
      ListingPtr without = l ? without_entry(*l, gen, from.name) : nullptr;
      put_absent(from.dir, gen, nullptr, from.name);
      if (without) store_.put<cache::ListingRecord>(key(from.dir), *without);
      add_to(gen, without.get());
    };
    co_await dir_changed(from.dir, res.fromdir_wcc, seq, edit);
  } else {
    const DirEdit edit_from = [&](std::uint64_t gen, const cache::ListingRecord* l) {
      put_absent(from.dir, gen, l, from.name);
    };
    co_await dir_changed(from.dir, res.fromdir_wcc, seq, edit_from);
    const DirEdit edit_to = add_to;
    co_await dir_changed(to.dir, res.todir_wcc, seq, edit_to);
  }
  // The moved object's ctime changed (and a directory's ".." may have); an
  // object that was replaced lost a link or is gone.
  for (const auto& m : from_objects) store_.erase_object(key(m));
  for (const auto& r : replaced) {
    if (!(moved && r == *moved)) store_.erase_object(key(r));
  }
  co_return res;
}

Awaitable<nfs3::LinkRes> MetadataCache::link(const CallContext& ctx, nfs3::LinkArgs args) {
  count(Proc::Link, ExportCounters::OriginCalls);
  const nfs3::FileHandle file = args.file;
  const nfs3::DirOpArgs where = args.link;
  const std::vector<nfs3::FileHandle> touched{file, where.dir};
  const JournalScope noted = co_await note_change(touched);
  const std::uint64_t seq = attrs_.next_seq();
  nfs3::LinkRes res = co_await next_.link(ctx, std::move(args));
  if (res.gateway_status) co_return res;
  co_await attrs_.learn(file, res.file_attributes, seq);
  if (res.status != Status::Ok) {
    // STALE names no handle: the file or the directory may be the one gone.
    if (res.status == Status::Stale || res.status == Status::BadHandle) {
      forget_if_gone(file, res.status, false);
      forget_if_gone(where.dir, res.status, false);
    }
    co_await learn_wcc(where.dir, res.linkdir_wcc, seq);
    co_return res;
  }
  const DirEdit edit = [&](std::uint64_t gen, const cache::ListingRecord* l) {
    if (res.file_attributes) {
      put_entry(where.dir, gen, l, where.name, file, res.file_attributes->fileid);
    } else {
      store_.erase<cache::ListingRecord>(key(where.dir));
      store_.erase<cache::LookupRecord>(name_key(where.dir, where.name));
    }
  };
  co_await dir_changed(where.dir, res.linkdir_wcc, seq, edit);
  co_return res;
}

}  // namespace nfsgw::metacache
