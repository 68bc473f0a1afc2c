// The metadata cache layer over a FakeOrigin and an in-memory metadata store, with
// a ManualClock the test moves and an io_context the test drives: calls run to
// completion one at a time (run), or are started together (spawn) and driven
// until a condition holds (pump_until), which is how held origin calls are seen.
#pragma once

#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include "cache/clock.h"
#include "cache/coherency.h"
#include "cache/kv_store.h"
#include "cache/metadata_store.h"
#include "gateway/metacache/metadata_cache.h"
#include "tests/unit/metacache/fake_origin.h"
#include "tests/unit/support/layer_calls.h"

namespace nfsgw::metacache::test {

using namespace std::chrono_literals;
using nfs3::Proc;
using nfs3::Status;

using nfsgw::test::as;
using nfsgw::test::invoke;

class MetaCacheTest : public ::testing::Test {
 protected:
  static constexpr std::uint32_t kExport = 7;
  static constexpr std::uint32_t kUser = 1000;

  MetaCacheTest() {
    settings.attr_ttl = 10s;
    settings.dir_ttl = 20s;
    settings.negative_ttl = 5s;
    settings.access_ttl = 1h;
    settings.fsstat_ttl = 5s;
    settings.fsinfo_ttl = 1h;
  }
  ~MetaCacheTest() override {
    for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) origin.release(static_cast<Proc>(p));
    settle();
  }

  /// Creates the layer with `settings` over a fresh in-memory store.
  void start() {
    kv = cache::make_memory_store(cache::metadata_families());
    open_layer();
  }
  /// Creates the store (over `kv`) and the layer.
  void open_layer() {
    cache::MetadataStoreOptions o;
    o.clock = &clock;
    store = std::make_unique<cache::MetadataStore>(*kv, o);
    layer = std::make_unique<MetadataCache>(origin, *store, kExport, settings, clock);
  }
  void close_layer() {
    settle();
    layer.reset();
    store.reset();
  }

  // ---- driving coroutines ---------------------------------------------------------

  template <typename T>
  std::future<T> spawn(Awaitable<T> a) {
    return boost::asio::co_spawn(io, std::move(a), boost::asio::use_future);
  }
  /// Runs handlers until `done()`; fails (throws) after a generous deadline.
  template <typename Pred>
  void pump_until(Pred done) {
    nfsgw::test::pump_until(io, done);
  }
  /// Runs every handler that is ready (background work the layer started).
  void settle() {
    for (;;) {
      io.restart();
      if (io.poll() == 0) break;
    }
  }
  template <typename T>
  T wait(std::future<T>& f) {
    nfsgw::test::pump_until_ready(io, f);
    settle();
    return f.get();
  }
  template <typename T>
  T run(Awaitable<T> a) {
    auto f = spawn(std::move(a));
    return wait(f);
  }

  // ---- calls through the layer ------------------------------------------------------
  // GETATTR, LOOKUP and ACCESS go as the dispatcher sends them: the answer at once
  // when the layer has one (`*_now`), else the coroutine. So every test of those
  // calls checks both paths together; `answer_now = false` takes the coroutine only.

  bool answer_now = true;

