// The data cache: an Nfs3Program layer, per export, above the metadata cache
// (translator -> DataCache -> MetadataCache -> Forwarder). It works with ORIGIN
// handles and keeps whole blocks of regular files in a cache::BlockStore.
//
// READ: the file's attributes come from the layer below (the metadata cache
// answers them inside its window); the caller's read permission too (an ACCESS
// through the layer below). Only a caller granted Read is served from the cache or
// joins a fetch; anyone else, and any file that is not regular or whose
// attributes cannot be had, is forwarded as is. Blocks are valid for the Stamp
// (size, mtime, ctime, fileid) they were fetched under. A miss fetches the whole
// block with READs of at most the origin's rtmax, with the caller's credentials;
// concurrent misses for one block of one version make one fetch. A fetched block
// is stored only when every reply's attributes show the version the READ was
// decided with. Sequential READs start fetches of the next blocks (read-ahead).
// The answer is what the origin would give: bytes up to the file's size, eof when
// they reach it.
//
// WRITE is write-through: forwarded first, the client gets the origin's answer
// (stability and verifier untouched); then cached blocks are patched when the WCC
// pre-op attributes show the file was the cached version, else dropped. The
// origin's write verifier is watched (uncommitted_writes.h): when it changes (the
// origin restarted and may have lost UNSTABLE writes not yet committed), the blocks
// of every file written UNSTABLE since its last COMMIT are dropped. SETATTR:
// forwarded, then the blocks are restamped (cut to a new size) or dropped.
// Everything else passes straight to the next layer.
//
// The cache never fails a call: a store error (cache::BlockStoreError) is logged
// once per export, counted, and the READ forwarded. Every BlockStore call runs on
// the DiskPool, never on an Asio thread.
//
// Lifetime: read-ahead fetches and drop_file()/drop_all() jobs run detached and
// use this object; destroy it only after its io_context has stopped running and
// the DiskPool has been joined (GatewayApp's order), or once fetches_in_flight()
// is 0 and the pool is idle (tests).
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/block_store.h"
#include "cache/byte_budget.h"
#include "cache/disk_pool.h"
#include <boost/asio/any_io_executor.hpp>

#include "gateway/datacache/data_stats.h"
#include "gateway/datacache/read_ahead.h"
#include "gateway/datacache/uncommitted_writes.h"
#include "gateway/forwarding_program.h"
#include "gateway/single_flight.h"

namespace nfsgw::datacache {

struct DataCacheSettings {
  /// How far past a sequential READ to fetch ahead ([export] readahead_kb * 1024); 0: off.
  std::uint64_t readahead_bytes = 0;
  /// Read-ahead fetches in flight at most, for this export (READs of clients are
  /// not limited here: each waits for its own blocks).
  std::uint32_t max_fetches_in_flight = 16;
  /// Files whose last READ position is remembered for read-ahead.
  std::size_t read_ahead_files = 1024;
  /// memory_mb's shares for READ data (cache/memory_budget.h), shared by every
  /// export; null: unbounded (tests that do not test them).
  /// - replies: the reply bytes of a READ served here, from allocation until the
  ///   reply leaves this layer (then [server] max_pending_mb counts them);
  /// - blocks: a block fetched from the origin, twice its size while its READs
  ///   are out (the transport's buffer and the decoded reply), then once for as
  ///   long as anyone holds it; a block read from the disk for a READ that needs
  ///   only a part of it. Read-ahead starts only when its block fits at once.
  std::shared_ptr<cache::ByteBudget> reply_budget, block_budget;
  /// Files whose READs go to the layer below as asked, not through blocks: those
  /// the write-back layer below holds dirty bytes of (it serves a range of them
  /// without the origin, a whole block may need it). Unset: none.
  std::function<bool(const nfs3::FileHandle&)> passes_through;
};

class DataCache final : public ForwardingProgram<DataCache> {
 public:
  /// `next`: the metadata cache (or the forwarder); `store`'s blocks are read and
  /// written on `pool`. All references must outlive this (see Lifetime above).
  DataCache(Nfs3Program& next, cache::BlockStore& store, cache::DiskPool& pool, std::uint32_t export_id,
            DataCacheSettings settings);

  Awaitable<nfs3::SetattrRes> setattr(const CallContext& ctx, nfs3::SetattrArgs args) override;
  /// A READ whose attributes and permission the layer below answers at once and
  /// whose blocks are all in memory (the store's hot tier, or its index in memory
  /// and its bytes in the page cache), with no read-ahead to start: answered here.
  Now<nfs3::ReadRes> read_now(const CallContext& ctx, const nfs3::ReadArgs& args) override;
  Awaitable<nfs3::ReadRes> read(const CallContext& ctx, nfs3::ReadArgs args) override;
  Awaitable<nfs3::WriteRes> write(const CallContext& ctx, nfs3::WriteArgs args) override;
  Awaitable<nfs3::CommitRes> commit(const CallContext& ctx, nfs3::CommitArgs args) override;

  /// `nfsgw invalidate`: drops the blocks of one file (by ORIGIN handle) / of the
  /// whole export. Fire and forget: queued on the pool, done shortly after the
  /// return; a store error is logged and counted.
  void drop_file(const nfs3::FileHandle& origin);
  void drop_all();

  const DataStats& stats() const { return stats_; }
  /// Times the write verifier of the replies from below changed.
  std::size_t verifier_changes() const { return uncommitted_.verifier_changes(); }
  /// Read-ahead fetches started and not finished yet.
  std::uint32_t fetches_in_flight() const { return in_flight_->load(); }

