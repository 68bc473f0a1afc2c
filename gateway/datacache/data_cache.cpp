// The data cache: the calls it passes through, the changes it learns from (WRITE,
// SETATTR), and dropping. READ is in data_cache_read.cpp, the store's calls on
// the pool in data_cache_store.cpp.
#include "gateway/datacache/data_cache.h"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

namespace nfsgw::datacache {

using nfs3::Status;

namespace {

/// The file's version before and after a change, from the change's WCC data: the
/// post-op attributes, and the same with the pre-op size, mtime and ctime.
/// Nullopt when either side is missing.
struct Versions {
  cache::Stamp before, after;
};
std::optional<Versions> versions_of(const nfs3::WccData& wcc) {
  if (!wcc.before || !wcc.after) return std::nullopt;
  Versions v{cache::Stamp::of(*wcc.after), cache::Stamp::of(*wcc.after)};
  v.before.size = wcc.before->size;
  v.before.mtime = wcc.before->mtime;
  v.before.ctime = wcc.before->ctime;
  return v;
}

/// A change that failed at the origin and whose WCC data shows the file unchanged
/// leaves the cached blocks as they are; any other outcome that is not a success
/// with WCC data may have changed the file.
bool failed_unchanged(Status status, bool gateway_status, const std::optional<Versions>& v) {
  return status != Status::Ok && !gateway_status && v && v->before == v->after;
}

}  // namespace

DataCache::DataCache(Nfs3Program& next, cache::BlockStore& store, cache::DiskPool& pool, std::uint32_t export_id,
                     DataCacheSettings settings)
    : ForwardingProgram(next),
      store_(store),
      pool_(pool),
      export_id_(export_id),
      settings_(settings),
      block_bytes_(std::max<std::uint32_t>(store.block_bytes(), 1)),
      read_ahead_(block_bytes_, settings.readahead_bytes, settings.read_ahead_files) {}

// The verifier passes through untouched: clients resend after an origin restart.
// A changed one drops the blocks of the files with uncommitted writes.
Awaitable<nfs3::CommitRes> DataCache::commit(const CallContext& ctx, nfs3::CommitArgs args) {
  const nfs3::FileHandle fh = args.file;
  const bool whole_file = args.count == 0;
  nfs3::CommitRes res = co_await next_.commit(ctx, std::move(args));
  if (res.status == Status::Ok && !res.gateway_status) {
    Forget forget = uncommitted_.committed(fh, res.verf, whole_file);
    if (!forget.files.empty() || forget.verifier_changed) {
      auto drop = forget_files(std::move(forget));
      co_await std::move(drop);
    }
  }
  co_return res;
}

// ---- changes ---------------------------------------------------------------------

Awaitable<nfs3::WriteRes> DataCache::write(const CallContext& ctx, nfs3::WriteArgs args) {
  stats_.bump(DataStats::WriteThrough);
  const nfs3::FileHandle fh = args.file;
  const std::uint64_t offset = args.offset;
  // The one copy of the payload: what patches the cached blocks once the origin
  // has acknowledged it (the arguments move on to the origin). None when the
  // store knows, from memory, that the file has no blocks.
  const bool had_blocks = !store_.no_blocks_now(key(fh));
  std::vector<std::uint8_t> data;
  if (had_blocks) data = args.data;
  nfs3::WriteRes res = co_await next_.write(ctx, std::move(args));
  if (res.status == Status::Ok && !res.gateway_status) {
    // Before the patch: a changed verifier drops this file's blocks too when it
    // had uncommitted writes (the patch below then finds no blocks).
    Forget forget = uncommitted_.written(fh, res.verf, res.committed == nfs3::StableHow::Unstable);
    if (!forget.files.empty() || forget.verifier_changed) {
      auto drop = forget_files(std::move(forget));
      co_await std::move(drop);
    }
  }

  const std::optional<Versions> v = versions_of(res.file_wcc);
  if (res.status == Status::Ok && !res.gateway_status && v) {
    // Asked again now that the origin has answered: still no blocks means nothing
    // to patch, and no hop to the pool (a block stored from here on was fetched
    // under a Stamp of its own and is checked against the reader's).
    if (store_.no_blocks_now(key(fh))) co_return res;
    // Blocks appeared while the WRITE was out, and there is no copy to patch
    // them with: dropped.
    if (!had_blocks) {
      auto drop = drop_now(fh);
      co_await std::move(drop);
      co_return res;
    }
    data.resize(std::min<std::size_t>(data.size(), res.count));
    bool failed = false;
    try {
      auto patch = patch_blocks(fh, v->before, v->after, offset, std::move(data));
      if (co_await std::move(patch)) stats_.bump(DataStats::BlocksPatched);
    } catch (const cache::BlockStoreError& e) {
      store_failed(e);
      failed = true;
    }
    if (failed) co_await drop_now(fh);
  } else if (!failed_unchanged(res.status, res.gateway_status, v)) {
    co_await drop_now(fh);
  }
  co_return res;
}

Awaitable<nfs3::SetattrRes> DataCache::setattr(const CallContext& ctx, nfs3::SetattrArgs args) {
  const nfs3::FileHandle fh = args.object;
  nfs3::SetattrRes res = co_await next_.setattr(ctx, std::move(args));

  const std::optional<Versions> v = versions_of(res.obj_wcc);
  if (res.status == Status::Ok && !res.gateway_status && v) {
    bool failed = false;
    try {
      auto restamp = restamp_file(fh, v->before, v->after);
      co_await std::move(restamp);
    } catch (const cache::BlockStoreError& e) {
      store_failed(e);
      failed = true;
    }
    if (failed) co_await drop_now(fh);
  } else if (!failed_unchanged(res.status, res.gateway_status, v)) {
    co_await drop_now(fh);
  }
  co_return res;
}

// ---- dropping ----------------------------------------------------------------------

void DataCache::drop_file(const nfs3::FileHandle& origin) {
  stats_.bump(DataStats::FilesDropped);
  read_ahead_.forget(origin);
  pool_.post([this, k = key(origin)] { drop_blocking(k); });
}

void DataCache::drop_all() {
  read_ahead_.clear();
  pool_.post([this] {
    try {
      store_.drop_export(export_id_);
    } catch (const cache::BlockStoreError& e) {
      store_failed(e);
    }
  });
}

void DataCache::drop_blocking(const cache::ObjectKey& file) {
  try {
    store_.drop_file(file);
  } catch (const cache::BlockStoreError& e) {
    store_failed(e);
  }
}

Awaitable<void> DataCache::forget_files(Forget forget) {
  if (forget.verifier_changed) {
    // Below a write-back export the verifier is nfsgw's dirty log's, not the origin's.
    spdlog::warn("data cache, export {:#x}: the write verifier changed (the origin, or on a write-back export "
                 "nfsgw's dirty log, restarted and may have lost UNSTABLE writes not yet committed): dropping "
                 "the cached blocks of {} file(s) written since their last COMMIT",
                 export_id_, forget.files.size());
  }
  for (const auto& fh : forget.files) {
    auto drop = drop_now(fh);
    co_await std::move(drop);
  }
}

void DataCache::store_worked() {
  if (store_error_logged_.load(std::memory_order_relaxed) && store_error_logged_.exchange(false))
    spdlog::warn("data cache, export {:#x}: block store works again: blocks are kept again", export_id_);
}

void DataCache::store_failed(const std::exception& e) {
  stats_.bump(DataStats::StoreErrors);
  if (!store_error_logged_.exchange(true))
    spdlog::warn("data cache, export {:#x}: block store error, served from the origin instead "
                 "(logged once until it works again): {}",
                 export_id_, e.what());
}

}  // namespace nfsgw::datacache
