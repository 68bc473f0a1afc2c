#include "gateway/writeback/write_back.h"

#include <algorithm>
#include <cstring>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "gateway/datacache/pool_await.h"
#include "gateway/made_up.h"

namespace nfsgw::writeback {

namespace asio = boost::asio;
using nfs3::Status;

namespace {

cache::Writer writer_of(const Credentials& c) {
  cache::Writer w;
  w.uid = c.uid;
  w.gid = c.gid;
  for (std::size_t i = 0; i < c.gids.size() && i < cache::kMaxWriterGids; ++i) w.gids.push_back(c.gids[i]);
  return w;
}


}  // namespace

WriteBack::WriteBack(Nfs3Program& next, DirtyFiles& files, Flusher& flusher, cache::DiskPool& pool,
                     std::uint32_t space, bool back, WriteBackSettings settings)
    : ForwardingProgram(next),
      files_(files),
      flusher_(flusher),
      pool_(pool),
      space_(space),
      back_(back),
      settings_(settings) {}

nfs3::WriteVerf WriteBack::verifier() const {
  nfs3::WriteVerf v{};
  const std::uint64_t n = files_.log().write_verifier();
  static_assert(sizeof n == sizeof v);
  std::memcpy(v.data(), &n, sizeof n);
  return v;
}

// ---- answer steps ---------------------------------------------------------------

template <typename Res, typename Step>
Now<Res> WriteBack::step_about(const nfs3::FileHandle& fh, Step&& step) {
  const cache::ObjectKey k = key(fh);
  const auto& stripe = files_.stripe(k);
  // Read before the check: a file that becomes dirty after it moves the counter.
  const std::uint64_t seen = stripe.load(std::memory_order_acquire);
  if (files_.has(k)) return {};
  Now<Res> n = step();
  if (n) n.basis.rests_on(cache::Watch{&stripe, seen});
  return n;
}

Now<nfs3::GetattrRes> WriteBack::getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) {
  return step_about<nfs3::GetattrRes>(args.object, [&] { return next_.getattr_now(ctx, args); });
}

Now<nfs3::AccessRes> WriteBack::access_now(const CallContext& ctx, const nfs3::AccessArgs& args) {
  return step_about<nfs3::AccessRes>(args.object, [&] { return next_.access_now(ctx, args); });
}

Now<nfs3::LookupRes> WriteBack::lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) {
  Now<nfs3::LookupRes> n = next_.lookup_now(ctx, args);
  if (!n || n->status != Status::Ok) return n;  // no object: nothing dirty in it
  const cache::ObjectKey k = key(n->object);
  const auto& stripe = files_.stripe(k);
  const std::uint64_t seen = stripe.load(std::memory_order_acquire);
  if (files_.has(k)) return {};
  n.basis.rests_on(cache::Watch{&stripe, seen});
  return n;
}

// ---- attributes -----------------------------------------------------------------

Awaitable<std::optional<nfs3::Fattr>> WriteBack::snapshot(const CallContext& ctx, const nfs3::FileHandle& fh) {
  const cache::ObjectKey k = key(fh);
  if (auto a = files_.attributes(k)) co_return a;
  nfs3::GetattrArgs ga{fh};
  const nfs3::GetattrRes r = co_await next_.getattr(ctx, std::move(ga));
  if (r.status != Status::Ok) co_return std::nullopt;
  files_.adopt(k, r.attributes);
  co_return files_.attributes(k);
}

Awaitable<nfs3::GetattrRes> WriteBack::getattr(const CallContext& ctx, nfs3::GetattrArgs args) {
  const cache::ObjectKey k = key(args.object);
  if (!files_.has(k)) co_return co_await next_.getattr(ctx, std::move(args));
  // A dirty file's snapshot needs no origin (an outage included), once it has one
  // and no REMOVE or RENAME since may have changed its link count.
  if (std::optional<nfs3::Fattr> a = files_.fresh_attributes(k)) co_return nfs3::GetattrRes{Status::Ok, *a, false};
  nfs3::GetattrRes r = co_await next_.getattr(ctx, std::move(args));
  if (r.status == Status::Ok) {
    nfs3::PostOpAttr a = r.attributes;
    if (files_.patch(k, a)) r.attributes = *a;
  } else if (std::optional<nfs3::Fattr> a = files_.attributes(k); a && r.status != Status::Stale) {
    co_return nfs3::GetattrRes{Status::Ok, *a, false};  // the origin cannot say: the snapshot is what there is
  }
  co_return r;
}

