#include "gateway/writeback/flusher.h"

#include <algorithm>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "gateway/datacache/pool_await.h"

namespace nfsgw::writeback {

namespace asio = boost::asio;
using nfs3::Status;

namespace {

std::string hex_of(const nfs3::FileHandle& fh) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : fh.view()) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

CallContext flush_context(const cache::Writer& w, std::uint32_t space) {
  CallContext ctx;
  ctx.cred.uid = w.uid;
  ctx.cred.gid = w.gid;
  for (std::uint32_t g : w.gids) ctx.cred.gids.push_back(g);
  ctx.cred.machine_name = "nfsgw-flush";
  ctx.export_id = space;
  ctx.client_address = "flusher";
  return ctx;
}

/// Waits for a count of children on one strand to reach 0 (all on that strand).
struct Children {
  explicit Children(const asio::any_io_executor& ex) : timer(ex, asio::steady_timer::time_point::max()) {}
  asio::steady_timer timer;
  std::uint32_t running = 0;
  void one_done() {
    if (--running == 0) timer.cancel();
  }
  Awaitable<void> all_done() {
    while (running > 0) {
      boost::system::error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }
};

}  // namespace

Flusher::Flusher(asio::io_context& io, DirtyFiles& files, cache::DiskPool& pool, const cache::Clock& clock,
                 FlusherSettings settings)
    : io_(io),
      files_(files),
      pool_(pool),
      clock_(clock),
      settings_(settings),
      timer_(io) {}

void Flusher::set_space(std::uint32_t space, Nfs3Program* via, cache::Millis delay) {
  {
    std::lock_guard lock(mu_);
    Space& s = spaces_[space];
    s.via = via;
    s.delay = delay;
  }
  wake();
}

void Flusher::start() {
  {
    std::lock_guard lock(mu_);
    if (running_) return;
    running_ = true;
  }
  asio::co_spawn(timer_.get_executor(), run(), asio::detached);
}

void Flusher::stop() {
  stopped_ = true;
  asio::post(timer_.get_executor(), [this] { timer_.cancel(); });
}

void Flusher::wake() {
  woken_ = true;
  asio::post(timer_.get_executor(), [this] { timer_.cancel(); });
}

void Flusher::urgent() {
  const cache::Millis now = clock_.now_ms();
  bool tell = false;
  {
    std::lock_guard lock(mu_);
    // Logged once a minute at most while the log stays full.
    tell = now - urgent_told_ >= 60'000;
    if (tell) urgent_told_ = now;
    urgent_before_ = std::max(urgent_before_, now);
  }
  if (tell) spdlog::info("write-back: the dirty log's budget is full: flushing everything written so far now");
  wake();
}

Awaitable<void> Flusher::run() {
  while (!stopped_) {
    woken_ = false;
    try {
      co_await pass();
    } catch (const std::exception& e) {
      spdlog::error("write-back flusher: {} (tried again in the next pass)", e.what());
    }
    if (stopped_) break;
    if (woken_) continue;  // woken during the pass: its wake found no wait to end
    timer_.expires_after(settings_.tick);
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

Awaitable<void> Flusher::pass() {
  if (!files_.any()) co_return;
  const cache::Millis now = clock_.now_ms();
  // What the pass may take, decided now on this thread; take() asks it on the pool.
  struct Plan {
    std::map<std::uint32_t, cache::Millis> cutoff;  // per space with a route
    std::set<cache::ObjectKey, cache::ObjectKeyLess> skip;
    std::set<cache::ObjectKey, cache::ObjectKeyLess> forced;
    bool everything = false;
  };
  auto plan = std::make_shared<Plan>();
  std::uint64_t room = 0;
  {
    std::lock_guard lock(mu_);
    if (bytes_in_flight_ >= settings_.bytes_in_flight) co_return;
    room = settings_.bytes_in_flight - bytes_in_flight_;
    for (const auto& [space, s] : spaces_) {
      if (s.via == nullptr) continue;
      const bool all = forced_spaces_.contains(kAll) || forced_spaces_.contains(space);
      // Due: written the space's delay ago, or before the log was last full.
      plan->cutoff[space] = all ? cache::kNever : std::max(now - s.delay, urgent_before_);
    }
    // A file with WRITEs not all sent, or as many attempts out as allowed, waits
    // (see flusher.h).
    for (const auto& [k, r] : attempts_out_)
      if (r.writing != 0 || r.attempts >= settings_.attempts_per_file) plan->skip.insert(k);
    for (const auto& [k, st] : state_)
      if (st.retry_at > now) plan->skip.insert(k);
    for (const auto& [k, n] : forced_files_) plan->forced.insert(k);
  }
  // Files with only SETATTR times left to send (dirty_files.h), due as their bytes
  // would be: an attempt without extents.
  for (const cache::ObjectKey& k : files_.times_only()) {
    if (plan->skip.contains(k)) continue;
    const auto cut = plan->cutoff.find(k.export_id);
    if (cut == plan->cutoff.end()) continue;
    const std::optional<cache::KeptTimes> t = files_.pending_times(k);
    if (!t || (!plan->forced.contains(k) && t->since > cut->second)) continue;
    std::uint64_t attempt = 0;
    {
      std::lock_guard lock(mu_);
      // Not while an attempt of it is out (that one sends them after its COMMIT).
      if (attempts_out_.contains(k)) continue;
      plan->skip.insert(k);
      Running& r = attempts_out_[k];
      ++r.attempts;
      attempt = ++attempts_;
      r.latest = attempt;  // no WRITEs: nothing waits on r.writing
    }
    asio::co_spawn(asio::make_strand(io_), flush_one(k, {}, attempt, false), asio::detached);
  }
  // At most batch_bytes per take, each file once per pass, until the room is used.
  while (room > 0 && !stopped_) {
    const std::uint64_t most = std::min(room, settings_.batch_bytes);
    auto take = [this, plan, most, now]() {
      return files_.log().take(
          [this, plan, now](const cache::ObjectKey& k) -> std::optional<cache::Millis> {
            if (plan->skip.contains(k)) return std::nullopt;
            // Failed since the plan was made (its extents given back meanwhile).
            if (backing_off(k, now)) return std::nullopt;
            const auto it = plan->cutoff.find(k.export_id);
            if (it == plan->cutoff.end()) return std::nullopt;  // no export of its space (yet)
            if (plan->forced.contains(k)) return cache::kNever;
            return it->second;
          },
          most, settings_.extent_bytes);
    };
    auto taking = datacache::on_pool(pool_, std::move(take));
    std::vector<cache::DirtyExtent> taken = co_await std::move(taking);
    if (taken.empty()) co_return;
    // One attempt per file, its extents in offset order (as taken).
    std::map<cache::ObjectKey, std::vector<cache::DirtyExtent>, cache::ObjectKeyLess> by_file;
    for (auto& e : taken) by_file[e.file].push_back(std::move(e));
    for (auto& [k, extents] : by_file) {
      std::uint64_t bytes = 0;
      for (const auto& e : extents) bytes += e.data.size();
      plan->skip.insert(k);  // the take after this one runs on the pool once this loop is over
      std::uint64_t attempt = 0;
      bool alone = false;
      {
        std::lock_guard lock(mu_);
        Running& r = attempts_out_[k];
        alone = r.attempts == 0;
        ++r.attempts;
        attempt = ++attempts_;
        r.writing = attempt;
        r.latest = attempt;
        bytes_in_flight_ += bytes;
      }
      room -= std::min(room, bytes);
      asio::co_spawn(asio::make_strand(io_), flush_one(k, std::move(extents), attempt, alone), asio::detached);
    }
  }
}

Awaitable<std::uint32_t> Flusher::wtmax_of(std::uint32_t space, Nfs3Program& via, const nfs3::FileHandle& fh) {
  {
    std::lock_guard lock(mu_);
    if (auto it = spaces_.find(space); it != spaces_.end() && it->second.wtmax > 0) co_return it->second.wtmax;
  }
  CallContext ctx = flush_context(cache::Writer{}, space);
  nfs3::FsinfoArgs a{fh};
  const nfs3::FsinfoRes r = co_await via.fsinfo(ctx, std::move(a));
  // 64 KiB when the origin does not say (every NFSv3 server takes that much).
  std::uint32_t wtmax = r.status == Status::Ok && r.wtmax > 0 ? r.wtmax : 64u << 10;
  wtmax = std::min<std::uint32_t>(wtmax, static_cast<std::uint32_t>(settings_.extent_bytes));
  if (r.status == Status::Ok) {
    std::lock_guard lock(mu_);
    spaces_[space].wtmax = wtmax;
  }
  co_return wtmax;
}

Awaitable<void> Flusher::untake(std::vector<cache::DirtyExtent> extents) {
  auto job = datacache::on_pool(pool_, [this, ex = std::move(extents)] {
    for (const auto& e : ex) files_.log().untake(e);
  });
  co_await std::move(job);
}

Awaitable<void> Flusher::flush_one(cache::ObjectKey k, std::vector<cache::DirtyExtent> extents,
                                   std::uint64_t attempt, bool alone) {
  std::uint64_t bytes = 0;
  for (const auto& e : extents) bytes += e.data.size();
  Nfs3Program* via = nullptr;
  {
    std::lock_guard lock(mu_);
    if (auto it = spaces_.find(k.export_id); it != spaces_.end()) via = it->second.via;
  }
  WriteBackMeters& m = files_.meters();
  bool ok = false;
  bool times_ok = true;
  try {
    if (via == nullptr) throw std::runtime_error("no export of the file's origin");
    if (extents.empty()) {
      // Only kept times to send.
      times_ok = co_await send_times(k, *via);
      ok = true;
      finished(k, attempt, 0, times_ok);
      co_return;
    }
    const std::uint32_t wtmax = co_await wtmax_of(k.export_id, *via, k.fh);
    // The WRITEs: each extent in pieces of at most wtmax, in offset order, at most
    // writes_per_file in flight.
    struct Piece {
      const cache::DirtyExtent* e;
      std::uint64_t from, to;  // within e->data
    };
    std::vector<Piece> pieces;
    for (const auto& e : extents)
      for (std::uint64_t at = 0; at < e.data.size(); at += wtmax)
        pieces.push_back({&e, at, std::min<std::uint64_t>(e.data.size(), at + wtmax)});

    // With another attempt of the file out, the origin's attributes moved with its
    // WRITEs: no conflict can be told from them.
    const std::optional<nfs3::WccAttr> seen = alone ? files_.origin_seen(k) : std::nullopt;
    bool stale = false, failed = false, conflict = false;
    std::vector<nfs3::WriteVerf> verfs;
    std::size_t next = 0;
    auto ex = co_await asio::this_coro::executor;
    Children children(ex);
    auto send = [&](std::size_t i) -> Awaitable<void> {
      const Piece& p = pieces[i];
      const std::uint64_t from = p.e->offset + p.from, to = p.e->offset + p.to;
      // All of the attempt's WRITEs are on their way: the file's next batch may be
      // taken (the pass reads it from the log while these are answered).
      if (i + 1 == pieces.size()) written(k, attempt);
      // Not over an earlier attempt's WRITE of the same bytes still out (rare:
      // bytes written again since that attempt took them).
      if (!claim(k, attempt, from, to)) {
        asio::steady_timer wait(ex);
        do {
          wait.expires_after(std::chrono::milliseconds(1));
          boost::system::error_code ec;
          co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        } while (!claim(k, attempt, from, to));
      }
      CallContext ctx = flush_context(p.e->writer, k.export_id);
      nfs3::WriteArgs w;
      w.file = k.fh;
      w.offset = from;
      w.count = static_cast<std::uint32_t>(p.to - p.from);
      w.stable = nfs3::StableHow::Unstable;
      // By pointers: one memcpy (Payload's iterator overload copies byte by byte).
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(p.e->data.data());
      w.data.assign(bytes + p.from, bytes + p.to);
      nfs3::WriteRes r;
      try {
        r = co_await via->write(ctx, std::move(w));
      } catch (...) {
        answered(k, attempt, from);
        throw;
      }
      answered(k, attempt, from);
      WriteBackMeters::add(m.flush_writes);
      if (r.status == Status::Stale && !r.gateway_status) {
        stale = true;
      } else if (r.status != Status::Ok || r.count != p.to - p.from) {
        failed = true;
        if (!r.gateway_status)
          spdlog::debug("write-back: WRITE of {} bytes at {} of file {}: {}", p.to - p.from, w.offset,
                        hex_of(k.fh), nfs3::status_name(r.status));
      } else {
        verfs.push_back(r.verf);
        if (i == 0 && seen && r.file_wcc.before && !(*r.file_wcc.before == *seen)) conflict = true;
      }
    };
    // The first WRITE alone (its pre-op attributes tell a conflict), then the rest
    // in a window.
    if (!pieces.empty() && seen) co_await send(next++);
    auto sender = [&]() -> Awaitable<void> {
      while (!stale && !failed && next < pieces.size()) co_await send(next++);
      children.one_done();
    };
    for (std::uint32_t i = 0; i < settings_.writes_per_file && next < pieces.size() && !stale && !failed; ++i) {
      ++children.running;
      asio::co_spawn(ex, sender(), asio::detached);
    }
    co_await children.all_done();

    if (conflict) {
      WriteBackMeters::add(m.conflicts);
      spdlog::warn("write-back: file {} changed at the origin behind nfsgw before its flush (all writers of a "
                   "write-back export must go through this nfsgw); nfsgw's bytes were written over it",
                   hex_of(k.fh));
    }
    if (!stale && !failed) {
      // The file's next attempt may send while this one's COMMIT is out.
      written(k, attempt);
      CallContext ctx = flush_context(extents.front().writer, k.export_id);
      nfs3::CommitArgs c{k.fh, 0, 0};
      const nfs3::CommitRes r = co_await via->commit(ctx, std::move(c));
      WriteBackMeters::add(m.flush_commits);
      if (r.status == Status::Stale && !r.gateway_status) {
        stale = true;
      } else if (r.status != Status::Ok) {
        failed = true;
      } else if (std::any_of(verfs.begin(), verfs.end(), [&](const auto& v) { return v != r.verf; })) {
        // The origin restarted between the WRITEs and the COMMIT: what it took may
        // be lost; everything is sent again, at once.
        WriteBackMeters::add(m.verifier_changes);
        spdlog::warn("write-back: the origin's write verifier changed during the flush of file {} (it "
                     "restarted): sending its bytes again",
                     hex_of(k.fh));
        auto again = untake(std::move(extents));
        co_await std::move(again);
        WriteBackMeters::add(m.retries);
        finished(k, attempt, bytes, true);  // no backoff: the origin is back
        co_return;
      } else {
        // What the origin shows after the attempt started last (an earlier one's
        // COMMIT may answer after a later one's WRITEs, or before them).
        if (r.file_wcc.after && latest(k, attempt)) files_.set_origin_seen(k, {r.file_wcc.after->size, r.file_wcc.after->mtime,
                                                           r.file_wcc.after->ctime});
        files_.cleaning(k);
        // Counted before the log's index shows the bytes clean (the log's lock
        // orders the two): a flush_all() that sees none of them dirty any more must
        // find them in its count (its last line missed the last batch otherwise).
        auto clean = datacache::on_pool(pool_, [this, &extents, &m, bytes] {
          WriteBackMeters::add(m.flushed_bytes, bytes);
          try {
            files_.log().cleaned(std::span<const cache::DirtyExtent>(extents));
          } catch (...) {
            m.flushed_bytes.fetch_sub(bytes, std::memory_order_relaxed);
            throw;
          }
        });
        co_await std::move(clean);
        if (files_.settle(k)) WriteBackMeters::add(m.flushed_files);
        ok = true;
        // SETATTR times kept for after the data: sent once no dirty byte is left.
        times_ok = co_await send_times(k, *via);
      }
    }
    if (stale) {
      spdlog::warn("write-back: file {} is gone at the origin (STALE): its {} dirty bytes are dropped",
                   hex_of(k.fh), bytes);
      auto drop = datacache::on_pool(pool_, [this, k] { files_.log().drop(k); });
      co_await std::move(drop);
      files_.forget(k);
      WriteBackMeters::add(m.stale_dropped);
      ok = true;
    }
  } catch (const std::exception& e) {
    spdlog::error("write-back: flush of file {} failed: {}", hex_of(k.fh), e.what());
  }
  if (!ok) {
    {
      // Before the extents are given back: no pass may take them again before
      // the backoff.
      std::lock_guard lock(mu_);
      back_off_locked(k);
    }
    try {
      auto again = untake(std::move(extents));
      co_await std::move(again);
    } catch (const std::exception& e) {
      spdlog::error("write-back: cannot give back the extents of file {}: {}", hex_of(k.fh), e.what());
    }
    WriteBackMeters::add(m.retries);
  }
  finished(k, attempt, bytes, ok && times_ok, /*backed_off=*/!ok);
}

Awaitable<bool> Flusher::send_times(const cache::ObjectKey& k, Nfs3Program& via) {
  const std::optional<cache::KeptTimes> t = files_.pending_times(k);
  // None kept, or bytes still dirty (written since, or another attempt's): sent
  // after those.
  if (!t || files_.log().dirty_end(k)) co_return true;
  CallContext ctx = flush_context(t->writer, k.export_id);
  nfs3::SetattrArgs a;
  a.object = k.fh;
  if (t->atime) a.new_attributes.atime = nfs3::SetTime{nfs3::TimeHow::ClientTime, *t->atime};
  if (t->mtime) a.new_attributes.mtime = nfs3::SetTime{nfs3::TimeHow::ClientTime, *t->mtime};
  const nfs3::SetattrRes r = co_await via.setattr(ctx, std::move(a));
  WriteBackMeters& m = files_.meters();
  if (r.gateway_status) co_return false;  // no answer from the origin: tried again after the backoff
  if (r.status == Status::Stale) {
    spdlog::warn("write-back: file {} is gone at the origin (STALE): the times set on it are dropped",
                 hex_of(k.fh));
    auto drop = datacache::on_pool(pool_, [this, k] { files_.log().drop(k); });
    co_await std::move(drop);
    files_.forget(k);
    WriteBackMeters::add(m.stale_dropped);
    co_return true;
  }
  // The owner set them (or had write access for the server's time): a refusal
  // now is the origin's for good; logged, not tried again.
  if (r.status != Status::Ok)
    spdlog::warn("write-back: the origin refused the times set on file {} ({}): they are dropped", hex_of(k.fh),
                 nfs3::status_name(r.status));
  auto sent = datacache::on_pool(pool_, [this, k, seq = t->seq] { files_.log().times_sent(k, seq); });
  co_await std::move(sent);
  if (files_.settle(k)) WriteBackMeters::add(m.flushed_files);
  co_return true;
}

void Flusher::written(const cache::ObjectKey& k, std::uint64_t attempt) {
  {
    std::lock_guard lock(mu_);
    if (auto it = attempts_out_.find(k); it != attempts_out_.end() && it->second.writing == attempt) it->second.writing = 0;
  }
  wake();
}

bool Flusher::claim(const cache::ObjectKey& k, std::uint64_t attempt, std::uint64_t from, std::uint64_t to) {
  std::lock_guard lock(mu_);
  Running& r = attempts_out_[k];
  for (const auto& u : r.unanswered)
    if (u.attempt != attempt && u.from < to && from < u.to) return false;
  r.unanswered.push_back({attempt, from, to});
  return true;
}

void Flusher::answered(const cache::ObjectKey& k, std::uint64_t attempt, std::uint64_t from) {
  std::lock_guard lock(mu_);
  const auto it = attempts_out_.find(k);
  if (it == attempts_out_.end()) return;
  auto& u = it->second.unanswered;
  for (auto i = u.begin(); i != u.end(); ++i)
    if (i->attempt == attempt && i->from == from) {
      u.erase(i);
      break;
    }
}

bool Flusher::latest(const cache::ObjectKey& k, std::uint64_t attempt) {
  std::lock_guard lock(mu_);
  const auto it = attempts_out_.find(k);
  return it == attempts_out_.end() || it->second.latest == attempt;
}

void Flusher::back_off_locked(const cache::ObjectKey& k) {
  FileState& st = state_[k];
  st.backoff = st.backoff == 0 ? settings_.retry_first_ms : std::min(st.backoff * 2, settings_.retry_max_ms);
  st.retry_at = clock_.now_ms() + st.backoff;
  ++st.failures;
}

bool Flusher::backing_off(const cache::ObjectKey& k, cache::Millis now) {
  std::lock_guard lock(mu_);
  const auto it = state_.find(k);
  return it != state_.end() && it->second.retry_at > now;
}

void Flusher::finished(const cache::ObjectKey& k, std::uint64_t attempt, std::uint64_t bytes, bool ok,
                       bool backed_off) {
  {
    std::lock_guard lock(mu_);
    if (auto it = attempts_out_.find(k); it != attempts_out_.end()) {
      if (it->second.writing == attempt) it->second.writing = 0;
      if (--it->second.attempts == 0) attempts_out_.erase(it);
    }
    bytes_in_flight_ -= std::min(bytes_in_flight_, bytes);
    if (ok) {
      state_.erase(k);
    } else if (!backed_off) {
      back_off_locked(k);
    }
  }
  wake();
}

std::uint64_t Flusher::failures(const cache::ObjectKey& k) {
  std::lock_guard lock(mu_);
  const auto it = state_.find(k);
  return it == state_.end() ? 0 : it->second.failures;
}

Awaitable<bool> Flusher::flush_file(const cache::ObjectKey& k) {
  const std::uint64_t failed_before = failures(k);
  {
    std::lock_guard lock(mu_);
    ++forced_files_[k];
    // Asked for by a client's call: no waiting for a backoff.
    if (auto it = state_.find(k); it != state_.end()) it->second.retry_at = 0;
  }
  wake();
  asio::steady_timer t(co_await asio::this_coro::executor);
  bool clean = false;
  while (!stopped_) {
    if (!files_.has(k)) {
      clean = true;
      break;
    }
    if (failures(k) != failed_before) break;
    t.expires_after(std::chrono::milliseconds(10));
    boost::system::error_code ec;
    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  {
    std::lock_guard lock(mu_);
    if (auto it = forced_files_.find(k); it != forced_files_.end() && --it->second == 0) forced_files_.erase(it);
  }
  co_return clean;
}

void Flusher::flush_all(std::optional<std::uint32_t> space, std::shared_ptr<FlushProgress> progress,
                        std::function<void(FlushOutcome)> done) {
  const std::uint64_t key = space ? *space : kAll;
  const cache::Millis started = clock_.now_ms();
  // Before the wake below: what a pass it starts flushes counts as this flush's.
  const std::uint64_t flushed_at_start = files_.meters().flushed_bytes.load();
  // The files dirty now in the scope: the flush ends once none of them has a byte
  // written before it started.
  std::vector<cache::ObjectKey> scope;
  for (const auto& k : files_.files())
    if (!space || k.export_id == *space) scope.push_back(k);
  {
    std::lock_guard lock(mu_);
    ++forced_spaces_[key];
    for (const auto& k : scope)
      if (auto it = state_.find(k); it != state_.end()) it->second.retry_at = 0;
  }
  wake();
  asio::co_spawn(asio::make_strand(io_),
                 watch_flush(key, started, flushed_at_start, std::move(scope), std::move(progress), std::move(done)),
                 asio::detached);
}

Awaitable<void> Flusher::watch_flush(std::uint64_t key, cache::Millis started, std::uint64_t flushed_at_start,
                                     std::vector<cache::ObjectKey> scope, std::shared_ptr<FlushProgress> progress,
                                     std::function<void(FlushOutcome)> done) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  bool ok = false;
  while (true) {
    std::uint64_t left = 0;
    for (const auto& k : scope) {
      const auto oldest = files_.log().oldest_written(k);
      const auto times = files_.pending_times(k);
      if ((oldest && *oldest <= started) || (times && times->since <= started)) ++left;
    }
    progress->files_left = left;
    progress->bytes_left = files_.log().usage().dirty_bytes;
    progress->bytes_flushed = files_.meters().flushed_bytes.load() - flushed_at_start;
    if (left == 0) {
      ok = true;
      break;
    }
    if (stopped_) break;
    t.expires_after(std::chrono::milliseconds(100));
    boost::system::error_code ec;
    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  {
    std::lock_guard lock(mu_);
    if (auto it = forced_spaces_.find(key); it != forced_spaces_.end() && --it->second == 0)
      forced_spaces_.erase(it);
  }
  FlushOutcome out;
  out.ok = ok;
  out.message = ok ? "flushed: " + std::to_string(progress->bytes_flushed.load()) +
                         " bytes committed at the origin"
                   : "nfsgw is stopping: the flush did not finish (the dirty data is kept and flushed after "
                     "the next start)";
  done(std::move(out));
}

}  // namespace nfsgw::writeback