 private:
  /// A block's bytes as fetched, with its place in block_budget: freed together
  /// when the last caller that missed it is done with it.
  struct Block {
    nfs3::Payload bytes;
    cache::ByteGrant grant;
    std::size_t size() const { return bytes.size(); }
    const char* data() const { return reinterpret_cast<const char*>(bytes.data()); }
  };
  /// One block as fetched from the origin, shared by every caller that missed it.
  struct Fetched {
    /// The block's bytes, complete; null when the origin's replies did not make a
    /// whole block (then the READ is forwarded).
    std::shared_ptr<const Block> bytes;
    /// The origin's error or gateway_status reply: given as is to the caller that
    /// fetched; a caller that joined makes its own READ instead.
    std::optional<nfs3::ReadRes> refusal;
  };

  // READ (data_cache_read.cpp).
  /// The bytes [offset, end) a READ of a file of `size` answers: at most rtmax,
  /// never past the end.
  struct Range {
    std::uint64_t offset = 0, end = 0;
  };
  static Range range_of(const nfs3::ReadArgs& args, std::uint64_t size, std::uint32_t rtmax);
  /// Where each block of `r` goes in a reply of `reply` bytes: calls
  /// `f(index, Part)` for each, in order, until it returns false.
  template <typename F>
  bool for_each_block(const Range& r, std::uint64_t size, char* reply, F&& f) const;
  /// The caller's READ as the cache answers it; nullopt: forward it instead.
  Awaitable<std::optional<nfs3::ReadRes>> read_cached(const CallContext& ctx, const nfs3::ReadArgs& args);
  Awaitable<bool> may_read(const CallContext& ctx, const nfs3::FileHandle& fh);
  /// Block `index` through the single flight; `joined` tells whether another
  /// caller's fetch answered. `room`: the block's place in block_budget when the
  /// caller has taken it (read-ahead), else the fetch waits for it.
  Awaitable<Fetched> block_from_origin(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp,
                                       std::uint64_t index, bool* joined, cache::ByteGrant room = {});
  /// The fetch itself (the flight's leader): READs, then the store when consistent.
  Awaitable<Fetched> fetch_block(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp, std::uint64_t index,
                                 cache::ByteGrant room);
  /// What a fetch of block `index` of a file of `size` bytes holds in block_budget
  /// while its READs are out.
  std::size_t fetch_charge(std::uint64_t size, std::uint64_t index) const;
  Awaitable<std::uint32_t> origin_rtmax(const CallContext& ctx, const nfs3::FileHandle& fh);
  /// Whether a file of `size` bytes can have blocks to read ahead: not when it
  /// has one block or none (a READ of it fetches that block itself), so that its
  /// READs are not noted and take no place among the files remembered.
  bool has_read_ahead(std::uint64_t size) const { return settings_.readahead_bytes > 0 && size > block_bytes_; }
  /// Starts read-ahead fetches for a READ of [offset, end) when it is sequential.
  void start_read_ahead(const boost::asio::any_io_executor& ex, const CallContext& ctx, const nfs3::FileHandle& fh, const cache::Stamp& stamp,
                        std::uint64_t offset, std::uint64_t end);
  Awaitable<void> read_ahead(CallContext ctx, nfs3::FileHandle fh, cache::Stamp stamp, std::uint64_t index);

  // The store, on the pool (data_cache_store.cpp). They throw cache::BlockStoreError.
  /// Whether the store's index holds the block (no bytes read): for read-ahead.
  Awaitable<bool> has_block(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t index);
  Awaitable<std::optional<std::string>> stored_block(const nfs3::FileHandle& fh, const cache::Stamp& stamp,
                                                     std::uint64_t index);
  Awaitable<void> store_block(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t index,
                              std::shared_ptr<const Block> bytes);
  Awaitable<bool> patch_blocks(const nfs3::FileHandle& fh, const cache::Stamp& before, const cache::Stamp& after,
                               std::uint64_t offset, std::vector<std::uint8_t> data);
  Awaitable<bool> restamp_file(const nfs3::FileHandle& fh, const cache::Stamp& before, const cache::Stamp& after);
  /// Drops the file's blocks (on the pool; waits for it); never throws.
  Awaitable<void> drop_now(const nfs3::FileHandle& fh);
  /// Drops the file's blocks here and now (a pool thread); never throws.
  void drop_blocking(const cache::ObjectKey& file);
  /// Drops the blocks of `forget`'s files (waits for it); logs a verifier change.
  Awaitable<void> forget_files(Forget forget);
  /// Counts a store error and logs the first one of this export (again after
  /// store_worked()).
  void store_failed(const std::exception& e);
  /// A block was stored: after a logged store error, says the store works again.
  void store_worked();

  cache::ObjectKey key(const nfs3::FileHandle& fh) const { return {export_id_, fh}; }

  cache::BlockStore& store_;
  cache::DiskPool& pool_;
  std::uint32_t export_id_;
  DataCacheSettings settings_;
  std::uint32_t block_bytes_;
  DataStats stats_;
  ReadAhead read_ahead_;
  SingleFlight<Fetched> flights_;
  std::atomic<std::uint32_t> rtmax_{0};  // 0 until FSINFO answered
  // Shared with the read-ahead coroutines: one whose frame is destroyed after this
  // layer (at shutdown, with the io_context's unrun handlers) still counts down
  // into live memory.
  std::shared_ptr<std::atomic<std::uint32_t>> in_flight_ = std::make_shared<std::atomic<std::uint32_t>>(0);
  std::atomic<bool> store_error_logged_{false};
  UncommittedWrites uncommitted_;
};

}  // namespace nfsgw::datacache
