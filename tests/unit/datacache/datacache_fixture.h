// The data cache layer over FakeFiles and a memory block store (behind FlakyStore),
// with a real DiskPool and an io_context the test drives: calls run to completion
// one at a time (run), or are started together (spawn) and driven until a
// condition holds (pump_until), which is how held origin calls are seen.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include "cache/block_store.h"
#include "cache/disk_pool.h"
#include "gateway/datacache/data_cache.h"
#include "tests/unit/datacache/fake_files.h"
#include "tests/unit/datacache/flaky_store.h"
#include "tests/unit/support/layer_calls.h"

namespace nfsgw::datacache::test {

using namespace std::chrono_literals;
using nfs3::Proc;
using nfs3::Status;

using nfsgw::test::as;
using nfsgw::test::invoke;

/// `n` bytes that differ from block to block and from `seed` to seed.
inline std::string pattern(std::size_t n, unsigned seed = 1) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + i / 4096 * 7 + seed * 29) % 251);
  return s;
}

inline std::string bytes_of(const nfs3::ReadRes& r) { return {r.data.begin(), r.data.end()}; }

class DataCacheTest : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kExport = 7;
  static constexpr std::uint32_t kBlock = 4096;
  static constexpr std::uint32_t kUser = 1000;
  static constexpr unsigned kPoolThreads = 2;

  ~DataCacheTest() override {
    for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) origin.release(static_cast<Proc>(p));
    if (layer) quiesce();
  }

  static cache::BlockStoreOptions store_options() {
    cache::BlockStoreOptions o;
    o.block_bytes = kBlock;
    o.disk_bytes = 1ull << 30;
    o.memory_bytes = 1 << 20;  // the hot tier too, as nfsgw runs it
    return o;
  }
  /// Creates the layer with `settings` over a fresh memory store (or `inner`).
  void start(std::unique_ptr<cache::BlockStore> inner = nullptr) {
    if (!inner) inner = cache::make_memory_block_store(store_options());
    store = std::make_unique<FlakyStore>(std::move(inner));
    layer = std::make_unique<DataCache>(origin, *store, pool, kExport, settings);
  }

  // ---- driving coroutines ---------------------------------------------------------

  template <typename T>
  std::future<T> spawn(Awaitable<T> a) {
    return boost::asio::co_spawn(io, std::move(a), boost::asio::use_future);
  }
  template <typename Pred>
  void pump_until(Pred done) {
    nfsgw::test::pump_until(io, done);
  }
  /// Waits until every job queued on the pool so far has run.
  void drain_pool() {
    auto all_here = std::make_shared<std::latch>(kPoolThreads);
    auto done = std::make_shared<std::latch>(kPoolThreads);
    for (unsigned i = 0; i < kPoolThreads; ++i)
      pool.post([all_here, done] {
        all_here->arrive_and_wait();  // every thread is here: nothing queued before still runs
        done->count_down();
      });
    done->wait();
  }
  /// Lets background work (read-ahead, drops, replies just released) finish: until
  /// a round that empties the pool finds no handler ready in the io_context.
  void quiesce() {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    for (;;) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("quiesce: timed out");
      drain_pool();
      io.restart();
      if (io.poll() == 0) break;
    }
  }
  template <typename T>
  T wait(std::future<T>& f) {
    nfsgw::test::pump_until_ready(io, f);
    return f.get();
  }
  template <typename T>
  T run(Awaitable<T> a) {
    auto f = spawn(std::move(a));
    return wait(f);
  }

  // ---- calls through the layer ------------------------------------------------------

  Awaitable<nfs3::ReadRes> read_call(const nfs3::FileHandle& fh, std::uint64_t offset, std::uint32_t count,
                                     const CallContext& ctx = as(0)) {
    return invoke(*layer, &Nfs3Program::read, ctx, nfs3::ReadArgs{fh, offset, count});
  }
  nfs3::ReadRes read(const nfs3::FileHandle& fh, std::uint64_t offset, std::uint32_t count,
                     const CallContext& ctx = as(0)) {
    return run(read_call(fh, offset, count, ctx));
  }
  nfs3::WriteRes write(const nfs3::FileHandle& fh, std::uint64_t offset, const std::string& data,
                       nfs3::StableHow stable = nfs3::StableHow::FileSync) {
    nfs3::WriteArgs a;
    a.file = fh;
    a.offset = offset;
    a.count = static_cast<std::uint32_t>(data.size());
    a.stable = stable;
    a.data.assign(data.begin(), data.end());
    return run(invoke(*layer, &Nfs3Program::write, as(0), std::move(a)));
  }
  nfs3::SetattrRes truncate(const nfs3::FileHandle& fh, std::uint64_t size) {
    nfs3::SetattrArgs a;
    a.object = fh;
    a.new_attributes.size = size;
    return run(invoke(*layer, &Nfs3Program::setattr, as(0), std::move(a)));
  }
  nfs3::SetattrRes chmod(const nfs3::FileHandle& fh, std::uint32_t mode) {
    nfs3::SetattrArgs a;
    a.object = fh;
    a.new_attributes.mode = mode;
    return run(invoke(*layer, &Nfs3Program::setattr, as(0), std::move(a)));
  }

  DataCounts counts() const { return layer->stats().snapshot(); }
  std::uint64_t cached_blocks() const { return store->usage().blocks; }

  // Destroyed last: coroutine frames still queued in it are freed after the rest.
  boost::asio::io_context io;
  cache::DiskPool pool{kPoolThreads};
  FakeFiles origin;
  DataCacheSettings settings;
  std::unique_ptr<FlakyStore> store;
  std::unique_ptr<DataCache> layer;
};

}  // namespace nfsgw::datacache::test