  nfs3::GetattrRes getattr(const nfs3::FileHandle& fh, const CallContext& ctx = as(0)) {
    if (answer_now)
      if (auto now = layer->getattr_now(ctx, nfs3::GetattrArgs{fh})) return *now;
    return run(invoke(*layer, &Nfs3Program::getattr, ctx, nfs3::GetattrArgs{fh}));
  }
  nfs3::LookupRes lookup(const nfs3::FileHandle& dir, const std::string& name, const CallContext& ctx = as(0)) {
    if (answer_now)
      if (auto now = layer->lookup_now(ctx, nfs3::LookupArgs{nfs3::DirOpArgs{dir, name}})) return *now;
    return run(invoke(*layer, &Nfs3Program::lookup, ctx, nfs3::LookupArgs{nfs3::DirOpArgs{dir, name}}));
  }
  nfs3::AccessRes access(const nfs3::FileHandle& fh, std::uint32_t bits, const CallContext& ctx = as(0)) {
    if (answer_now)
      if (auto now = layer->access_now(ctx, nfs3::AccessArgs{fh, bits})) return *now;
    return run(invoke(*layer, &Nfs3Program::access, ctx, nfs3::AccessArgs{fh, bits}));
  }
  nfs3::ReadlinkRes readlink(const nfs3::FileHandle& fh, const CallContext& ctx = as(0)) {
    return run(invoke(*layer, &Nfs3Program::readlink, ctx, nfs3::ReadlinkArgs{fh}));
  }
  nfs3::ReaddirplusRes readdirplus(const nfs3::FileHandle& dir, const CallContext& ctx = as(0),
                                   std::uint64_t cookie = 0, nfs3::CookieVerf verf = {},
                                   std::uint32_t dircount = 65536, std::uint32_t maxcount = 1u << 20) {
    return run(invoke(*layer, &Nfs3Program::readdirplus, ctx,
                      nfs3::ReaddirplusArgs{dir, cookie, verf, dircount, maxcount}));
  }
  nfs3::ReaddirRes readdir(const nfs3::FileHandle& dir, const CallContext& ctx = as(0), std::uint64_t cookie = 0,
                           nfs3::CookieVerf verf = {}, std::uint32_t count = 1u << 20) {
    return run(invoke(*layer, &Nfs3Program::readdir, ctx, nfs3::ReaddirArgs{dir, cookie, verf, count}));
  }
  /// Every name of `dir` through READDIRPLUS pages ("." and ".." left out), sorted.
  std::vector<std::string> list(const nfs3::FileHandle& dir, const CallContext& ctx = as(0)) {
    std::vector<std::string> names;
    std::uint64_t cookie = 0;
    nfs3::CookieVerf verf{};
    for (int pages = 0; pages < 10000; ++pages) {
      auto r = readdirplus(dir, ctx, cookie, verf);
      if (r.status != Status::Ok) throw std::runtime_error("list: READDIRPLUS failed");
      for (const auto& e : r.entries)
        if (e.name != "." && e.name != "..") names.push_back(e.name);
      if (r.eof) {
        std::sort(names.begin(), names.end());
        return names;
      }
      if (r.entries.empty()) throw std::runtime_error("list: empty page before eof");
      cookie = r.entries.back().cookie;
      verf = r.cookieverf;
    }
    throw std::runtime_error("list: no eof");
  }
  nfs3::SetattrRes chmod(const nfs3::FileHandle& fh, std::uint32_t mode, const CallContext& ctx = as(0)) {
    nfs3::SetattrArgs a;
    a.object = fh;
    a.new_attributes.mode = mode;
    return run(invoke(*layer, &Nfs3Program::setattr, ctx, std::move(a)));
  }
  nfs3::CreateRes create(const nfs3::FileHandle& dir, const std::string& name, const CallContext& ctx = as(0)) {
    nfs3::CreateArgs a;
    a.where = {dir, name};
    a.mode = nfs3::CreateMode::Guarded;
    a.obj_attributes.mode = 0644;
    return run(invoke(*layer, &Nfs3Program::create, ctx, std::move(a)));
  }
  nfs3::MkdirRes mkdir(const nfs3::FileHandle& dir, const std::string& name, const CallContext& ctx = as(0)) {
    nfs3::MkdirArgs a;
    a.where = {dir, name};
    a.attributes.mode = 0755;
    return run(invoke(*layer, &Nfs3Program::mkdir, ctx, std::move(a)));
  }
  nfs3::RemoveRes remove(const nfs3::FileHandle& dir, const std::string& name, const CallContext& ctx = as(0)) {
    return run(invoke(*layer, &Nfs3Program::remove, ctx, nfs3::RemoveArgs{{dir, name}}));
  }
  nfs3::RmdirRes rmdir(const nfs3::FileHandle& dir, const std::string& name, const CallContext& ctx = as(0)) {
    return run(invoke(*layer, &Nfs3Program::rmdir, ctx, nfs3::RmdirArgs{{dir, name}}));
  }
  nfs3::RenameRes rename(const nfs3::FileHandle& from_dir, const std::string& from, const nfs3::FileHandle& to_dir,
                         const std::string& to, const CallContext& ctx = as(0)) {
    return run(invoke(*layer, &Nfs3Program::rename, ctx, nfs3::RenameArgs{{from_dir, from}, {to_dir, to}}));
  }
  nfs3::LinkRes link(const nfs3::FileHandle& file, const nfs3::FileHandle& dir, const std::string& name,
                     const CallContext& ctx = as(0)) {
    return run(invoke(*layer, &Nfs3Program::link, ctx, nfs3::LinkArgs{file, {dir, name}}));
  }
  nfs3::WriteRes write(const nfs3::FileHandle& file, std::uint64_t offset, const std::string& data,
                       const CallContext& ctx = as(0)) {
    nfs3::WriteArgs a;
    a.file = file;
    a.offset = offset;
    a.count = static_cast<std::uint32_t>(data.size());
    a.stable = nfs3::StableHow::FileSync;
    a.data.assign(data.begin(), data.end());
    return run(invoke(*layer, &Nfs3Program::write, ctx, std::move(a)));
  }
  nfs3::FsinfoRes fsinfo(const nfs3::FileHandle& fh) {
    return run(invoke(*layer, &Nfs3Program::fsinfo, as(0), nfs3::FsinfoArgs{fh}));
  }
  nfs3::PathconfRes pathconf(const nfs3::FileHandle& fh) {
    return run(invoke(*layer, &Nfs3Program::pathconf, as(0), nfs3::PathconfArgs{fh}));
  }
  nfs3::FsstatRes fsstat(const nfs3::FileHandle& fh) {
    return run(invoke(*layer, &Nfs3Program::fsstat, as(0), nfs3::FsstatArgs{fh}));
  }

  cache::ManualClock clock;
  FakeOrigin origin;
  cache::CoherencySettings settings;
  std::unique_ptr<cache::KvStore> kv;
  std::unique_ptr<cache::MetadataStore> store;
  std::unique_ptr<MetadataCache> layer;
  // Last: destroyed first, with whatever it still holds, while the layer lives.
  boost::asio::io_context io;
};

/// Names as a sorted list, for comparisons.
inline std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace nfsgw::metacache::test