Awaitable<nfs3::LookupRes> WriteBack::lookup(const CallContext& ctx, nfs3::LookupArgs args) {
  nfs3::LookupRes r = co_await next_.lookup(ctx, std::move(args));
  if (r.status == Status::Ok) files_.patch(key(r.object), r.obj_attributes);
  co_return r;
}

Awaitable<nfs3::AccessRes> WriteBack::access(const CallContext& ctx, nfs3::AccessArgs args) {
  const cache::ObjectKey k = key(args.object);
  nfs3::AccessRes r = co_await next_.access(ctx, std::move(args));
  files_.patch(k, r.obj_attributes);
  co_return r;
}

Awaitable<nfs3::LinkRes> WriteBack::link(const CallContext& ctx, nfs3::LinkArgs args) {
  const cache::ObjectKey k = key(args.file);
  nfs3::LinkRes r = co_await next_.link(ctx, std::move(args));
  files_.patch(k, r.file_attributes);
  co_return r;
}

// A name removed or replaced may have been one of several of a dirty file: the
// reply gives the folders' attributes, not the file's, so every dirty file's link
// count is asked again at its next GETATTR.
Awaitable<nfs3::RemoveRes> WriteBack::remove(const CallContext& ctx, nfs3::RemoveArgs args) {
  nfs3::RemoveRes r = co_await next_.remove(ctx, std::move(args));
  if (r.status == Status::Ok) files_.origin_may_have_changed();
  co_return r;
}

Awaitable<nfs3::RenameRes> WriteBack::rename(const CallContext& ctx, nfs3::RenameArgs args) {
  nfs3::RenameRes r = co_await next_.rename(ctx, std::move(args));
  if (r.status == Status::Ok) files_.origin_may_have_changed();
  co_return r;
}

Awaitable<nfs3::ReaddirplusRes> WriteBack::readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) {
  nfs3::ReaddirplusRes r = co_await next_.readdirplus(ctx, std::move(args));
  if (r.status == Status::Ok && files_.any())
    for (auto& e : r.entries)
      if (e.name_handle) files_.patch(key(*e.name_handle), e.name_attributes);
  co_return r;
}

Awaitable<nfs3::CreateRes> WriteBack::create(const CallContext& ctx, nfs3::CreateArgs args) {
  const std::optional<std::uint64_t> size =
      args.mode == nfs3::CreateMode::Exclusive ? std::nullopt : args.obj_attributes.size;
  nfs3::CreateRes r = co_await next_.create(ctx, std::move(args));
  // An UNCHECKED create of a name that exists sets its size: a dirty file's bytes
  // past it are gone.
  if (r.status == Status::Ok && r.obj && size && files_.has(key(*r.obj))) {
    const cache::ObjectKey k = key(*r.obj);
    auto cut = datacache::on_pool(pool_, [this, k, s = *size] { files_.log().truncate(k, s); });
    co_await std::move(cut);
    if (r.obj_attributes) files_.after_setattr(k, *r.obj_attributes, true);
  }
  if (r.status == Status::Ok && r.obj) files_.patch(key(*r.obj), r.obj_attributes);
  co_return r;
}

// ---- data -------------------------------------------------------------------------

