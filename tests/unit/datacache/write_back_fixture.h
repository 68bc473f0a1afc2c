// The write-back layer (gateway/writeback/) over FakeFiles as the layer below,
// with a dirty log on MemoryLogFiles (power losses and failing disks), a
// ManualClock for the delay and the flusher's backoff, and the flusher running on
// the io_context the test pumps: the fixture of write_back_test.cpp,
// write_verifier_test.cpp and setattr_times_test.cpp.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include "cache/clock.h"
#include "cache/disk_pool.h"
#include "cache/dirty_log.h"
#include "cache/log_files.h"
#include "gateway/writeback/dirty_files.h"
#include "gateway/writeback/flusher.h"
#include "gateway/writeback/write_back.h"
#include "tests/unit/datacache/fake_files.h"
#include "tests/unit/support/layer_calls.h"

namespace nfsgw::writeback::write_back_fixture {

using namespace std::chrono_literals;
using datacache::test::FakeFiles;
using nfs3::Proc;
using nfs3::Status;
using nfsgw::test::as;
using nfsgw::test::invoke;

constexpr std::uint32_t kSpace = 9;
constexpr cache::Millis kDelay = 30'000;

inline std::string text_of(const nfs3::ReadRes& r) { return {r.data.begin(), r.data.end()}; }

class WriteBackTest : public ::testing::Test {
 protected:
  WriteBackTest() { open(); }
  ~WriteBackTest() override { close(); }

  void open(std::uint64_t budget = 1 << 20, std::uint64_t segment = 16 << 10) {
    cache::DirtyLogOptions o;
    o.budget_bytes = budget;
    o.segment_bytes = segment;
    o.clock = &clock;
    log = cache::DirtyLog::open(segments, o);
    dirty = std::make_unique<DirtyFiles>(*log, clock);
    dirty->load_from_log();
    FlusherSettings fs;
    fs.tick = 2ms;
    fs.extent_bytes = 4096;
    flusher = std::make_unique<Flusher>(io, *dirty, pool, clock, fs);
    flusher->set_space(kSpace, &origin, kDelay);
    WriteBackSettings ws;
    ws.budget_wait = 100ms;
    back = std::make_unique<WriteBack>(origin, *dirty, *flusher, pool, kSpace, true, ws);
    through = std::make_unique<WriteBack>(origin, *dirty, *flusher, pool, kSpace, false, ws);
    flusher->start();
  }
  /// Stops the flusher and lets what it started end (the layers first).
  void close() {
    if (!flusher) return;
    for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) origin.release(static_cast<Proc>(p));
    flusher->stop();
    for (int i = 0; i < 200; ++i) {
      io.restart();
      io.run_for(1ms);
    }
    back.reset();
    through.reset();
    flusher.reset();
    dirty.reset();
    log.reset();
  }
  /// An orderly restart of nfsgw (SIGTERM): the log's verifier is kept.
  void clean_restart() {
    log->close_clean();
    close();
    open();
  }
  /// A restart of nfsgw after a power loss of its machine.
  void power_loss_restart() {
    close();
    segments.power_loss(cache::MemoryLogFiles::Loss::All);
    open();
  }

  template <typename T>
  T run(Awaitable<T> a) {
    auto f = boost::asio::co_spawn(io, std::move(a), boost::asio::use_future);
    nfsgw::test::pump_until_ready(io, f);
    return f.get();
  }
  template <typename Pred>
  void pump_until(Pred done) {
    nfsgw::test::pump_until(io, done);
  }
  /// Lets the flusher run a few passes.
  void pump_passes() {
    for (int i = 0; i < 50; ++i) {
      io.restart();
      io.run_for(1ms);
    }
  }

  nfs3::WriteRes write(WriteBack& layer, const nfs3::FileHandle& fh, std::uint64_t offset, const std::string& data,
                       nfs3::StableHow stable = nfs3::StableHow::FileSync, std::uint32_t uid = 1000) {
    nfs3::WriteArgs a;
    a.file = fh;
    a.offset = offset;
    a.count = static_cast<std::uint32_t>(data.size());
    a.stable = stable;
    a.data.assign(data.begin(), data.end());
    return run(invoke(layer, &Nfs3Program::write, as(uid), std::move(a)));
  }
  nfs3::ReadRes read(WriteBack& layer, const nfs3::FileHandle& fh, std::uint64_t offset, std::uint32_t count) {
    return run(invoke(layer, &Nfs3Program::read, as(1000), nfs3::ReadArgs{fh, offset, count}));
  }
  nfs3::GetattrRes getattr(WriteBack& layer, const nfs3::FileHandle& fh) {
    return run(invoke(layer, &Nfs3Program::getattr, as(1000), nfs3::GetattrArgs{fh}));
  }
  nfs3::CommitRes commit(WriteBack& layer, const nfs3::FileHandle& fh) {
    return run(invoke(layer, &Nfs3Program::commit, as(1000), nfs3::CommitArgs{fh, 0, 0}));
  }
  nfs3::SetattrRes setattr(WriteBack& layer, const nfs3::FileHandle& fh, const nfs3::Sattr& to,
                           std::uint32_t uid = 1000) {
    nfs3::SetattrArgs a;
    a.object = fh;
    a.new_attributes = to;
    return run(invoke(layer, &Nfs3Program::setattr, as(uid), std::move(a)));
  }
  nfs3::SetattrRes truncate(WriteBack& layer, const nfs3::FileHandle& fh, std::uint64_t size) {
    nfs3::SetattrArgs a;
    a.object = fh;
    a.new_attributes.size = size;
    return run(invoke(layer, &Nfs3Program::setattr, as(1000), std::move(a)));
  }
  cache::ObjectKey key(const nfs3::FileHandle& fh) const { return {kSpace, fh}; }
  bool is_dirty(const nfs3::FileHandle& fh) const { return dirty->has(key(fh)); }
  /// Lets the delay pass and waits until the file is clean.
  void flush_by_delay(const nfs3::FileHandle& fh) {
    clock.advance(kDelay + 1);
    pump_until([&] { return !is_dirty(fh); });
  }
  nfs3::WriteVerf log_verifier() const {
    nfs3::WriteVerf v{};
    const std::uint64_t n = log->write_verifier();
    std::memcpy(v.data(), &n, sizeof n);
    return v;
  }

  // Destroyed last: coroutine frames still queued in it are freed after the rest.
  boost::asio::io_context io;
  cache::ManualClock clock;
  cache::DiskPool pool{2};
  cache::MemoryLogFiles segments;
  FakeFiles origin;
  std::unique_ptr<cache::DirtyLog> log;
  std::unique_ptr<DirtyFiles> dirty;
  std::unique_ptr<Flusher> flusher;
  std::unique_ptr<WriteBack> back, through;
};

}  // namespace nfsgw::writeback::write_back_fixture
