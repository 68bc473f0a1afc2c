// The data cache's READ: attributes and permission from the layer below, blocks
// from the store or fetched whole from the origin (one fetch per block and
// version however many callers miss it), read-ahead after sequential READs.
#include "gateway/datacache/data_cache.h"
#include "gateway/datacache/grant_await.h"
#include "gateway/made_up.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <spdlog/spdlog.h>

namespace nfsgw::datacache {

using nfs3::Status;

namespace {

/// Used when the origin's FSINFO cannot be had.
constexpr std::uint32_t kFallbackRtmax = 1u << 20;

/// One block of one version of a file: the single flight's key. The version is
/// part of it, so a caller who decided on newer attributes never gets a block
/// fetched for older ones.
std::string flight_key(const nfs3::FileHandle& fh, const cache::Stamp& s, std::uint64_t index) {
  std::string k(reinterpret_cast<const char*>(fh.bytes.data()), fh.len);
  auto put = [&k](std::uint64_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(index);
  put(s.fileid);
  put(s.size);
  put((std::uint64_t{s.mtime.seconds} << 32) | s.mtime.nseconds);
  put((std::uint64_t{s.ctime.seconds} << 32) | s.ctime.nseconds);
  return k;
}

}  // namespace

DataCache::Range DataCache::range_of(const nfs3::ReadArgs& args, std::uint64_t size, std::uint32_t rtmax) {
  // At most rtmax bytes, as the origin would answer (and never a reply as large
  // as any count a client sends).
  const std::uint64_t count = std::min(args.count, rtmax);
  const std::uint64_t offset = args.offset;
  return {offset, offset >= size ? offset : offset + std::min<std::uint64_t>(count, size - offset)};
}

template <typename F>
bool DataCache::for_each_block(const Range& r, std::uint64_t size, char* reply, F&& f) const {
  // A READ of nothing (count 0, or at or past the end of the file) touches no
  // block: its reply has no bytes (and no memory to copy into).
  for (std::uint64_t index = r.offset / block_bytes_; r.offset < r.end && index * block_bytes_ < r.end; ++index) {
    const std::uint64_t start = index * block_bytes_;
    const std::uint64_t length = std::min<std::uint64_t>(block_bytes_, size - start);
    // The part of the block the READ asks for, and where it goes in the reply.
    const std::uint64_t from = std::max(r.offset, start) - start;
    const std::uint64_t to = std::min(r.end, start + length) - start;
    char* const dest = reply + (start + from - r.offset);
    if (!f(index, cache::BlockStore::Part{length, from, std::span<char>(dest, to - from)})) return false;
  }
  return true;
}

Now<nfs3::ReadRes> DataCache::read_now(const CallContext& ctx, const nfs3::ReadArgs& args) {
  const std::uint32_t rtmax = rtmax_.load(std::memory_order_relaxed);
  if (rtmax == 0) return {};  // the coroutine asks the origin's FSINFO first
  const nfs3::FileHandle& fh = args.file;
  // The coroutine's steps, asked at once. Tentatively: when this passes, the
  // coroutine asks again, and a call is counted once.
  CallContext asking = ctx;
  asking.tentative = true;
  auto attrs = next_.getattr_now(asking, nfs3::GetattrArgs{fh});
  if (!attrs || attrs->status != Status::Ok || attrs->gateway_status ||
      attrs->attributes.type != nfs3::FileType::Reg)
    return {};
  auto granted = next_.access_now(asking, nfs3::AccessArgs{fh, nfs3::access::Read});
  if (!granted || granted->status != Status::Ok || granted->gateway_status ||
      (granted->access & nfs3::access::Read) == 0)
    return {};

  const nfs3::Fattr& a = attrs->attributes;
  const cache::Stamp stamp = cache::Stamp::of(a);
  const Range r = range_of(args, a.size, rtmax);
  auto now = Now<nfs3::ReadRes>::for_call(ctx);
  nfs3::ReadRes& res = now.res.emplace();
  res.data = nfs3::Payload::uninitialized(r.end - r.offset);
  const cache::ObjectKey file = key(fh);
  const bool all_in_memory = for_each_block(r, a.size, reinterpret_cast<char*>(res.data.data()),
                                            [&](std::uint64_t index, const cache::BlockStore::Part& part) {
                                              return store_.read_now(file, stamp, index, part, now.basis) ==
                                                     cache::BlockStore::Now::Hit;
                                            });
  // Read-ahead to start is the coroutine's (it has an executor to start it on).
  const bool reads_ahead = has_read_ahead(a.size);
  if (!all_in_memory || (reads_ahead && !read_ahead_.on_read_if_none_due(fh, stamp, r.offset, r.end))) return {};
  attrs.basis.replay_bumps();
  granted.basis.replay_bumps();
  res.file_attributes = a;
  res.count = static_cast<std::uint32_t>(r.end - r.offset);
  res.eof = r.end >= a.size;
  // What it rests on: the file's attributes and the caller's permission (the
  // metadata cache's answers, with their records and windows) and the file's
  // blocks (their change counter, added by the store above).
  now.basis.merge(attrs.basis);
  now.basis.merge(granted.basis);
  now.basis.count(stats_.mine(DataStats::Reads));
  now.basis.count(stats_.mine(DataStats::ReadHits));
  now.basis.count(stats_.mine(DataStats::BytesFromCache), res.count);
  now.basis.vouch();
  // A file with read-ahead keeps track of its READs (read_ahead.h): a copy given
  // again would skip that. Only files of one block or less are kept.
  if (reads_ahead) now.basis.refuse();
  return now;
}

Awaitable<nfs3::ReadRes> DataCache::read(const CallContext& ctx, nfs3::ReadArgs args) {
  stats_.bump(DataStats::Reads);
  if (settings_.passes_through && settings_.passes_through(args.file)) {
    // The layer below holds this file's newest bytes (write-back): its READ, as the
    // caller asked it, needs no block from the origin.
    stats_.bump(DataStats::Forwarded);
    co_return co_await next_.read(ctx, std::move(args));
  }
  std::optional<nfs3::ReadRes> served;
  try {
    auto cached = read_cached(ctx, args);
    served = co_await std::move(cached);
  } catch (const cache::BlockStoreError& e) {
    store_failed(e);
  }
  if (served) co_return std::move(*served);
  stats_.bump(DataStats::Forwarded);
  co_return co_await next_.read(ctx, std::move(args));
}

Awaitable<bool> DataCache::may_read(const CallContext& ctx, const nfs3::FileHandle& fh) {
  nfs3::AccessArgs asked{fh, nfs3::access::Read};
  nfs3::AccessRes r = co_await next_.access(ctx, std::move(asked));
  co_return r.status == Status::Ok && !r.gateway_status && (r.access & nfs3::access::Read) != 0;
}

Awaitable<std::optional<nfs3::ReadRes>> DataCache::read_cached(const CallContext& ctx, const nfs3::ReadArgs& args) {
  const nfs3::FileHandle& fh = args.file;
  nfs3::GetattrArgs ga{fh};
  nfs3::GetattrRes attrs = co_await next_.getattr(ctx, std::move(ga));
  if (attrs.status != Status::Ok || attrs.gateway_status || attrs.attributes.type != nfs3::FileType::Reg)
    co_return std::nullopt;
  // Only a caller the origin lets read the file is served from the cache or joins
  // a fetch: a block fetched with one caller's credentials is then safe to give
  // to another.
  if (!co_await may_read(ctx, fh)) co_return std::nullopt;

  const nfs3::Fattr& a = attrs.attributes;
  const cache::Stamp stamp = cache::Stamp::of(a);
  std::uint32_t rtmax = rtmax_.load(std::memory_order_relaxed);
  if (rtmax == 0) rtmax = co_await origin_rtmax(ctx, fh);
  const Range r = range_of(args, a.size, rtmax);
  if (has_read_ahead(a.size)) {
    auto ex = co_await boost::asio::this_coro::executor;
    start_read_ahead(ex, ctx, fh, stamp, r.offset, r.end);
  }

  // The reply's bytes, filled block by block (never zero-filled first), once they
  // have their place in memory_mb's share (the grant is given back when the reply
  // leaves this layer).
  auto room = take_grant(settings_.reply_budget, r.end - r.offset);
  const cache::ByteGrant reply_room = co_await std::move(room);
  nfs3::ReadRes res;
  res.file_attributes = a;
  res.data = nfs3::Payload::uninitialized(r.end - r.offset);
  // Each block's part: in memory here (read_now), else from the store on the pool,
  // else fetched. Collected first, since a coroutine cannot wait inside the loop.
  struct Wanted {
    std::uint64_t index;
    cache::BlockStore::Part part;
    bool would_wait;
  };
  std::vector<Wanted> wanted;
  std::uint64_t from_cache = 0;
  for_each_block(r, a.size, reinterpret_cast<char*>(res.data.data()),
                 [&](std::uint64_t index, const cache::BlockStore::Part& part) {
                   cache::AnswerBasis unkept;  // a coroutine's answer is never kept
                   const auto now = store_.read_now(key(fh), stamp, index, part, unkept);
                   if (now == cache::BlockStore::Now::Hit) from_cache += part.out.size();
                   else wanted.push_back({index, part, now == cache::BlockStore::Now::WouldWait});
                   return true;
                 });
  bool missed = false;
  for (const Wanted& w : wanted) {
    if (w.would_wait) {
      // The whole block is read (its checksum covers all of it): a copy beside
      // the reply, with its place in the block share while it is held.
      auto scratch_room = take_grant(settings_.block_budget, w.part.length);
      const cache::ByteGrant scratch = co_await std::move(scratch_room);
      auto look = stored_block(fh, stamp, w.index);
      const std::optional<std::string> hit = co_await std::move(look);
      // Another length: not the block this version has, so it is fetched.
      if (hit && hit->size() == w.part.length) {
        std::memcpy(w.part.out.data(), hit->data() + w.part.from, w.part.out.size());
        from_cache += w.part.out.size();
        continue;
      }
    }
    missed = true;
    bool joined = false;
    auto fetch = block_from_origin(ctx, fh, stamp, w.index, &joined);
    Fetched f = co_await std::move(fetch);
    if (f.refusal) {
      // The origin's own answer to the fetcher; one who joined asks for itself.
      if (joined) co_return std::nullopt;
      stats_.bump(DataStats::Forwarded);
      co_return std::move(*f.refusal);
    }
    if (!f.bytes || f.bytes->size() != w.part.length) co_return std::nullopt;
    std::memcpy(w.part.out.data(), f.bytes->data() + w.part.from, w.part.out.size());
  }
  res.count = static_cast<std::uint32_t>(r.end - r.offset);
  res.eof = r.end >= a.size;
  stats_.bump(missed ? DataStats::ReadMisses : DataStats::ReadHits);
  stats_.bump(DataStats::BytesFromCache, from_cache);
  co_return res;
}

// ---- fetching blocks ------------------------------------------------------------

std::size_t DataCache::fetch_charge(std::uint64_t size, std::uint64_t index) const {
  const std::uint64_t start = index * block_bytes_;
  return start >= size ? 0 : 2 * static_cast<std::size_t>(std::min<std::uint64_t>(block_bytes_, size - start));
}

Awaitable<DataCache::Fetched> DataCache::block_from_origin(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp,
                                                           std::uint64_t index, bool* joined, cache::ByteGrant room) {
  std::string flight = flight_key(fh, stamp, index);
  // Others may join this fetch: it is not abandoned when this caller leaves.
  auto fetch = [this, shared = shared_work(ctx), fh, stamp, index,
                held = std::make_shared<cache::ByteGrant>(std::move(room))] {
    return fetch_block(shared, fh, stamp, index, std::move(*held));
  };
  // A waiter whose client leaves gets JUKEBOX at once; the fetch goes on.
  nfs3::ReadRes left = made_up<nfs3::ReadRes>(nfs3::Status::Jukebox);
  SingleFlight<Fetched>::Leave leave{ctx.caller_gone, Fetched{nullptr, std::move(left)}};
  co_return co_await flights_.run(std::move(flight), fetch, joined, std::move(leave));
}

Awaitable<DataCache::Fetched> DataCache::fetch_block(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp,
                                                     std::uint64_t index, cache::ByteGrant room) {
  const std::uint64_t start = index * block_bytes_;
  const std::uint64_t end = std::min<std::uint64_t>(start + block_bytes_, stamp.size);
  if (start >= end) co_return Fetched{};
  const std::uint32_t rtmax = co_await origin_rtmax(ctx, fh);
  // Room for the block before the origin is asked (a caller that took it already
  // brings it): when memory_mb's share is used up, the fetch waits here.
  if (settings_.block_budget && room.bytes() == 0) {
    auto take = take_grant(settings_.block_budget, fetch_charge(stamp.size, index));
    room = co_await std::move(take);
  }

  auto block = std::make_shared<Block>();
  std::uint64_t filled = 0;
  bool unchanged = true;  // every reply describes the version the READ was decided with
  for (std::uint64_t pos = start; pos < end;) {
    nfs3::ReadArgs part{fh, pos, static_cast<std::uint32_t>(std::min<std::uint64_t>(rtmax, end - pos))};
    nfs3::ReadRes r = co_await next_.read(ctx, std::move(part));
    if (r.status != Status::Ok || r.gateway_status) {
      Fetched refused;
      refused.refusal = std::move(r);
      co_return refused;
    }
    if (!r.file_attributes || cache::Stamp::of(*r.file_attributes) != stamp) unchanged = false;
    const std::size_t got = std::min<std::uint64_t>(r.data.size(), end - pos);
    if (got == 0) break;  // the file ended early: it changed
    if (pos == start && got == end - start) {
      // One reply holds the whole block (rtmax >= block size, the usual case):
      // its bytes become the block, no copy.
      r.data.truncate(got);
      block->bytes = std::move(r.data);
    } else {
      if (pos == start) block->bytes = nfs3::Payload::uninitialized(end - start);
      std::memcpy(block->bytes.data() + filled, r.data.data(), got);
    }
    filled += got;
    pos += got;  // a short reply before the end: ask for the rest
  }
  if (filled != end - start) co_return Fetched{};
  // From here the block is held once: its replies are gone.
  room.keep_only(static_cast<std::size_t>(end - start));
  block->grant = std::move(room);
  std::shared_ptr<const Block> bytes = std::move(block);
  stats_.bump(DataStats::BlocksFetched);
  stats_.bump(DataStats::BytesFetched, bytes->size());
  // The file changed while it was read: these bytes belong to no version the READ
  // was decided with (cut to the old size they mix two), so the READ goes to the
  // origin instead. Found by nfsgw-difftest (docs/difftest.md).
  if (!unchanged) co_return Fetched{};
  try {
    auto put = store_block(fh, stamp, index, bytes);
    co_await std::move(put);
    store_worked();
  } catch (const cache::BlockStoreError& e) {
    store_failed(e);  // the bytes are good: answered, just not kept
  }
  co_return Fetched{std::move(bytes), std::nullopt};
}

Awaitable<std::uint32_t> DataCache::origin_rtmax(const CallContext& ctx, const nfs3::FileHandle& fh) {
  if (const std::uint32_t known = rtmax_.load(std::memory_order_relaxed)) co_return known;
  nfs3::FsinfoArgs asked{fh};
  nfs3::FsinfoRes r = co_await next_.fsinfo(ctx, std::move(asked));
  if (r.gateway_status) co_return kFallbackRtmax;  // ask again next time
  const std::uint32_t rtmax = r.status == Status::Ok && r.rtmax > 0 ? r.rtmax : kFallbackRtmax;
  rtmax_.store(rtmax, std::memory_order_relaxed);
  co_return rtmax;
}

// ---- read-ahead ------------------------------------------------------------------

void DataCache::start_read_ahead(const boost::asio::any_io_executor& ex, const CallContext& ctx,
                                 const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t offset,
                                 std::uint64_t end) {
  // Reserve what the export's limit allows, then give back what is not due.
  std::uint32_t slots = 0;
  std::uint32_t now = in_flight_->load();
  do {
    slots = now >= settings_.max_fetches_in_flight ? 0 : settings_.max_fetches_in_flight - now;
  } while (slots > 0 && !in_flight_->compare_exchange_weak(now, now + slots));
  const BlockRange due = read_ahead_.on_read(fh, stamp, offset, end, slots);
  in_flight_->fetch_sub(slots - static_cast<std::uint32_t>(due.size()));
  for (std::uint64_t index = due.first; index < due.end; ++index)
    boost::asio::co_spawn(ex, read_ahead(shared_work(ctx), fh, stamp, index), boost::asio::detached);
}

Awaitable<void> DataCache::read_ahead(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp, std::uint64_t index) {
  struct Slot {
    std::shared_ptr<std::atomic<std::uint32_t>> in_flight;
    ~Slot() { in_flight->fetch_sub(1); }
  } slot{in_flight_};
  try {
    // Known to the index is enough here: the bytes are read (and checked) when a
    // client asks for them.
    auto look = has_block(fh, stamp, index);
    if (co_await std::move(look)) co_return;
    // Only when the block fits memory_mb's share now, and no client's fetch waits
    // for room: read-ahead never waits, and never makes a client wait.
    cache::ByteGrant room;
    if (settings_.block_budget) {
      const std::size_t charge = fetch_charge(stamp.size, index);
      if (!settings_.block_budget->try_take(charge)) co_return;  // counted as refused by the budget
      room = cache::ByteGrant(settings_.block_budget, charge);
    }
    bool joined = false;
    auto fetch = block_from_origin(ctx, fh, stamp, index, &joined, std::move(room));
    Fetched f = co_await std::move(fetch);
    if (f.bytes && !joined) stats_.bump(DataStats::BlocksReadAhead);
  } catch (const cache::BlockStoreError& e) {
    store_failed(e);
  } catch (const std::exception& e) {
    spdlog::debug("data cache, export {:#x}: read-ahead of block {} failed: {}", export_id_, index, e.what());
  }
}

}  // namespace nfsgw::datacache