Awaitable<bool> WriteBack::granted(const CallContext& ctx, const nfs3::FileHandle& fh, std::uint32_t bits) {
  // Asked for all three whatever this call needs, so that the answer the layer
  // below learns covers every later READ and WRITE of the file (an answer is kept
  // for the bits asked: a WRITE that extends the file after one that did not would
  // otherwise need the origin, which may be down).
  nfs3::AccessArgs asked{fh, nfs3::access::Read | nfs3::access::Modify | nfs3::access::Extend};
  const nfs3::AccessRes r = co_await next_.access(ctx, std::move(asked));
  co_return r.status == Status::Ok && !r.gateway_status && (r.access & bits) == bits;
}

Awaitable<bool> WriteBack::flushed(const nfs3::FileHandle& fh) {
  if (!files_.has(key(fh))) co_return true;
  co_return co_await flusher_.flush_file(key(fh));
}

Awaitable<nfs3::ReadRes> WriteBack::read(const CallContext& ctx, nfs3::ReadArgs args) {
  const cache::ObjectKey k = key(args.file);
  if (!files_.has(k)) co_return co_await next_.read(ctx, std::move(args));
  if (!files_.fresh_attributes(k)) {
    // A REMOVE since may have taken the file's last name: gone at the origin, it
    // is gone for readers too (its bytes go at their flush).
    nfs3::GetattrArgs ga{args.file};
    const nfs3::GetattrRes g = co_await getattr(ctx, std::move(ga));
    if (g.status == Status::Stale && !g.gateway_status) {
      nfs3::ReadRes gone;
      gone.status = Status::Stale;
      co_return gone;
    }
  }
  co_return co_await read_dirty(ctx, std::move(args));
}

Awaitable<nfs3::ReadRes> WriteBack::read_dirty(const CallContext& ctx, nfs3::ReadArgs args) {
  const cache::ObjectKey k = key(args.file);
  // A flush that cleans bytes between the origin's READ and the copy of the dirty
  // bytes would leave the reply without them: the clean count tells, and the READ
  // is made again (a few times at most; the flush is over by then).
  for (int attempt = 0;; ++attempt) {
    const std::optional<std::uint64_t> cleans = files_.clean_count(k);
    if (!cleans) co_return co_await next_.read(ctx, std::move(args));  // clean now
    const std::optional<nfs3::Fattr> attrs = co_await snapshot(ctx, args.file);
    if (!attrs) co_return co_await next_.read(ctx, std::move(args));
    const std::uint64_t size = attrs->size;
    const std::uint64_t offset = args.offset;
    const std::uint64_t count = offset >= size ? 0 : std::min<std::uint64_t>(args.count, size - offset);
    nfs3::ReadRes res;
    res.data = nfs3::Payload::uninitialized(count);
    auto* out = reinterpret_cast<char*>(res.data.data());
    // The dirty bytes first: when they cover the range, the origin is not asked.
    auto from_log = datacache::on_pool(pool_, [this, k, offset, out, count] {
      return files_.log().overlay(k, offset, std::span<char>(out, count));
    });
    const std::uint64_t covered = co_await std::move(from_log);
    if (covered == count) {
      if (!co_await granted(ctx, args.file, nfs3::access::Read)) co_return co_await next_.read(ctx, std::move(args));
    } else {
      nfs3::ReadArgs below{args.file, offset, static_cast<std::uint32_t>(count)};
      nfs3::ReadRes r = co_await next_.read(ctx, std::move(below));
      if (r.status != Status::Ok) {
        files_.patch(k, r.file_attributes);
        co_return r;
      }
      // The origin's bytes, zeros past its end (the dirty size is larger), then the
      // dirty bytes over them again.
      const std::size_t got = std::min<std::size_t>(r.data.size(), count);
      if (got > 0) std::memcpy(out, r.data.data(), got);
      if (got < count) std::memset(out + got, 0, count - got);
      auto again = datacache::on_pool(pool_, [this, k, offset, out, count] {
        return files_.log().overlay(k, offset, std::span<char>(out, count));
      });
      co_await std::move(again);
    }
    if (files_.clean_count(k) != cleans && attempt < 4) continue;
    res.status = Status::Ok;
    res.count = static_cast<std::uint32_t>(count);
    res.eof = offset + count >= size;
    res.file_attributes = attrs;
    files_.patch(k, res.file_attributes);  // the newest snapshot
    co_return res;
  }
}

