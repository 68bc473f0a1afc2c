// The data cache's calls of the block store, each run on the disk pool (they do
// file I/O); the coroutine resumes on its own executor. None is a coroutine:
// callers build the awaitable into a named local before co_await (GCC 12).
#include "gateway/datacache/data_cache.h"
#include "gateway/datacache/pool_await.h"

namespace nfsgw::datacache {

Awaitable<std::optional<std::string>> DataCache::stored_block(const nfs3::FileHandle& fh, const cache::Stamp& stamp,
                                                              std::uint64_t index) {
  auto job = [this, k = key(fh), stamp, index] { return store_.read(k, stamp, index); };
  return on_pool(pool_, std::move(job));
}

Awaitable<bool> DataCache::has_block(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t index) {
  auto job = [this, k = key(fh), stamp, index] { return store_.contains(k, stamp, index); };
  return on_pool(pool_, std::move(job));
}

Awaitable<void> DataCache::store_block(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t index,
                                       std::shared_ptr<const Block> bytes) {
  auto job = [this, k = key(fh), stamp, index, b = std::move(bytes)] {
    store_.write(k, stamp, index, std::string_view(b->data(), b->size()));
  };
  return on_pool(pool_, std::move(job));
}

Awaitable<bool> DataCache::patch_blocks(const nfs3::FileHandle& fh, const cache::Stamp& before,
                                        const cache::Stamp& after, std::uint64_t offset,
                                        std::vector<std::uint8_t> data) {
  auto job = [this, k = key(fh), before, after, offset, d = std::move(data)] {
    const std::string_view bytes(reinterpret_cast<const char*>(d.data()), d.size());
    return store_.apply_write(k, before, after, offset, bytes);
  };
  return on_pool(pool_, std::move(job));
}

Awaitable<bool> DataCache::restamp_file(const nfs3::FileHandle& fh, const cache::Stamp& before,
                                        const cache::Stamp& after) {
  auto job = [this, k = key(fh), before, after] { return store_.restamp(k, before, after); };
  return on_pool(pool_, std::move(job));
}

Awaitable<void> DataCache::drop_now(const nfs3::FileHandle& fh) {
  stats_.bump(DataStats::FilesDropped);
  read_ahead_.forget(fh);
  auto job = [this, k = key(fh)] { drop_blocking(k); };
  return on_pool(pool_, std::move(job));
}

}  // namespace nfsgw::datacache
