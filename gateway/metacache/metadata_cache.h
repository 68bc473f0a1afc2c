// The metadata cache: an Nfs3Program layer, per export, between the handle
// translator and the forwarder. It works with ORIGIN handles.
//
// What it answers without the origin, inside the export's windows
// (cache/coherency.h): GETATTR, LOOKUP (found and not found), ACCESS, READLINK,
// READDIR and READDIRPLUS (from whole listings, re-paged), FSINFO, PATHCONF and
// FSSTAT. Everything else is forwarded, and every reply teaches it: attributes
// from every post-op and WCC block, listings and lookups changed in place when the
// WCC pre-op attributes show that only this call changed the directory.
//
// Rules it keeps:
//  - a cached LOOKUP, listing or link target goes only to a caller whose
//    permission is known (permissions.h); otherwise the call goes to the origin;
//  - only what the origin said is stored: results whose status the gateway made up
//    (gateway_status) are never cached;
//  - at the end of a window an entry is revalidated with one GETATTR, and kept
//    (with everything that depends on it) when the object is unchanged;
//  - concurrent misses for the same entry make one origin call.
// The one-file-per-concern split: attributes.h (learning attributes), permissions.h,
// listing.h (listings and pages), metadata_cache_*.cpp (the procedures by kind).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cache/answer_basis.h"
#include "cache/coherency.h"
#include "cache/metadata_store.h"
#include "gateway/metacache/attributes.h"
#include "gateway/metacache/journal_await.h"
#include "gateway/metacache/listing.h"
#include "gateway/metacache/metacache_stats.h"
#include "gateway/metacache/permissions.h"
#include "gateway/single_flight.h"
#include "gateway/metacache/windows.h"
#include "gateway/forwarding_program.h"