Awaitable<std::optional<nfs3::WriteRes>> WriteBack::absorb(const CallContext& ctx, nfs3::WriteArgs& args) {
  const cache::ObjectKey k = key(args.file);
  const std::uint64_t count = std::min<std::uint64_t>(args.count, args.data.size());
  nfs3::PostOpAttr base = files_.attributes(k);
  if (!base) {
    nfs3::GetattrArgs ga{args.file};
    const nfs3::GetattrRes r = co_await next_.getattr(ctx, std::move(ga));
    if (r.status != Status::Ok) co_return std::nullopt;
    base = r.attributes;
  }
  if (base->type != nfs3::FileType::Reg) co_return std::nullopt;
  const std::uint32_t bits =
      nfs3::access::Modify | (args.offset + count > base->size ? nfs3::access::Extend : 0u);
  if (!co_await granted(ctx, args.file, bits)) co_return std::nullopt;

  WriteBackMeters& m = files_.meters();
  const bool stable = args.stable != nfs3::StableHow::Unstable;
  files_.begin_write(k, *base);
  const cache::Writer writer = writer_of(ctx.cred);
  std::optional<asio::steady_timer> wait;
  const auto give_up = std::chrono::steady_clock::now() + settings_.budget_wait;
  bool waited = false;
  while (true) {
    bool full = false, failed = false;
    try {
      auto put = datacache::on_pool(pool_, [this, k, &args, count, &writer, stable] {
        const std::string_view data(reinterpret_cast<const char*>(args.data.data()), count);
        return files_.log().write(k, args.offset, data, writer, stable);
      });
      full = co_await std::move(put) == cache::DirtyLog::Appended::Full;
    } catch (const std::exception& e) {
      failed = true;
      WriteBackMeters::add(m.log_errors);
      flusher_.urgent();  // a full disk gets room back only as dirty bytes are flushed
      if (std::uint64_t dropped = 0; log_errors_.allow(dropped))
        spdlog::error("write-back: the dirty log cannot be written ({}): WRITEs are answered JUKEBOX until it "
                      "can (nothing is acknowledged that is not in it; {} such failures not logged before)",
                      e.what(), dropped);
    }
    if (!full && !failed) break;
    if (full) {
      if (!waited) WriteBackMeters::add(m.budget_waits);
      waited = true;
      flusher_.urgent();
    }
    if (std::chrono::steady_clock::now() >= give_up || ctx.caller_left()) {
      files_.abort_write(k);
      if (full) WriteBackMeters::add(m.budget_jukebox);
      co_return made_up<nfs3::WriteRes>(Status::Jukebox);
    }
    if (!wait) wait.emplace(co_await asio::this_coro::executor);
    wait->expires_after(std::chrono::milliseconds(50));
    boost::system::error_code ec;
    co_await wait->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  WriteBackMeters::add(m.writes_absorbed);
  WriteBackMeters::add(m.bytes_absorbed, count);
  nfs3::WriteRes res;
  res.status = Status::Ok;
  res.file_wcc = files_.end_write(k, args.offset, count);
  res.count = static_cast<std::uint32_t>(count);
  res.committed = stable ? nfs3::StableHow::FileSync : nfs3::StableHow::Unstable;
  res.verf = verifier();
  co_return res;
}

Awaitable<nfs3::WriteRes> WriteBack::write(const CallContext& ctx, nfs3::WriteArgs args) {
  const bool back_now = back();
  if (back_now) {
    if (std::optional<nfs3::WriteRes> r = co_await absorb(ctx, args)) co_return std::move(*r);
  }
  // To the origin: after the file's dirty bytes, which it must land on.
  if (!co_await flushed(args.file)) co_return made_up<nfs3::WriteRes>(Status::Jukebox);
  if (!back_now) co_return co_await next_.write(ctx, std::move(args));
  co_return co_await forward_stable(ctx, std::move(args));
}

// A write-back export's COMMIT answers the log's verifier, which says nothing of
// bytes the origin holds uncommitted: a WRITE sent on to the origin is made stable
// there before it is answered, and answered with the log's verifier too, so that
// a client never sees the verifier change without a loss (it would send its
// UNSTABLE data again at every COMMIT).
Awaitable<nfs3::WriteRes> WriteBack::forward_stable(const CallContext& ctx, nfs3::WriteArgs args) {
  const nfs3::FileHandle fh = args.file;
  const std::uint64_t offset = args.offset;
  const std::uint32_t count = args.count;
  if (args.stable == nfs3::StableHow::Unstable) args.stable = nfs3::StableHow::DataSync;
  nfs3::WriteRes r = co_await next_.write(ctx, std::move(args));
  if (r.status != Status::Ok || r.gateway_status) co_return r;  // no verifier in it
  if (r.committed == nfs3::StableHow::Unstable) {
    // An origin that did less than it was asked: its COMMIT of the range then.
    nfs3::CommitArgs c{fh, offset, count};
    const nfs3::CommitRes cr = co_await next_.commit(ctx, std::move(c));
    // Not committed under the WRITE's verifier: the client sends it again.
    if (cr.status != Status::Ok || cr.verf != r.verf) co_return made_up<nfs3::WriteRes>(Status::Jukebox);
    r.committed = nfs3::StableHow::DataSync;
  }
  r.verf = verifier();
  co_return r;
}

Awaitable<nfs3::CommitRes> WriteBack::commit(const CallContext& ctx, nfs3::CommitArgs args) {
  const cache::ObjectKey k = key(args.file);
  if (back()) {
    try {
      auto sync = datacache::on_pool(pool_, [this] { files_.log().sync(); });
      co_await std::move(sync);
    } catch (const std::exception& e) {
      WriteBackMeters::add(files_.meters().log_errors);
      spdlog::error("write-back: COMMIT: the dirty log cannot be synced ({}): answered JUKEBOX", e.what());
      co_return made_up<nfs3::CommitRes>(Status::Jukebox);
    }
    nfs3::CommitRes res;
    res.status = Status::Ok;
    res.verf = verifier();
    std::optional<nfs3::Fattr> a = files_.attributes(k);
    if (!a) {
      nfs3::GetattrArgs ga{args.file};
      const nfs3::GetattrRes r = co_await next_.getattr(ctx, std::move(ga));
      if (r.status == Status::Ok) a = r.attributes;
      files_.patch(k, a);
    }
    if (a) {
      res.file_wcc.before = nfs3::WccAttr{a->size, a->mtime, a->ctime};
      res.file_wcc.after = a;
    }
    co_return res;
  }
  if (!co_await flushed(args.file)) co_return made_up<nfs3::CommitRes>(Status::Jukebox);
  co_return co_await next_.commit(ctx, std::move(args));
}

Awaitable<bool> WriteBack::may_keep_times(const CallContext& ctx, const nfs3::SetattrArgs& args) {
  const nfs3::Sattr& s = args.new_attributes;
  const bool times = s.atime.how != nfs3::TimeHow::DontChange || s.mtime.how != nfs3::TimeHow::DontChange;
  // A size orders against the dirty bytes (flushed first); a guard asks the origin's ctime.
  if (!times || s.size || args.guard) co_return false;
  const std::optional<nfs3::Fattr> a = files_.fresh_attributes(key(args.object));
  if (!a) co_return false;
  // Kept only when the origin will take them from this caller later: its owner
  // sets any times (RFC 1813 leaves it to the server; POSIX utimensat), anyone who
  // may write sets the server's time. Anyone else's SETATTR goes to the origin
  // (after the flush), which decides.
  if (ctx.cred.uid == a->uid) co_return true;
  const bool server_time = s.atime.how != nfs3::TimeHow::ClientTime && s.mtime.how != nfs3::TimeHow::ClientTime;
  co_return server_time && co_await granted(ctx, args.object, nfs3::access::Modify);
}

Awaitable<nfs3::SetattrRes> WriteBack::setattr(const CallContext& ctx, nfs3::SetattrArgs args) {
  const cache::ObjectKey k = key(args.object);
  if (!files_.has(k)) co_return co_await next_.setattr(ctx, std::move(args));
  // Times of a dirty file are kept and sent after its data (a tar unpack sets
  // them on every file it has just written: no flush per file). Mode and owner,
  // set in the same call, go to the origin first; the times only if it took them.
  if (co_await may_keep_times(ctx, args)) {
    const nfs3::SetTime atime = args.new_attributes.atime, mtime = args.new_attributes.mtime;
    nfs3::SetattrArgs rest = args;
    rest.new_attributes.atime = {};
    rest.new_attributes.mtime = {};
    const bool more = rest.new_attributes != nfs3::Sattr{};
    std::optional<nfs3::SetattrRes> first;
    if (more) {
      first = co_await setattr(ctx, std::move(rest));
      if (first->status != Status::Ok) co_return std::move(*first);
    }
    if (const auto keep = files_.resolve_times(k, atime, mtime)) {
      // Durable before anyone sees them: no crash takes back a SETATTR once answered.
      auto log = datacache::on_pool(pool_, [this, k, &keep, writer = writer_of(ctx.cred)] {
        files_.log().keep_times(k, keep->atime, keep->mtime, writer);
      });
      bool kept = false;
      try {
        co_await std::move(log);
        kept = true;
      } catch (const std::exception& e) {
        WriteBackMeters::add(files_.meters().log_errors);
        if (std::uint64_t dropped = 0; log_errors_.allow(dropped))
          spdlog::error("write-back: the dirty log cannot keep the times of a SETATTR ({}): it goes to the origin "
                        "after the file's flush instead ({} such failures not logged before)",
                        e.what(), dropped);
      }
      if (kept) {
        if (std::optional<nfs3::WccData> wcc = files_.show_times(k, *keep)) {
          nfs3::SetattrRes r;
          r.status = Status::Ok;
          r.obj_wcc = *wcc;
          if (first) r.obj_wcc.before = first->obj_wcc.before;
          co_return r;
        }
      }
    }
    // Clean meanwhile (no snapshot), or the log failed: to the origin as usual, below.
    args.new_attributes = rest.new_attributes;
    args.new_attributes.atime = atime;
    args.new_attributes.mtime = mtime;
    if (more) {
      args.new_attributes.mode.reset();
      args.new_attributes.uid.reset();
      args.new_attributes.gid.reset();
    }
    if (!files_.has(k)) co_return co_await next_.setattr(ctx, std::move(args));
  }
  const nfs3::Sattr& s = args.new_attributes;
  const bool size_set = s.size.has_value();
  const std::optional<std::uint64_t> size = s.size;
  // A size, or times not kept, must not be overtaken by the dirty bytes' flush
  // (nor kept times by the size): flushed first.
  if (size_set || s.mtime.how != nfs3::TimeHow::DontChange || s.atime.how != nfs3::TimeHow::DontChange) {
    if (!co_await flushed(args.object)) co_return made_up<nfs3::SetattrRes>(Status::Jukebox);
  }
  nfs3::SetattrRes r = co_await next_.setattr(ctx, std::move(args));
  if (r.status == Status::Ok && files_.has(k)) {
    // Written again meanwhile: what lies past the new size is gone.
    if (size_set) {
      auto cut = datacache::on_pool(pool_, [this, k, n = *size] { files_.log().truncate(k, n); });
      co_await std::move(cut);
    }
    if (r.obj_wcc.after) files_.after_setattr(k, *r.obj_wcc.after, size_set);
  }
  // Failed or not, the reply shows the dirty file as nfsgw answers it; the
  // origin's pre-op attributes are not what the client saw.
  if (files_.patch(k, r.obj_wcc.after)) r.obj_wcc.before.reset();
  co_return r;
}

}  // namespace nfsgw::writeback
