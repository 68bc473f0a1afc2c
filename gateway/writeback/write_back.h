// The write-back layer: an Nfs3Program layer, per export, between the data cache
// and the metadata cache (translator -> DataCache -> WriteBack -> MetadataCache ->
// Forwarder). It works with ORIGIN handles. Every export of nfsgw gets one while
// the dirty log is open, write-through exports too: each shows the dirty data of
// the files it shares with a write-back export.
//
// On a write-back export (`writes = "back"`):
// - WRITE: a caller the layer below grants Modify (and Extend when the write grows
//   the file; a cached ACCESS answer, or mode bits where the export says so) has
//   its data put in the dirty log (cache/dirty_log.h), synced first when it asked
//   for DATA_SYNC or FILE_SYNC, and is answered at once: FILE_SYNC or UNSTABLE,
//   with the log's write verifier and WCC data from the file's snapshot
//   (dirty_files.h). Anyone else's WRITE, and a WRITE of what is not a regular
//   file, goes to the origin (the file flushed first; see below). A full log wakes the
//   flusher; the WRITE waits up to budget_wait for room, then is answered JUKEBOX
//   (the client sends it again). A log that cannot be written answers JUKEBOX too,
//   logged: nothing is acknowledged that is not in the log.
//   A WRITE that goes to the origin is asked DATA_SYNC at least there (UNSTABLE
//   becomes DATA_SYNC) and is answered with the log's verifier too.
// - COMMIT: syncs the log, answers with its verifier.
// So every WRITE and COMMIT reply of a write-back export carries one verifier,
// the dirty log's, which changes exactly when acknowledged UNSTABLE data may have
// been lost (nfsgw restarted without a clean stop); an origin restart changes
// nothing a client holds (the flusher sends again what the origin lost). A reload
// that switches an export between through and back changes the verifier its
// clients see: they send their uncommitted data again, which is safe.
// On a write-through export, a WRITE or COMMIT of a dirty file first has the file
// flushed (Flusher::flush_file), so older dirty bytes never land over newer ones.
//
// On every export:
// - the attributes of a dirty file come from its snapshot: GETATTR, and those in
//   LOOKUP, ACCESS, READ, WRITE, SETATTR, LINK and READDIRPLUS replies;
// - READ of a dirty file: the layer below's bytes with the dirty bytes copied
//   over them, up to the snapshot's size (zeros where neither has any). A range
//   the log holds entirely is served without the origin (the caller's Read
//   permission from the layer below);
// - SETATTR of a dirty file's times (atime, mtime), by its owner (or, for the
//   server's time, by one granted Modify), with no size and no guard: the times
//   are kept with the dirty file (DirtyFiles::set_times, then the dirty log),
//   answered at once and by every GETATTR meanwhile, and sent by the flusher after the file's data and
//   COMMIT (a mode or owner in the same call goes to the origin first). Other
//   times, and any size, first have the file flushed (kept times included), then
//   go to the origin, and a size cuts what was written meanwhile; a mode or owner
//   goes at once and the snapshot takes the origin's answer. Kept times are
//   logged (DirtyLog::keep_times, synced) before the SETATTR is answered, so a
//   kill -9 or a power loss before the flush loses nothing; a log that cannot
//   take them has the SETATTR flushed and sent instead.
// - REMOVE, RENAME and the rest go through: dirty data follows the handle, and a
//   file whose last name is gone answers the flush STALE, which drops its bytes.
//
// Answer steps (GETATTR, LOOKUP, ACCESS) pass for a dirty file; for any other
// they are the layer below's, resting also on the file's stripe counter, so a
// kept copy is never given again once the file becomes dirty.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <atomic>
#include <chrono>
#include <cstdint>

#include "cache/disk_pool.h"
#include "gateway/forwarding_program.h"
#include "gateway/translator/log_limit.h"
#include "gateway/writeback/dirty_files.h"
#include "gateway/writeback/flusher.h"

namespace nfsgw::writeback {

struct WriteBackSettings {
  /// How long a WRITE waits for room in a full log before JUKEBOX.
  std::chrono::milliseconds budget_wait{10000};
};

class WriteBack final : public ForwardingProgram<WriteBack> {
 public:
  /// `space`: the export's cache space (its dirty files' keys). `back`: whether
  /// WRITEs are absorbed (a reload changes it with set_back()). The log's calls
  /// run on `pool`. All references must outlive this.
  WriteBack(Nfs3Program& next, DirtyFiles& files, Flusher& flusher, cache::DiskPool& pool, std::uint32_t space,
            bool back, WriteBackSettings settings = {});

