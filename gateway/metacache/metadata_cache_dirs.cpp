// The metadata cache: READDIR and READDIRPLUS from whole listings.
//
// A listing is filled once with READDIRPLUS pages from the origin (as the caller
// who missed it, shared by concurrent callers), stamped with the directory's
// generation, and fills the lookup and attribute entries of every child, so that
// `ls -l` and a tree walk need no further calls. It is served to READDIR and
// READDIRPLUS alike, cut to each client's limits, with the gateway's own cookies.
#include <algorithm>

#include "gateway/made_up.h"
#include "gateway/metacache/metadata_cache.h"
#include "gateway/metacache/store_await.h"

namespace nfsgw::metacache {

using nfs3::Proc;
using nfs3::Status;

namespace {

/// Directories above this many entries are not kept whole (forwarded instead).
constexpr std::size_t kMaxListingEntries = 100'000;
/// Page sizes asked of the origin while filling.
constexpr std::uint32_t kFillDircount = 32 * 1024;
constexpr std::uint32_t kFillMaxcount = 256 * 1024;
/// A directory that keeps changing while it is read is not kept.
constexpr int kFillAttempts = 3;

/// A cookie the gateway gave out (from a cached listing): the origin cannot resume
/// from it, so a listing that can no longer be served from the cache is restarted.
bool ours(std::uint64_t cookie, const nfs3::CookieVerf& verf) { return cookie != 0 && verf == kCookieVerf; }

}  // namespace

Awaitable<MetadataCache::Filled> MetadataCache::fill_listing(const CallContext& ctx,
                                                             const nfs3::FileHandle& dir, Proc proc) {
  for (int attempt = 0; attempt < kFillAttempts; ++attempt) {
    const std::uint64_t seq = attrs_.next_seq();
    std::vector<cache::ListingEntry> entries;
    std::vector<std::pair<nfs3::FileHandle, nfs3::Fattr>> children;
    std::optional<cache::Stamp> stamp;
    bool changed = false, too_big = false;
    nfs3::ReaddirplusArgs args;
    args.dir = dir;
    args.dircount = kFillDircount;
    args.maxcount = kFillMaxcount;
    nfs3::PostOpAttr last_dir_attr;
    for (;;) {
      count(proc, ExportCounters::OriginCalls);
      nfs3::ReaddirplusRes page = co_await next_.readdirplus(ctx, args);
      if (page.status != Status::Ok) {
        if (!page.gateway_status) {
          co_await attrs_.learn(dir, page.dir_attributes, seq);
          if (page.status == Status::Stale || page.status == Status::BadHandle) store_.erase_object(key(dir));
        }
        co_return Filled{page.status, page.gateway_status, page.dir_attributes, nullptr};
      }
      last_dir_attr = page.dir_attributes;
      if (!page.dir_attributes) {
        changed = true;  // no way to tell which version of the directory this is
      } else if (!stamp) {
        stamp = cache::Stamp::of(*page.dir_attributes);
      } else if (*stamp != cache::Stamp::of(*page.dir_attributes)) {
        changed = true;
      }
      for (auto& e : page.entries) {
        cache::ListingEntry le{0, e.fileid, e.name, e.name_handle.value_or(nfs3::FileHandle{})};
        if (e.name_handle && e.name_attributes) children.emplace_back(*e.name_handle, *e.name_attributes);
        entries.push_back(std::move(le));
      }
      if (entries.size() > kMaxListingEntries) too_big = true;
      if (page.eof || page.entries.empty() || changed || too_big) {
        if (!page.eof && page.entries.empty()) changed = true;  // an origin that stalls
        break;
      }
      args.cookie = page.entries.back().cookie;
      args.cookieverf = page.cookieverf;
    }
    // The children are true whatever became of the listing.
    for (const auto& [fh, attr] : children) co_await attrs_.learn(fh, attr, seq);
    if (changed && attempt + 1 < kFillAttempts && !too_big) continue;
    Filled out{Status::Ok, false, last_dir_attr, nullptr};
    if (too_big) {
      std::lock_guard lock(too_big_mu_);
      too_big_.emplace(reinterpret_cast<const char*>(dir.bytes.data()), dir.len);
    }
    if (changed || too_big || !last_dir_attr) co_return out;
    AttrPtr drec = co_await attrs_.learn(dir, *last_dir_attr, seq);
    if (!describes(drec, *last_dir_attr)) co_return out;  // the directory changed meanwhile
    out.listing = build_listing(std::move(entries), drec->gen);
    store_.put<cache::ListingRecord>(key(dir), *out.listing);
    for (const auto& e : out.listing->entries) {
      if (e.child.empty()) continue;
      store_.put<cache::LookupRecord>(name_key(dir, e.name),
                                      cache::LookupRecord{true, e.child, drec->gen, cache::kNever});
    }
    co_return out;
  }
  co_return Filled{};
}

Awaitable<ListingPtr> MetadataCache::cached_listing(const nfs3::FileHandle& dir,
                                                    const cache::AttrRecord& attr) {
  auto l = co_await find<cache::ListingRecord>(store_, key(dir));
  if (l && l->dir_gen == attr.gen) co_return l;
  co_return nullptr;
}

/// The listing to serve `ctx` from, or null: then `filled` (when set) is the
/// origin's refusal to answer with, else the call is forwarded.
Awaitable<ListingPtr> MetadataCache::listing_for(const CallContext& ctx, const nfs3::FileHandle& dir,
                                                 std::uint32_t bits, Proc proc, AttrPtr& dir_attr,
                                                 std::optional<Filled>& refused) {
  Fresh d = co_await fresh_attr(ctx, dir, proc, windows_.strict());
  if (!d.attr || d.attr->attr.type != nfs3::FileType::Dir) co_return nullptr;
  dir_attr = d.attr;
  Permit p = co_await perms_.check(ctx.cred, dir, d.attr->attr, bits);
  if (p == Permit::No) co_return nullptr;
  if (ListingPtr l = co_await cached_listing(dir, *d.attr)) {
    if (p == Permit::Unknown) {
      // The listing is here but not this caller's right to it: ask, then decide.
      co_await learn_access(ctx, dir);
      if (co_await perms_.check(ctx.cred, dir, d.attr->attr, bits) != Permit::Yes) co_return nullptr;
    }
    count(proc, ExportCounters::Hits);
    co_return l;
  }
  {
    std::lock_guard lock(too_big_mu_);
    if (too_big_.count(std::string(reinterpret_cast<const char*>(dir.bytes.data()), dir.len))) co_return nullptr;
  }
  if (p == Permit::Unknown) co_await learn_access_later(ctx, dir);
  count(proc, ExportCounters::Misses);
  bool shared = false;
  std::string flight(1, 'f');
  flight.append(reinterpret_cast<const char*>(dir.bytes.data()), dir.len);
  const CallContext shared_ctx = shared_work(ctx);  // others may join this fill
  auto fill = [&]() { return fill_listing(shared_ctx, dir, proc); };
  // A waiter whose client leaves gets JUKEBOX at once (as shared); the fill goes on.
  SingleFlight<Filled>::Leave leave{ctx.caller_gone, Filled{Status::Jukebox, true, {}, nullptr}};
  Filled f = co_await fill_flights_.run(std::move(flight), fill, &shared, std::move(leave));
  if (!f.listing) {
    // The origin's own refusal goes back to the caller who asked it.
    if (!shared && f.status != Status::Ok) refused = f;
    co_return nullptr;
  }
  // Strict: a fill this call joined may have been read before the directory's
  // state this call saw; only a listing of that very version may be served.
  if (shared && windows_.strict() && f.listing->dir_gen != d.attr->gen) co_return nullptr;
  // The origin answered this caller itself, or another one while this caller's
  // right to the listing is known.
  if (shared && co_await perms_.check(ctx.cred, dir, d.attr->attr, bits) != Permit::Yes) co_return nullptr;
  if (AttrPtr now = attrs_.in_memory(dir)) dir_attr = now;
  co_return f.listing;
}

Awaitable<nfs3::ReaddirRes> MetadataCache::readdir(const CallContext& ctx, nfs3::ReaddirArgs args) {
  count(Proc::Readdir, ExportCounters::Calls);
  AttrPtr dir_attr;
  std::optional<Filled> refused;
  ListingPtr l = co_await listing_for(ctx, args.dir, nfs3::access::Read, Proc::Readdir, dir_attr, refused);
  nfs3::ReaddirRes res;
  if (refused) {
    res.status = refused->status;
    res.gateway_status = refused->gateway_status;
    res.dir_attributes = refused->dir_attributes;
    co_return res;
  }
  if (!l || (args.cookie != 0 && !ours(args.cookie, args.cookieverf))) {
    if (ours(args.cookie, args.cookieverf)) {
      res = made_up<nfs3::ReaddirRes>(Status::BadCookie);  // the client starts the listing again
      if (dir_attr) res.dir_attributes = dir_attr->attr;
      co_return res;
    }
    count(Proc::Readdir, ExportCounters::OriginCalls);
    co_return co_await next_.readdir(ctx, std::move(args));
  }
  res.dir_attributes = dir_attr->attr;
  res.cookieverf = kCookieVerf;
  std::uint32_t size = kReaddirReplyOverhead;
  std::size_t i = resume_at(*l, args.cookie);
  for (; i < l->entries.size(); ++i) {
    const auto& e = l->entries[i];
    const std::uint32_t need = readdir_entry_size(e).reply;
    if (size + need > args.count) break;
    size += need;
    res.entries.push_back(nfs3::DirEntry{e.fileid, e.name, e.cookie});
  }
  res.eof = i == l->entries.size();
  if (res.entries.empty() && !res.eof) {
    res = made_up<nfs3::ReaddirRes>(Status::TooSmall);
    res.dir_attributes = dir_attr->attr;
  }
  co_return res;
}

Awaitable<nfs3::ReaddirplusRes> MetadataCache::readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) {
  count(Proc::Readdirplus, ExportCounters::Calls);
  AttrPtr dir_attr;
  std::optional<Filled> refused;
  ListingPtr l = co_await listing_for(ctx, args.dir, nfs3::access::Read | nfs3::access::Lookup,
                                      Proc::Readdirplus, dir_attr, refused);
  nfs3::ReaddirplusRes res;
  if (refused) {
    res.status = refused->status;
    res.gateway_status = refused->gateway_status;
    res.dir_attributes = refused->dir_attributes;
    co_return res;
  }
  if (!l || (args.cookie != 0 && !ours(args.cookie, args.cookieverf))) {
    if (ours(args.cookie, args.cookieverf)) {
      res = made_up<nfs3::ReaddirplusRes>(Status::BadCookie);
      if (dir_attr) res.dir_attributes = dir_attr->attr;
      co_return res;
    }
    count(Proc::Readdirplus, ExportCounters::OriginCalls);
    co_return co_await next_.readdirplus(ctx, std::move(args));
  }
  res.dir_attributes = dir_attr->attr;
  res.cookieverf = kCookieVerf;
  std::uint32_t size = kReaddirReplyOverhead, dir_bytes = 0;
  std::size_t i = resume_at(*l, args.cookie);
  for (; i < l->entries.size(); ++i) {
    const auto& e = l->entries[i];
    AttrPtr child;
    // Strict exports leave the children's attributes out: the client asks GETATTR.
    if (!e.child.empty() && !windows_.strict()) {
      child = co_await attrs_.cached(e.child);
      if (child && !windows_.fresh_attr(*child, kNoBasis)) child = nullptr;
    }
    const EntrySize need = readdirplus_entry_size(e, child != nullptr);
    if (size + need.reply > args.maxcount || dir_bytes + need.dir_info > args.dircount) break;
    size += need.reply;
    dir_bytes += need.dir_info;
    nfs3::DirEntryPlus out{e.fileid, e.name, e.cookie, {}, {}};
    if (child) out.name_attributes = child->attr;
    if (!e.child.empty()) out.name_handle = e.child;
    res.entries.push_back(std::move(out));
  }
  res.eof = i == l->entries.size();
  if (res.entries.empty() && !res.eof) {
    res = made_up<nfs3::ReaddirplusRes>(Status::TooSmall);
    res.dir_attributes = dir_attr->attr;
  }
  co_return res;
}

}  // namespace nfsgw::metacache