namespace nfsgw::metacache {

class MetadataCache final : public ForwardingProgram<MetadataCache> {
 public:
  /// `next` is the layer below (the forwarder); all references must outlive this.
  /// `space` is where its records live in `store` (config::ExportConfig::cache_space):
  /// the caches of exports of one origin share a space, and then must share one
  /// `sequence` too (it orders their replies and numbers their generations); null
  /// gives this cache a sequence of its own.
  MetadataCache(Nfs3Program& next, cache::MetadataStore& store, std::uint32_t space,
                const cache::CoherencySettings& settings, const cache::Clock& clock,
                Sequence* sequence = nullptr);

  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) override;
  Awaitable<nfs3::SetattrRes> setattr(const CallContext& ctx, nfs3::SetattrArgs args) override;
  Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) override;
  Awaitable<nfs3::AccessRes> access(const CallContext& ctx, nfs3::AccessArgs args) override;
  Awaitable<nfs3::ReadlinkRes> readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) override;
  Awaitable<nfs3::ReadRes> read(const CallContext& ctx, nfs3::ReadArgs args) override;
  Awaitable<nfs3::WriteRes> write(const CallContext& ctx, nfs3::WriteArgs args) override;
  Awaitable<nfs3::CreateRes> create(const CallContext& ctx, nfs3::CreateArgs args) override;
  Awaitable<nfs3::MkdirRes> mkdir(const CallContext& ctx, nfs3::MkdirArgs args) override;
  Awaitable<nfs3::SymlinkRes> symlink(const CallContext& ctx, nfs3::SymlinkArgs args) override;
  Awaitable<nfs3::MknodRes> mknod(const CallContext& ctx, nfs3::MknodArgs args) override;
  Awaitable<nfs3::RemoveRes> remove(const CallContext& ctx, nfs3::RemoveArgs args) override;
  Awaitable<nfs3::RmdirRes> rmdir(const CallContext& ctx, nfs3::RmdirArgs args) override;
  Awaitable<nfs3::RenameRes> rename(const CallContext& ctx, nfs3::RenameArgs args) override;
  Awaitable<nfs3::LinkRes> link(const CallContext& ctx, nfs3::LinkArgs args) override;
  Awaitable<nfs3::ReaddirRes> readdir(const CallContext& ctx, nfs3::ReaddirArgs args) override;
  Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx,
                                              nfs3::ReaddirplusArgs args) override;
  Awaitable<nfs3::FsstatRes> fsstat(const CallContext& ctx, nfs3::FsstatArgs args) override;
  Awaitable<nfs3::FsinfoRes> fsinfo(const CallContext& ctx, nfs3::FsinfoArgs args) override;
  Awaitable<nfs3::PathconfRes> pathconf(const CallContext& ctx, nfs3::PathconfArgs args) override;
  Awaitable<nfs3::CommitRes> commit(const CallContext& ctx, nfs3::CommitArgs args) override;

  Now<nfs3::GetattrRes> getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) override;
  Now<nfs3::LookupRes> lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) override;
  Now<nfs3::AccessRes> access_now(const CallContext& ctx, const nfs3::AccessArgs& args) override;

  /// `nfsgw invalidate`: drops the cached entries of the object reached from the
  /// export root `root` along `components` (names, followed through cached
  /// lookups), and with `recursive` of everything cached below it (the whole
  /// export when `components` is empty: the whole cache space, so every export of
  /// the same origin too). Returns the number of objects dropped, or
  /// nullopt when the path is not in the cache. `dropped` (when given) is called
  /// with each object's origin handle (not for the whole export). Blocking: not
  /// for Asio threads.
  std::optional<std::size_t> invalidate(
      const nfs3::FileHandle& root, const std::vector<std::string>& components, bool recursive,
      const std::function<void(const nfs3::FileHandle&)>& dropped = {});

  /// A lock was granted on `fh` (gateway/nlm/): its cached attributes go, so that
  /// the next GETATTR asks the origin and the file's cached data is checked
  /// against what the origin holds (docs/configuration.md, *Locks*).
  void forget_attributes(const nfs3::FileHandle& fh) { store_.erase<cache::AttrRecord>(key(fh)); }

  const ExportCounters& counters() const { return counters_; }

  /// Changes write down what they may make stale in `journal` before they are sent
  /// (cache/change_journal.h), so that no crash brings back the state before them.
  /// Without one (unit tests) a crash may. Set before the first call.
  void use_journal(cache::ChangeJournal* journal) { journal_ = journal; }

  /// A configuration reload: the export's windows from now on (consistency,
  /// access_check, the *_ttl durations; `enabled` is not looked at). `settings`
  /// must outlive this cache. Calls in flight may see either; entries cached
  /// before keep their expiry.
  void set_settings(const cache::CoherencySettings* settings) { windows_.set(settings); }
  const cache::CoherencySettings& settings() const { return windows_.settings(); }

 private:
  /// Attributes usable now: cached inside the window, or asked from the origin
  /// with one GETATTR (strict mode: always asked). Status is the origin's when it
  /// could not be had.
  struct Fresh {
    nfs3::Status status = nfs3::Status::Ok;
    bool gateway_status = false;
    AttrPtr attr;
  };
  Awaitable<Fresh> fresh_attr(const CallContext& ctx, const nfs3::FileHandle& fh, nfs3::Proc for_proc,
                              bool force_origin);
  /// fresh_attr's hot path without a coroutine frame: the answer when a record in
  /// memory is inside its window, else an empty Fresh (then co_await fresh_attr).
  /// What was read goes into `basis` (through peek_now).
  Fresh fresh_in_memory(const nfs3::FileHandle& fh, bool force_origin, cache::AnswerBasis& basis);
  /// One origin GETATTR, shared by concurrent callers; learns the answer.
  Awaitable<Fresh> origin_getattr(const CallContext& ctx, const nfs3::FileHandle& fh,
                                  nfs3::Proc for_proc);

  // LOOKUP and ACCESS: the hit is the answer step's (lookup_hit, access_hit); the
  // coroutine brings records from disk and revalidates attributes for it, then
  // asks it again.
  /// Between a step and its coroutine: the coroutine gives the attributes the
  /// origin sent during the call, which the step uses whatever their window (they
  /// are no older than the call); the step tells, when it passes, what it lacked.
  struct Asked {
    std::vector<std::pair<nfs3::FileHandle, AttrPtr>> attrs;
    /// Strict: nothing but `attrs` may be used, and a LOOKUP leaves the child's
    /// attributes out (only the cache has them).
    bool origin_only = false;
    std::optional<nfs3::FileHandle> attr_wanted;         // no usable attributes
    std::optional<nfs3::FileHandle> permission_unknown;  // the caller's, to be learnt
    std::optional<nfs3::FileHandle> gone;                // so the origin said, asked for attributes
  };
  /// The attributes of `fh` the step may use: given in `asked`, or in memory inside
  /// their window. Null when there are none, and then `asked.attr_wanted` is `fh`.
  AttrPtr usable_attr(const nfs3::FileHandle& fh, Asked& asked, cache::AnswerBasis& basis);
  Now<nfs3::LookupRes> lookup_hit(const CallContext& ctx, const nfs3::LookupArgs& args, Asked& asked);
  Now<nfs3::AccessRes> access_hit(const CallContext& ctx, const nfs3::AccessArgs& args, Asked& asked);
  /// Asks `hit` for the answer; while it passes for want of an object's
  /// attributes, asks the origin for them with one GETATTR and asks again. Nullopt
  /// when it still passes; `asked` then says why.
  template <typename Res, typename Args>
  Awaitable<std::optional<Res>> hit_revalidating(
      const CallContext& ctx, const Args& args, nfs3::Proc proc, Asked& asked,
      Now<Res> (MetadataCache::*hit)(const CallContext&, const Args&, Asked&));
  /// Brings what lookup_hit reads into memory when it is only on disk; the
  /// attributes only `with_attrs` (strict asks the origin for them).
  Awaitable<void> load_lookup_records(const Credentials& cred, const nfs3::DirOpArgs& what, bool with_attrs);
  /// A LOOKUP's miss: forwarded (shared by concurrent callers), and learnt from.
  Awaitable<nfs3::LookupRes> lookup_origin(const CallContext& ctx, const nfs3::FileHandle& dir,
                                           const std::string& name);
  /// Asks the origin what `ctx` may do on `fh` and learns it (also in the background).
  Awaitable<void> learn_access(CallContext ctx, nfs3::FileHandle fh);
  /// Starts learn_access() without waiting for it.
  Awaitable<void> learn_access_later(const CallContext& ctx, const nfs3::FileHandle& fh);

  // Listings (metadata_cache_dirs.cpp).
  struct Filled {
    nfs3::Status status = nfs3::Status::Ok;
    bool gateway_status = false;
    nfs3::PostOpAttr dir_attributes;
    ListingPtr listing;  // null when the origin's answer could not be kept
  };
  Awaitable<ListingPtr> cached_listing(const nfs3::FileHandle& dir, const cache::AttrRecord& attr);
  Awaitable<Filled> fill_listing(const CallContext& ctx, const nfs3::FileHandle& dir, nfs3::Proc proc);
  /// The listing to serve `ctx` from, or null: then `refused` (when set) is the
  /// origin's refusal to answer with, else the call is forwarded.
  Awaitable<ListingPtr> listing_for(const CallContext& ctx, const nfs3::FileHandle& dir,
                                    std::uint32_t bits, nfs3::Proc proc, AttrPtr& dir_attr,
                                    std::optional<Filled>& refused);

  // Changes (metadata_cache_changes.cpp).
  /// Writes `objects` down in the journal; the change they are part of must hold
  /// the scope until it has learnt from the reply.
  Awaitable<JournalScope> note_change(const std::vector<nfs3::FileHandle>& objects);
  /// After a change of `dir` with `wcc`: applies `edit` to the cached listing and
  /// lookups in place when the pre-op attributes match the cache, then learns the
  /// post-op attributes.
  /// After a change whose effect on `dir`'s names is not known: what depends on
  /// them is dropped, and the attributes the reply gives are kept.
  Awaitable<void> entries_unknown(const nfs3::FileHandle& dir, const nfs3::WccData& wcc, std::uint64_t seq);
  Awaitable<void> dir_changed(const nfs3::FileHandle& dir, const nfs3::WccData& wcc, std::uint64_t seq,
                              const std::function<void(std::uint64_t gen, const cache::ListingRecord*)>& edit);
  Awaitable<void> learn_wcc(const nfs3::FileHandle& fh, const nfs3::WccData& wcc, std::uint64_t seq);
  /// The origin answered `status` about `fh`: STALE (or NOENT, BADHANDLE) from the
  /// origin itself drops every record of the object, whichever call it answered.
  void forget_if_gone(const nfs3::FileHandle& fh, nfs3::Status status, bool gateway_status);
  /// Records `name` -> `child` in `dir` under `gen` (listing and lookup).
  void put_entry(const nfs3::FileHandle& dir, std::uint64_t gen, const cache::ListingRecord* listing,
                 const std::string& name, const nfs3::FileHandle& child, std::uint64_t fileid);
  void put_absent(const nfs3::FileHandle& dir, std::uint64_t gen, const cache::ListingRecord* listing,
                  const std::string& name);
  Awaitable<nfs3::CreateRes> made(const CallContext& ctx, const nfs3::DirOpArgs& where,
                                  std::uint64_t seq, nfs3::CreateRes res);
  /// CREATE, MKDIR, SYMLINK, MKNOD: forwarded, then learnt from by made().
  template <typename Args>
  Awaitable<nfs3::CreateRes> make_object(const CallContext& ctx, Args args, nfs3::Proc proc,
                                         Awaitable<nfs3::CreateRes> (Nfs3Program::*method)(const CallContext&,
                                                                                           Args));
  /// REMOVE, RMDIR: forwarded, then learnt from by unlinked().
  Awaitable<nfs3::RemoveRes> unlink_name(const CallContext& ctx, nfs3::RemoveArgs args, nfs3::Proc proc,
                                         Awaitable<nfs3::RemoveRes> (Nfs3Program::*method)(const CallContext&,
                                                                                           nfs3::RemoveArgs));
  Awaitable<nfs3::RemoveRes> unlinked(const nfs3::DirOpArgs& what, std::uint64_t seq,
                                      const std::vector<nfs3::FileHandle>& victims, nfs3::RemoveRes res);
  /// The objects that `name` in `dir` may stand for, before a call unlinks or
  /// replaces it: their records must go once it is done (a removed hard link
  /// changes the link count and ctime of an object that keeps other names). The
  /// origin is asked with one LOOKUP as the caller, and a cached child that differs
  /// is named too; only an immutable export answers from a current cached lookup
  /// (nothing changes its tree behind nfsgw). Empty when the name is absent.
  struct Named {
    std::optional<nfs3::FileHandle> now;  // what the name stands for now, when it exists
    std::vector<nfs3::FileHandle> all;    // every object whose records must go
    /// The origin said what the name stands for (an object or NOENT), or the
    /// cache may trust its own lookup. False when the LOOKUP was refused or not
    /// answered: then the change's effect on the names is not known either.
    bool known = false;
  };
  Awaitable<Named> named_objects(const CallContext& ctx, const nfs3::FileHandle& dir, const std::string& name);

  // FSINFO, PATHCONF, FSSTAT (metadata_cache_fs.cpp).
  template <typename Res, typename Args>
  Awaitable<Res> fs_info(const CallContext& ctx, Args args, nfs3::FileHandle fh,
                         cache::FsKind kind, nfs3::Proc proc,
                         Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args));

  cache::ObjectKey key(const nfs3::FileHandle& fh) const { return {space_, fh}; }
  cache::NameKey name_key(const nfs3::FileHandle& dir, const std::string& name) const {
    return {{space_, dir}, name};
  }
  void count(nfs3::Proc p, ExportCounters::Field f) { counters_.mine(p, f).fetch_add(1, std::memory_order_relaxed); }
  /// The same for an answer given at once: a copy of it counts as that answer.
  void count(nfs3::Proc p, ExportCounters::Field f, cache::AnswerBasis& basis) { basis.count(counters_.mine(p, f)); }

  cache::MetadataStore& store_;
  cache::ChangeJournal* journal_ = nullptr;
  std::uint32_t space_;
  Windows windows_;  // holds the export's settings
  std::unique_ptr<Sequence> own_seq_;  // when not given one to share
  Sequence& seq_;
  Attributes attrs_;
  Permissions perms_;
  ExportCounters counters_;
  SingleFlight<Fresh> getattr_flights_;
  SingleFlight<Filled> fill_flights_;
  SingleFlight<nfs3::LookupRes> lookup_flights_;
  SingleFlight<bool> access_flights_;
  /// Directories found too large to keep whole: forwarded from then on, instead
  /// of being read whole again on every page (until nfsgw restarts).
  std::mutex too_big_mu_;
  std::unordered_set<std::string> too_big_;
};

}  // namespace nfsgw::metacache
