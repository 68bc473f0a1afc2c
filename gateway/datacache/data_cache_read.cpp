// The data cache's READ: attributes and permission from the layer below, blocks
// from the store or fetched whole from the origin (one fetch per block and
// version however many callers miss it), read-ahead after sequential READs.
#include "gateway/datacache/data_cache.h"
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

Awaitable<nfs3::ReadRes> DataCache::read(const CallContext& ctx, nfs3::ReadArgs args) {
  DataStats::bump(stats_.reads);
  std::optional<nfs3::ReadRes> served;
  try {
    auto cached = read_cached(ctx, args);
    served = co_await std::move(cached);
  } catch (const cache::BlockStoreError& e) {
    store_failed(e);
  }
  if (served) co_return std::move(*served);
  DataStats::bump(stats_.forwarded);
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
  // At most rtmax bytes, as the origin would answer (and never a reply as large
  // as any count a client sends).
  std::uint32_t rtmax = rtmax_.load(std::memory_order_relaxed);
  if (rtmax == 0) rtmax = co_await origin_rtmax(ctx, fh);
  const std::uint64_t count = std::min(args.count, rtmax);
  const std::uint64_t offset = args.offset;
  const std::uint64_t end = offset >= a.size ? offset : offset + std::min<std::uint64_t>(count, a.size - offset);
  auto ex = co_await boost::asio::this_coro::executor;
  start_read_ahead(ex, ctx, fh, stamp, offset, end);

  nfs3::ReadRes res;
  res.file_attributes = a;
  // The reply's bytes, filled block by block (never zero-filled first).
  res.data = nfs3::Payload::uninitialized(end - offset);
  char* const reply = reinterpret_cast<char*>(res.data.data());
  bool missed = false;
  std::uint64_t from_cache = 0;
  // A READ of nothing (count 0, or at or past the end of the file) touches no
  // block: its reply has no bytes (and no memory to copy into).
  for (std::uint64_t index = offset / block_bytes_; offset < end && index * block_bytes_ < end; ++index) {
    const std::uint64_t start = index * block_bytes_;
    const std::uint64_t length = std::min<std::uint64_t>(block_bytes_, a.size - start);
    // The part of the block the READ asks for, and where it goes in the reply.
    const std::uint64_t from = std::max(offset, start) - start;
    const std::uint64_t to = std::min(end, start + length) - start;
    char* const dest = reply + (start + from - offset);
    // A block whose index records are in memory and bytes in the page cache is
    // read here, on this thread: into the reply itself when the READ covers all of
    // it (checked there), else into a buffer of its own. Anything that could wait
    // for the disk goes to the pool.
    const bool whole = from == 0 && to == length;
    std::unique_ptr<char[]> part;
    if (!whole) part = std::make_unique_for_overwrite<char[]>(length);
    const std::span<char> into(whole ? dest : part.get(), length);
    const auto now = store_.read_now(key(fh), stamp, index, into);
    if (now == cache::BlockStore::Now::Hit) {
      if (!whole) std::memcpy(dest, into.data() + from, to - from);
      from_cache += to - from;
      continue;
    }
    std::optional<std::string> hit;
    if (now == cache::BlockStore::Now::WouldWait) {
      auto look = stored_block(fh, stamp, index);
      hit = co_await std::move(look);
    }
    if (hit && hit->size() != length) hit.reset();  // not the block this version has: fetch it
    std::shared_ptr<const std::string> fetched;
    if (hit) {
      from_cache += to - from;
    } else {
      missed = true;
      bool joined = false;
      auto fetch = block_from_origin(ctx, fh, stamp, index, &joined);
      Fetched f = co_await std::move(fetch);
      if (f.refusal) {
        // The origin's own answer to the fetcher; one who joined asks for itself.
        if (joined) co_return std::nullopt;
        DataStats::bump(stats_.forwarded);
        co_return std::move(*f.refusal);
      }
      if (!f.bytes || f.bytes->size() != length) co_return std::nullopt;
      fetched = std::move(f.bytes);
    }
    const std::string& block = hit ? *hit : *fetched;
    std::memcpy(dest, block.data() + from, to - from);
  }
  res.count = static_cast<std::uint32_t>(end - offset);
  res.eof = end >= a.size;
  DataStats::bump(missed ? stats_.read_misses : stats_.read_hits);
  DataStats::bump(stats_.bytes_from_cache, from_cache);
  co_return res;
}

// ---- fetching blocks ------------------------------------------------------------

Awaitable<DataCache::Fetched> DataCache::block_from_origin(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp,
                                                           std::uint64_t index, bool* joined) {
  std::string flight = flight_key(fh, stamp, index);
  // Others may join this fetch: it is not abandoned when this caller leaves.
  auto fetch = [this, shared = shared_work(ctx), fh, stamp, index] { return fetch_block(shared, fh, stamp, index); };
  // A waiter whose client leaves gets JUKEBOX at once; the fetch goes on.
  nfs3::ReadRes left = made_up<nfs3::ReadRes>(nfs3::Status::Jukebox);
  SingleFlight<Fetched>::Leave leave{ctx.caller_gone, Fetched{nullptr, std::move(left)}};
  co_return co_await flights_.run(std::move(flight), fetch, joined, std::move(leave));
}

Awaitable<DataCache::Fetched> DataCache::fetch_block(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp,
                                                     std::uint64_t index) {
  const std::uint64_t start = index * block_bytes_;
  const std::uint64_t end = std::min<std::uint64_t>(start + block_bytes_, stamp.size);
  if (start >= end) co_return Fetched{};
  const std::uint32_t rtmax = co_await origin_rtmax(ctx, fh);

  auto bytes = std::make_shared<std::string>();
  bytes->reserve(end - start);
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
    bytes->append(reinterpret_cast<const char*>(r.data.data()), got);
    pos += got;  // a short reply before the end: ask for the rest
  }
  if (bytes->size() != end - start) co_return Fetched{};
  DataStats::bump(stats_.blocks_fetched);
  DataStats::bump(stats_.bytes_fetched, bytes->size());
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
    bool joined = false;
    auto fetch = block_from_origin(ctx, fh, stamp, index, &joined);
    Fetched f = co_await std::move(fetch);
    if (f.bytes && !joined) DataStats::bump(stats_.blocks_read_ahead);
  } catch (const cache::BlockStoreError& e) {
    store_failed(e);
  } catch (const std::exception& e) {
    spdlog::debug("data cache, export {:#x}: read-ahead of block {} failed: {}", export_id_, index, e.what());
  }
}

}  // namespace nfsgw::datacache