  void set_back(bool back) { back_.store(back, std::memory_order_release); }
  bool back() const { return back_.load(std::memory_order_acquire); }

  Awaitable<nfs3::GetattrRes> getattr(const CallContext& ctx, nfs3::GetattrArgs args) override;
  Now<nfs3::GetattrRes> getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) override;
  Awaitable<nfs3::LookupRes> lookup(const CallContext& ctx, nfs3::LookupArgs args) override;
  Now<nfs3::LookupRes> lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) override;
  Awaitable<nfs3::AccessRes> access(const CallContext& ctx, nfs3::AccessArgs args) override;
  Now<nfs3::AccessRes> access_now(const CallContext& ctx, const nfs3::AccessArgs& args) override;
  Awaitable<nfs3::ReadRes> read(const CallContext& ctx, nfs3::ReadArgs args) override;
  Awaitable<nfs3::WriteRes> write(const CallContext& ctx, nfs3::WriteArgs args) override;
  Awaitable<nfs3::CommitRes> commit(const CallContext& ctx, nfs3::CommitArgs args) override;
  Awaitable<nfs3::SetattrRes> setattr(const CallContext& ctx, nfs3::SetattrArgs args) override;
  Awaitable<nfs3::CreateRes> create(const CallContext& ctx, nfs3::CreateArgs args) override;
  Awaitable<nfs3::LinkRes> link(const CallContext& ctx, nfs3::LinkArgs args) override;
  Awaitable<nfs3::RemoveRes> remove(const CallContext& ctx, nfs3::RemoveArgs args) override;
  Awaitable<nfs3::RenameRes> rename(const CallContext& ctx, nfs3::RenameArgs args) override;
  Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) override;

 private:
  cache::ObjectKey key(const nfs3::FileHandle& fh) const { return {space_, fh}; }
  /// The snapshot of a dirty file, made from the layer below's GETATTR when it has
  /// none yet (bytes found in the log at start); nullopt when that fails.
  Awaitable<std::optional<nfs3::Fattr>> snapshot(const CallContext& ctx, const nfs3::FileHandle& fh);
  /// Whether the layer below grants all of `bits` to the caller.
  Awaitable<bool> granted(const CallContext& ctx, const nfs3::FileHandle& fh, std::uint32_t bits);
  /// The WRITE into the log; nullopt: it goes to the origin instead.
  Awaitable<std::optional<nfs3::WriteRes>> absorb(const CallContext& ctx, nfs3::WriteArgs& args);
  /// A write-back export's WRITE that goes to the origin: stable there, answered
  /// with the log's verifier (see write()).
  Awaitable<nfs3::WriteRes> forward_stable(const CallContext& ctx, nfs3::WriteArgs args);
  /// Whether a SETATTR of a dirty file's times may be kept and sent after its data
  /// (see setattr()).
  Awaitable<bool> may_keep_times(const CallContext& ctx, const nfs3::SetattrArgs& args);
  /// READ of a dirty file.
  Awaitable<nfs3::ReadRes> read_dirty(const CallContext& ctx, nfs3::ReadArgs args);
  /// Has a dirty file flushed before a call that must not pass its dirty bytes;
  /// false when the flush failed (the call is then answered JUKEBOX).
  Awaitable<bool> flushed(const nfs3::FileHandle& fh);
  /// An answer step of the layer below about `fh`, resting on its stripe counter
  /// too; passes when the file is dirty.
  template <typename Res, typename Step>
  Now<Res> step_about(const nfs3::FileHandle& fh, Step&& step);
  nfs3::WriteVerf verifier() const;

  DirtyFiles& files_;
  Flusher& flusher_;
  cache::DiskPool& pool_;
  std::uint32_t space_;
  std::atomic<bool> back_;
  WriteBackSettings settings_;
  /// A full or failing disk fails every WRITE: one line a minute.
  LogLimit log_errors_{1, std::chrono::minutes(1)};
};

}  // namespace nfsgw::writeback
