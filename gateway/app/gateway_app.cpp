#include "gateway/app/gateway_app.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <spdlog/spdlog.h>
#include <thread>

#include "cache/block_store.h"
#include "cache/byte_budget.h"
#include "cache/change_journal.h"
#include "cache/dirty_log.h"
#include "cache/disk_pool.h"
#include "cache/export_roots.h"
#include "cache/handle_codec.h"
#include "cache/kv_store.h"
#include "cache/handle_memo.h"
#include "cache/memory_budget.h"
#include "cache/metadata_store.h"
#include "cache/peek_memo.h"
#include "gateway/admin/admin_server.h"
#include "gateway/app/cache_admin.h"
#include "gateway/app/lock_service.h"
#include "gateway/app/origin_locks_factory.h"
#include "gateway/datacache/data_cache.h"
#include "gateway/app/memory_trim.h"
#include "gateway/translator/handle_translator.h"
#include "gateway/metacache/metadata_cache.h"
#include "gateway/metrics/measured_program.h"
#include "gateway/metrics/metrics_collector.h"
#include "gateway/metrics/metrics_endpoint.h"
#include "gateway/mount_program.h"
#include "gateway/reload/config_reloader.h"
#include "gateway/rpc/answer_memo.h"
#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/mount_procedures.h"
#include "gateway/rpc/nlm_procedures.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "gateway/server/rpcbind_registration.h"
#include "gateway/server/rpc_server.h"
#include "gateway/upstream/forwarder.h"
#include "gateway/writeback/dirty_files.h"
#include "gateway/writeback/flusher.h"
#include "gateway/writeback/write_back.h"
#include "protocol/nfs3_sizes.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace nfsgw {

namespace asio = boost::asio;

namespace {

/// SIGHUP: reload the configuration, on the reloader's thread; then wait again.
void wait_for_hangup(asio::signal_set& hangup, reload::ConfigReloader& reloader) {
  hangup.async_wait([&hangup, &reloader](const boost::system::error_code& ec, int) {
    if (ec) return;
    spdlog::info("signal SIGHUP: reloading the configuration");
    reloader.reload_in_background();
    wait_for_hangup(hangup, reloader);
  });
}

/// The threads that answer calls (and keep memos): [server] threads, 0 = one per core.
unsigned server_threads(const config::Config& cfg) {
  return cfg.server.threads != 0 ? cfg.server.threads : std::max(1u, std::thread::hardware_concurrency());
}

/// The per-thread memos, each shaped, sized and made from this one list (a new memo
/// is added here once): memory_budget() gives memo i the share memo_sets[i], and
/// every serving thread makes each one's tables before its first call.
struct ThreadMemo {
  cache::MemoShape (*shape)();
  bool config::CacheConfig::*enabled;  // null: always on
  void (*set_sets)(std::size_t);
  void (*make_for_this_thread)();
};
constexpr ThreadMemo kThreadMemos[] = {
    {&cache::PeekMemo::shape, &config::CacheConfig::peek_memo, &cache::PeekMemo::set_sets,
     &cache::PeekMemo::make_for_this_thread},
    {&cache::HandleMemo::shape, nullptr, &cache::HandleMemo::set_sets, &cache::HandleMemo::make_for_this_thread},
    {&rpc::AnswerMemo::shape, &config::CacheConfig::answer_memo, &rpc::AnswerMemo::set_sets,
     &rpc::AnswerMemo::make_for_this_thread},
};

/// The memos' shapes in kThreadMemos' order; a memo switched off takes nothing.
std::vector<cache::MemoShape> memo_shapes(const config::Config& cfg) {
  std::vector<cache::MemoShape> out;
  for (const ThreadMemo& m : kThreadMemos) {
    const cache::MemoShape s = m.shape();
    out.push_back(m.enabled == nullptr || cfg.cache.*m.enabled ? s : cache::MemoShape{0, s.max_sets});
  }
  return out;
}

cache::MemoryBudget memory_budget(const config::Config& cfg) {
  return cache::split_memory(static_cast<std::size_t>(cfg.cache.memory_mb) << 20, server_threads(cfg),
                             memo_shapes(cfg));
}

/// The per-thread memos made from now on get their share (before any thread starts).
void size_thread_memos(const cache::MemoryBudget& b) {
  for (std::size_t i = 0; i < std::size(kThreadMemos); ++i) kThreadMemos[i].set_sets(b.memo_sets.at(i));
}

/// The calling thread's tables of every memo, made now (a serving thread, before
/// its first call, so that no call waits for their pages).
void make_thread_memos() {
  for (const ThreadMemo& m : kThreadMemos) m.make_for_this_thread();
}

/// How long the files of `space` stay dirty before their flush: the shortest
/// write_back_delay of its write-back exports; 0 when none writes back (what is
/// left in the log from before goes at once).
cache::Millis flush_delay(const config::Config& cfg, std::uint32_t space) {
  std::optional<cache::Millis> delay;
  for (const auto& e : cfg.exports)
    if (e.cache_space == space && e.writes == config::Writes::Back)
      delay = std::min<cache::Millis>(delay.value_or(cache::kNever), e.write_back_delay.count());
  return delay.value_or(0);
}

}  // namespace

struct GatewayApp::Stack {
  const config::ExportConfig* config = nullptr;  // as built (origin, connections)
  upstream::Forwarder* forwarder = nullptr;
  metacache::MetadataCache* cache = nullptr;
  datacache::DataCache* data = nullptr;
  writeback::WriteBack* write_back = nullptr;  // null: no dirty log
  Nfs3Program* flush_via = nullptr;            // what the flusher sends this export's files through
  ExportRoute route;
  CacheAdmin::Export admin;
  // [server] metrics_listen: what clients waited for and what the origin took.
  std::string path;
  const metrics::CallMeter* client_meter = nullptr;
  const metrics::CallMeter* origin_meter = nullptr;
};

struct GatewayApp::Parts {
  explicit Parts(const cache::MemoryBudget& budget)
      : read_replies(std::make_shared<cache::ByteBudget>(budget.read_replies)),
        read_blocks(std::make_shared<cache::ByteBudget>(budget.read_blocks)),
        duplicates{rpc::DuplicateCacheOptions{budget.duplicate_entries}, cache::wall_clock()} {}
  // One RocksDB database: the handle map and export roots (default family,
  // synced) and the metadata cache's families (unsynced, evictable).
  std::unique_ptr<cache::KvStore> db;
  std::optional<cache::MetadataStore> metadata;
  // What changes through nfsgw may have made stale, written down until the store
  // has it on disk (destroyed before the store, after the caches that use it).
  std::optional<cache::ChangeJournal> journal;
  std::optional<cache::ExportRoots> roots;
  std::optional<cache::HandleCodec> codec;
  std::vector<std::unique_ptr<upstream::Forwarder>> forwarders;
  // [server] metrics_listen: per export a meter of what clients waited for and one
  // of what the origin took, and the layers feeding them (above the forwarders,
  // below the caches: destroyed after the layers that call them).
  std::vector<std::unique_ptr<metrics::CallMeter>> meters;
  std::vector<std::unique_ptr<metrics::MeasuredProgram>> measured;
  /// One order of origin replies and one numbering of generations for every
  /// metadata cache: exports of one origin share their records (cache_space).
  metacache::Sequence sequence{cache::wall_clock().now_ms()};
  std::vector<std::unique_ptr<metacache::MetadataCache>> caches;
  // The data cache: its block store (files under <dir>/data, its own small index),
  // the layers using it, and the pool they do their file I/O on. Destroyed pool
  // first (it finishes queued jobs, which use the layers and the store).
  std::unique_ptr<cache::BlockStore> blocks;
  std::vector<std::unique_ptr<datacache::DataCache>> data_caches;
  // memory_mb's shares for READ data in flight, shared by every export's layer.
  std::shared_ptr<cache::ByteBudget> read_replies, read_blocks;
  std::optional<cache::DiskPool> data_pool;
  // Write-back (gateway/writeback/): the dirty log under <dir>/dirty, the pool its
  // file I/O runs on, the dirty files' shared state, the flusher and every
  // export's layer. Open while an export writes back or the log holds dirty data.
  // The flusher sends through the metadata caches above: destroyed before them
  // (declared after), the pool first of the rest (its jobs use the log).
  std::unique_ptr<cache::DirtyLog> dirty_log;
  std::optional<writeback::DirtyFiles> dirty_files;
  std::optional<cache::DiskPool> dirty_pool;
  std::optional<writeback::Flusher> flusher;
  std::vector<std::unique_ptr<writeback::WriteBack>> write_backs;
  std::optional<HandleTranslator> translator;
  std::optional<MountProgram> mount;
  // [server] nlm_port: the lock service (before the translator it checks handles
  // with goes).
  std::optional<LockService> locks;
  std::optional<CacheAdmin> cache_admin;
  std::optional<admin::AdminServer> admin;
  rpc::DuplicateCache duplicates;
  std::unique_ptr<MemoryTrimmer> trimmer;
  rpc::Dispatcher dispatcher;
  std::optional<server::RpcServer> server;
  std::optional<RpcbindRegistration> rpcbind;
  // Every export's stack ever built (reloads add some); `serving` the ones in the
  // configuration now, by export id. The mutex orders reloads against stop().
  std::mutex stacks_mu;
  std::vector<std::unique_ptr<Stack>> stacks;
  std::unordered_map<std::uint32_t, Stack*> serving;
  bool running = false;  // the forwarders have been started
  // Removed exports' forwarders stop when these fire (cancelled by stop()).
  std::vector<std::shared_ptr<asio::steady_timer>> retiring;
  std::optional<reload::ConfigReloader> reloader;
  // [server] metrics_listen: the endpoint, destroyed first (its threads read
  // everything else).
  std::unique_ptr<metrics::MetricsEndpoint> metrics_endpoint;
};

GatewayApp::GatewayApp(config::Config cfg, std::string config_path, const cache::MonotonicClock& timer_clock)
    : cfg_(std::move(cfg)),
      config_path_(std::move(config_path)),
      timer_clock_(timer_clock),
      budget_(memory_budget(cfg_)),
      parts_(std::make_unique<Parts>(budget_)) {
  Parts& p = *parts_;
  // Before any thread starts: malloc keeps little it does not use (memory_trim.h).
  tune_malloc();
  p.trimmer = std::make_unique<MemoryTrimmer>(std::chrono::seconds(10));
  std::filesystem::create_directories(cfg_.cache.dir);
  // memory_mb is split once (cache/memory_budget.h); each part goes to its user.
  size_thread_memos(budget_);
  spdlog::info("memory_mb = {}: memory layer {} MiB, RocksDB block cache {} MiB (memtables flushed beyond {} MiB), "
               "hot blocks {} MiB (index {} MiB), memos {} MiB for {} threads, duplicate cache {} calls, READ data in flight "
               "{} + {} MiB (replies, blocks), writes not yet on disk {} MiB",
               cfg_.cache.memory_mb, budget_.memory_layer >> 20, budget_.block_cache >> 20,
               budget_.write_buffers >> 20, budget_.hot_blocks >> 20, budget_.block_index >> 20, budget_.thread_memos >> 20, budget_.threads,
               budget_.duplicate_entries, budget_.read_replies >> 20, budget_.read_blocks >> 20,
               budget_.pending_writes >> 20);
  std::vector<std::string> families = cache::metadata_families();
  families.emplace_back(cache::change_journal_family());
  p.db = cache::open_rocksdb_store(cfg_.cache.dir + "/db", cache::RocksDbMemory{budget_.block_cache, budget_.write_buffers}, families);
  cache::MetadataStoreOptions mopts;
  mopts.memory_bytes = budget_.memory_layer;
  mopts.pending_bytes = budget_.pending_writes;
  // After a restart, half of the memory layer is refilled in the background with
  // the newest records on disk (the last run's hot set); calls fill the rest.
  mopts.preload_bytes = budget_.memory_layer / 2;
  mopts.on_preloaded = [](std::uint64_t records, std::int64_t ms) {
    spdlog::info("metadata cache: {} records of the last run brought back into memory in {} ms", records, ms);
  };
  mopts.disk_bytes = static_cast<std::uint64_t>(cfg_.cache.metadata_max_gb) << 30;
  mopts.thread_memo = cfg_.cache.peek_memo;
  p.metadata.emplace(*p.db, mopts);
  p.metadata->on_disk_error([](const std::string& msg) {
    spdlog::error("metadata cache disk failed; serving from memory and the origin from now on: {}", msg);
  });
  p.metadata->on_disk_recovered([] {
    spdlog::warn("metadata cache disk works again: records are kept on disk again (the cache on disk starts empty)");
  });
  recover_journal();
  p.roots.emplace(*p.db);
  p.codec.emplace(cache::load_or_create_secret(cfg_.cache.secret_file), *p.db);

  open_block_store();
  open_dirty_log();

  std::vector<ExportRoute> routes;
  std::vector<CacheAdmin::Export> admin_exports;
  for (const auto& e : cfg_.exports) {
    Stack& st = build_export(e);
    p.serving[e.id] = &st;
    routes.push_back(st.route);
    admin_exports.push_back(st.admin);
  }
  // FSINFO tells clients no larger READ/WRITE than nfsgw's own records can carry.
  p.translator.emplace(*p.codec, routes, nfs3::max_transfer_for_record(cfg_.server.max_record_bytes));
  p.mount.emplace(cfg_.exports, *p.codec, *p.translator);
  p.dispatcher.add(rpc::make_nfs3_table(*p.translator));
  // [cache] answer_memo = false: every answer walks the layers (for measurements).
  p.dispatcher.use_answer_memo(cfg_.cache.answer_memo);
  if (!cfg_.cache.answer_memo) spdlog::info("answer memo off ([cache] answer_memo = false)");
  p.dispatcher.use_duplicate_cache(&p.duplicates);
  p.dispatcher.add(rpc::make_mount3_table(*p.mount));
  p.dispatcher.add(rpc::make_mount1_table(*p.mount));
  if (cfg_.server.nlm_port != 0) {
    // A granted lock: the file's cached attributes are asked of the origin again.
    p.locks.emplace(io_, cfg_, *p.translator, [&p](std::uint32_t id, const nfs3::FileHandle& fh) {
      std::lock_guard lock(p.stacks_mu);
      auto it = p.serving.find(id);
      if (it != p.serving.end() && it->second->cache) it->second->cache->forget_attributes(fh);
    }, make_origin_locks(io_), stop_origin_locks, make_lock_peers(io_));
    p.dispatcher.add(rpc::make_nlm4_table(p.locks->service(), rpc::NlmPeers{p.locks->results(), &p.locks->shares()}));
    if (p.flusher) {
      // Before an UNLOCK reaches the origin, what was written under the lock and is
      // still dirty goes there (any export of the file's origin may hold it).
      p.locks->service().before_release([&p](std::uint32_t id, const nfs3::FileHandle& fh) -> Awaitable<bool> {
        std::optional<std::uint32_t> space;
        {
          std::lock_guard lock(p.stacks_mu);
          auto it = p.serving.find(id);
          if (it != p.serving.end()) space = it->second->config->cache_space;
        }
        const cache::ObjectKey k{space.value_or(0), fh};
        if (!space || !p.dirty_files->has(k)) co_return true;
        Awaitable<bool> flush = p.flusher->flush_file(k);  // named: no temporary inside co_await (GCC 12)
        co_return co_await std::move(flush);
      });
    }
  }
  p.cache_admin.emplace(*p.metadata, p.blocks.get(), std::move(admin_exports));
  p.cache_admin->use_duplicate_counts([d = &p.duplicates] { return d->counts(); });
  if (p.dirty_files) {
    p.cache_admin->use_write_back_counts([d = &*p.dirty_files] { return d->counts(); });
    // `nfsgw flush [EXPORT[/PATH]]`: dirty files are known by handle, not by path,
    // so a path flushes its export's whole origin (every file dirty there).
    p.cache_admin->on_flush([this](const std::string& export_path, const std::string& /*subpath*/,
                                   std::shared_ptr<writeback::FlushProgress> progress,
                                   std::function<void(writeback::FlushOutcome)> done) {
      std::optional<std::uint32_t> space;
      if (!export_path.empty()) {
        std::lock_guard lock(parts_->stacks_mu);
        for (const auto& [id, st] : parts_->serving)
          if (st->config->path == export_path) space = st->config->cache_space;
      }
      parts_->flusher->flush_all(space, std::move(progress), std::move(done));
    });
  }
  p.reloader.emplace(cfg_, config_path_, [this](const config::Config& now, const config::ReloadPlan& plan) {
    return apply(now, plan);
  });
  p.cache_admin->on_reload([this](const std::string& path) { return parts_->reloader->reload(path); });
  {
    // `nfsgw warm` walks through the translator, as clients' calls do, in READs of
    // a data block (no larger than nfsgw's own transfers).
    warm::WarmEnvironment w;
    w.executor = io_.get_executor();
    w.nfs = &*p.translator;
    w.root_handle = [codec = &*p.codec](std::uint32_t id) { return codec->root(id); };
    w.read_bytes = std::min<std::uint32_t>(cfg_.cache.block_kb << 10,
                                           nfs3::max_transfer_for_record(cfg_.server.max_record_bytes));
    p.cache_admin->enable_warm(std::move(w), static_cast<std::uint64_t>(cfg_.cache.metadata_max_gb) << 30);
  }
  p.admin.emplace(io_, admin::admin_socket_path(cfg_.cache.dir), *p.cache_admin);
  p.admin->start();

  server::ServerLimits limits;
  limits.connection.max_record_bytes = cfg_.server.max_record_bytes;
  limits.connection.max_calls_in_flight = cfg_.server.max_calls_in_flight;
  limits.connection.max_pending_bytes = static_cast<std::size_t>(cfg_.server.max_pending_mb_per_connection) << 20;
  limits.connection.idle_timeout = cfg_.server.idle_timeout;
  limits.max_connections = cfg_.server.max_connections;
  limits.max_calls_in_flight_total = cfg_.server.max_calls_in_flight_total;
  limits.max_pending_bytes_total = static_cast<std::size_t>(cfg_.server.max_pending_mb) << 20;
  p.server.emplace(io_, p.dispatcher, limits, timer_clock_);
  // The metrics endpoint before the NFS listeners: an address it cannot bind stops
  // the start before any client can connect.
  if (!cfg_.server.metrics_listen.empty()) {
    metrics::MetricsSources sources;
    sources.report = [a = &*p.cache_admin] { return a->report(); };
    sources.server = [s = &*p.server] { return s->usage(); };
    sources.duplicates = [d = &p.duplicates] { return d->counts(); };
    // The exports served now (a reload adds and removes some).
    sources.exports = [&p] {
      std::lock_guard lock(p.stacks_mu);
      std::vector<metrics::MetricsSources::Export> out;
      for (const auto& [id, st] : p.serving) out.push_back({st->path, st->client_meter, st->origin_meter});
      return out;
    };
    if (p.locks) sources.locks = [l = &*p.locks] { return l->figures(); };
    p.metrics_endpoint = std::make_unique<metrics::MetricsEndpoint>(
        cfg_.server.metrics_listen, std::make_shared<metrics::MetricsCollector>(std::move(sources)));
    spdlog::info("metrics: http://{}/metrics", cfg_.server.metrics_listen);
  }
  nfs_port_ = p.server->listen(cfg_.server.listen, cfg_.server.nfs_port);
  std::uint16_t mount_port = nfs_port_;
  if (cfg_.server.mount_port != 0 && cfg_.server.mount_port != nfs_port_)
    mount_port = p.server->listen(cfg_.server.listen, cfg_.server.mount_port);
  std::uint16_t nlm_port = 0;
  if (cfg_.server.nlm_port != 0) {
    nlm_port = cfg_.server.nlm_port == nfs_port_ || cfg_.server.nlm_port == mount_port
                   ? cfg_.server.nlm_port
                   : p.server->listen(cfg_.server.listen, cfg_.server.nlm_port);
    spdlog::info("NLM v4 on TCP port {}", nlm_port);
  }
  if (cfg_.server.register_rpcbind) p.rpcbind.emplace(nfs_port_, mount_port, nlm_port);
  // Listening: the last run's hot set comes back into memory in the background,
  // not competing with the start itself (cache/metadata_store.h).
  p.metadata->preload_in_background();
}

GatewayApp::Stack& GatewayApp::build_export(const config::ExportConfig& e) {
  Parts& p = *parts_;
  auto st = std::make_unique<Stack>();
  st->config = &e;
  auto& fwd = p.forwarders.emplace_back(std::make_unique<upstream::Forwarder>(io_, e));
  upstream::Forwarder* f = fwd.get();
  st->forwarder = f;
  st->path = e.path;
  // With metrics on, a MeasuredProgram over `inner` feeding a new meter.
  const bool metrics_on = !cfg_.server.metrics_listen.empty();
  auto measure = [&p](Nfs3Program& inner, const metrics::CallMeter*& meter_out) -> Nfs3Program* {
    metrics::CallMeter* meter = p.meters.emplace_back(std::make_unique<metrics::CallMeter>()).get();
    meter_out = meter;
    return p.measured.emplace_back(std::make_unique<metrics::MeasuredProgram>(inner, *meter)).get();
  };
  Nfs3Program* origin_side = metrics_on ? measure(*f, st->origin_meter) : f;
  Nfs3Program* top = origin_side;
  metacache::MetadataCache* mc = nullptr;
  if (e.coherency.enabled) {
    p.caches.push_back(std::make_unique<metacache::MetadataCache>(
        *origin_side, *p.metadata, e.cache_space, e.coherency, cache::wall_clock(), &p.sequence));
    mc = p.caches.back().get();
    mc->use_journal(&*p.journal);
    // Reads the settings through a pointer from now on, so that reloads can change them.
    mc->set_settings(&e.coherency);
    top = mc;
  }
  // Write-back: every export gets the layer while the dirty log is open, so each
  // shows the dirty data of the files it shares with a write-back export.
  writeback::WriteBack* wb = nullptr;
  if (p.dirty_log) {
    p.write_backs.push_back(std::make_unique<writeback::WriteBack>(*top, *p.dirty_files, *p.flusher, *p.dirty_pool,
                                                                   e.cache_space, e.writes == config::Writes::Back));
    wb = p.write_backs.back().get();
    top = wb;
    st->flush_via = mc ? static_cast<Nfs3Program*>(mc) : origin_side;
    p.flusher->set_space(e.cache_space, st->flush_via, flush_delay(cfg_, e.cache_space));
  }
  // File data is valid while the metadata cache says the file is unchanged: no
  // data cache without it.
  datacache::DataCache* dc = nullptr;
  if (e.data_cache && mc && p.blocks) {
    datacache::DataCacheSettings ds;
    ds.readahead_bytes = static_cast<std::uint64_t>(e.readahead_kb) << 10;
    ds.reply_budget = p.read_replies;
    ds.block_budget = p.read_blocks;
    if (p.dirty_files)
      ds.passes_through = [d = &*p.dirty_files, space = e.cache_space](const nfs3::FileHandle& fh) {
        return d->has(cache::ObjectKey{space, fh});
      };
    p.data_caches.push_back(std::make_unique<datacache::DataCache>(*top, *p.blocks, *p.data_pool, e.id, ds));
    dc = p.data_caches.back().get();
    top = dc;
  } else if (e.data_cache && !mc) {
    spdlog::info("export {}: data_cache needs metadata_cache; file data is not cached", e.path);
  }
  st->cache = mc;
  st->data = dc;
  st->write_back = wb;
  if (metrics_on) top = measure(*top, st->client_meter);
  // The root handle the origin gave last time answers at once, so that a
  // restarted nfsgw serves its cache before (or without) the origin's MNT.
  std::optional<nfs3::FileHandle> stored = p.roots->load(e.id);
  st->route = ExportRoute{&e, top, [f, stored]() -> Awaitable<nfs3::FileHandle> {
                            if (stored) co_return *stored;
                            co_return co_await f->root_handle();
                          }};
  cache::ExportRoots* roots = &*p.roots;
  const std::uint32_t id = e.id;
  st->admin = CacheAdmin::Export{&e, mc, dc, [roots, id] { return roots->load(id); },
                                 [f] { return f->connections_up(); }};
  spdlog::info("export {} -> {} ({}, squash {}, {} upstream connections, metadata cache {}, data cache {}, writes {})",
               e.path,
               e.origin.text, e.access == config::Access::ReadOnly ? "ro" : "rw",
               e.squash == config::Squash::None   ? "none"
               : e.squash == config::Squash::Root ? "root"
                                                  : "all",
               e.upstream_connections, e.coherency.enabled ? cache::consistency_name(e.coherency.consistency) : "off",
               dc ? "on" : "off", e.writes == config::Writes::Back && wb ? "back" : "through");
  return *p.stacks.emplace_back(std::move(st));
}

void GatewayApp::start_export(Stack& st) {
  upstream::Forwarder* f = st.forwarder;
  f->start();
  // Keep the export's root handle once the origin has answered MNT.
  const config::ExportConfig& e = *st.config;
  cache::ExportRoots* roots = &*parts_->roots;
  asio::co_spawn(
      io_,
      [f, &e, roots]() -> Awaitable<void> {
        nfs3::FileHandle root = co_await f->root_handle();
        if (root.empty()) co_return;  // stopped
        try {
          auto old = roots->load(e.id);
          if (old && !(*old == root))
            spdlog::warn("export {}: the origin's root handle changed; kept for the next start of nfsgw", e.path);
          roots->save(e.id, root);
        } catch (const std::exception& ex) {
          spdlog::error("export {}: cannot keep the root handle: {}", e.path, ex.what());
        }
      },
      asio::detached);
}

std::vector<std::string> GatewayApp::apply(const config::Config& now, const config::ReloadPlan& plan) {
  Parts& p = *parts_;
  std::vector<std::string> notes;
  std::lock_guard lock(p.stacks_mu);
  if (!p.running) throw std::runtime_error("nfsgw is stopping");
  std::unordered_map<std::uint32_t, Stack*> serving;
  std::vector<ExportRoute> routes;
  std::vector<CacheAdmin::Export> admin_exports;
  for (const auto& e : now.exports) {
    Stack* st = nullptr;
    if (auto it = p.serving.find(e.id); it != p.serving.end()) {
      st = it->second;
      // The windows apply to the next answers; the rest is read by the translator.
      if (st->cache) st->cache->set_settings(&e.coherency);
      switch_writes(*st, e, notes);
    } else {
      st = &build_export(e);
      start_export(*st);
      if (p.locks) p.locks->add_export(e);  // its locks go to its origin from now on
      if (e.data_cache && e.coherency.enabled && !st->data)
        notes.push_back("needs a restart: export " + e.path +
                        ": data_cache (the data cache's store is opened at start when an export wants it)");
      if (e.writes == config::Writes::Back && !st->write_back)
        notes.push_back("needs a restart: export " + e.path +
                        ": writes = \"back\" (the dirty log is opened at start when an export writes back)");
    }
    serving[e.id] = st;
    ExportRoute r = st->route;
    r.config = &e;
    routes.push_back(r);
    CacheAdmin::Export a = st->admin;
    a.config = &e;
    admin_exports.push_back(a);
  }
  // New exports get routes before MOUNT hands out their handles; removed ones
  // leave MOUNT and the translator (their handles answer STALE from now on).
  p.translator->update(routes);
  p.mount->update(now.exports);
  p.cache_admin->set_exports(std::move(admin_exports));
  for (const auto& [id, st] : p.serving) {
    if (serving.contains(id)) continue;
    // A removed export's origin connections close once its calls in flight have
    // had their time (no new call reaches it).
    auto timer = std::make_shared<asio::steady_timer>(io_, 2 * st->config->origin_timeout);
    upstream::Forwarder* f = st->forwarder;
    timer->async_wait([f](const boost::system::error_code& ec) {
      if (!ec) f->stop();
    });
    p.retiring.push_back(std::move(timer));
  }
  p.serving = std::move(serving);
  // Each space's files are flushed through an export still served, after the
  // delay the configuration says now.
  if (p.flusher)
    for (const auto& e : now.exports)
      if (const Stack* st = p.serving.at(e.id); st->write_back)
        p.flusher->set_space(e.cache_space, st->flush_via, flush_delay(now, e.cache_space));
  // Kept answers rest on the configuration replaced above (answer_memo.h); the
  // epoch moves after it, so that no answer built before is kept as a new one.
  p.dispatcher.forget_answers();
  (void)plan;
  return notes;
}

void GatewayApp::switch_writes(Stack& st, const config::ExportConfig& e, std::vector<std::string>& notes) {
  if (!st.write_back) return;
  const bool back = e.writes == config::Writes::Back;
  if (back == st.write_back->back()) return;
  st.write_back->set_back(back);
  if (back) {
    notes.push_back("export " + e.path + ": writes = \"back\" from now on");
    return;
  }
  // From now on a WRITE of a dirty file flushes it first (the layer's through
  // path), so nothing older lands over it; the rest is flushed now.
  notes.push_back("export " + e.path + ": writes = \"through\" from now on; its dirty data is being flushed");
  auto progress = std::make_shared<writeback::FlushProgress>();
  parts_->flusher->flush_all(e.cache_space, progress, [path = e.path](writeback::FlushOutcome out) {
    spdlog::info("export {}: switched to writes = \"through\": {}", path, out.message);
  });
}

void GatewayApp::open_dirty_log() {
  Parts& p = *parts_;
  const std::string dir = cfg_.cache.dir + "/dirty";
  bool wanted = false;
  for (const auto& e : cfg_.exports) wanted = wanted || e.writes == config::Writes::Back;
  // A log left by an earlier run with write-back exports still holds what clients
  // were told is written: opened whatever the exports say now, and flushed.
  std::error_code ec;
  const bool left = std::filesystem::is_directory(dir, ec) && !std::filesystem::is_empty(dir, ec);
  if (!wanted && !left) return;
  cache::DirtyLogOptions o;
  o.budget_bytes = static_cast<std::uint64_t>(cfg_.cache.dirty_max_gb) << 30;
  try {
    p.dirty_log = cache::DirtyLog::open(dir, o);
  } catch (const std::exception& ex) {
    // Serving without it would answer from the origin what nfsgw acknowledged and
    // has not flushed: refused, loudly.
    throw std::runtime_error("cannot open the dirty log in " + dir + " (write-back data): " + ex.what());
  }
  const cache::DirtyUsage u = p.dirty_log->usage();
  if (u.corrupt_bytes > 0)
    spdlog::error("dirty log in {}: {} bytes after a damaged record in an older segment were not replayed", dir,
                  u.corrupt_bytes);
  spdlog::info("dirty log in {}: {} dirty bytes of {} files to flush, {} MiB of {} GiB, {} records replayed "
               "({} torn bytes cut)",
               dir, u.dirty_bytes, u.dirty_files, u.log_bytes >> 20, cfg_.cache.dirty_max_gb, u.replayed_records,
               u.torn_bytes);
  if (!wanted)
    spdlog::warn("no export writes back now, but the dirty log holds {} bytes of {} files from an earlier run: "
                 "they are flushed to the origin (exports of their origin show them until then)",
                 u.dirty_bytes, u.dirty_files);
  p.dirty_files.emplace(*p.dirty_log, cache::wall_clock());
  p.dirty_files->load_from_log();
  // Log appends and syncs (fdatasync) are file I/O: off the Asio threads, apart from
  // the data cache's pool so that a sync never waits behind block reads.
  p.dirty_pool.emplace(4);
  p.flusher.emplace(io_, *p.dirty_files, *p.dirty_pool, cache::wall_clock());
}

void GatewayApp::recover_journal() {
  Parts& p = *parts_;
  cache::ChangeJournalOptions jo;
  jo.on_error = [](const std::string& msg) {
    spdlog::error("change journal: cannot write ({}); a crash may bring back cached entries from before "
                  "changes made meanwhile", msg);
  };
  p.journal.emplace(*p.db, *p.metadata, std::move(jo));
  try {
    if (const std::size_t n = p.journal->recover(); n > 0)
      spdlog::warn("the last run stopped during or just after changes: the cached entries of {} changed "
                   "objects were dropped, to be asked of the origin again", n);
  } catch (const std::exception& e) {
    // What the last run changed is unknown: nothing cached can be trusted.
    spdlog::error("change journal unreadable ({}): the metadata cache starts empty", e.what());
    for (const auto& e2 : cfg_.exports) p.metadata->erase_export(e2.cache_space);
  }
}

void GatewayApp::open_block_store() {
  Parts& p = *parts_;
  bool wanted = false;
  for (const auto& e : cfg_.exports) wanted = wanted || (e.data_cache && e.coherency.enabled);
  if (!wanted) return;
  cache::BlockStoreOptions bo;
  bo.block_bytes = cfg_.cache.block_kb << 10;
  bo.disk_bytes = static_cast<std::uint64_t>(cfg_.cache.data_max_gb) << 30;
  bo.memory_bytes = budget_.hot_blocks;  // memory_mb's share for the hot tier (cache/memory_budget.h)
  bo.index_memory_bytes = budget_.block_index;
  const std::string dir = cfg_.cache.dir + "/data";
  try {
    p.blocks = cache::open_file_block_store(dir, bo);
  } catch (const std::exception& ex) {
    // A cache that cannot be opened must not keep the gateway from serving.
    spdlog::error("data cache off: cannot open its store in {}: {}", dir, ex.what());
    return;
  }
  // Block reads and writes are file I/O (pread/pwrite of up to block_kb): a few
  // threads keep several fetches and hits in flight without touching Asio threads.
  p.data_pool.emplace(4);
  const auto u = p.blocks->usage();
  spdlog::info("data cache in {}: {} files, {} blocks, {} MiB of {} GiB, blocks of {} KiB", dir, u.files, u.blocks,
               u.bytes >> 20, cfg_.cache.data_max_gb, cfg_.cache.block_kb);
}

GatewayApp::~GatewayApp() {
  // Stop answering scrapes before what they read goes away.
  parts_->metrics_endpoint.reset();
  // Unregister first, so clients stop finding a gateway that is going away.
  parts_->rpcbind.reset();
}

void GatewayApp::run(bool handle_signals) {
  {
    std::lock_guard lock(parts_->stacks_mu);
    for (auto& st : parts_->stacks) start_export(*st);
    if (parts_->flusher) parts_->flusher->start();
    if (parts_->locks) parts_->locks->start();
    parts_->running = true;
  }
  std::optional<asio::signal_set> signals;
  std::optional<asio::signal_set> hangup_signal;
  if (handle_signals) {
    signals.emplace(io_, SIGINT, SIGTERM);
    signals->async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      spdlog::info("signal {}: stopping", sig);
      stop();
    });
    hangup_signal.emplace(io_, SIGHUP);
    wait_for_hangup(*hangup_signal, *parts_->reloader);
  }
  const unsigned threads = server_threads(cfg_);
  spdlog::info("nfsgw serving with {} threads", threads);
  // Each serving thread makes its memo tables before its first call (they are
  // sized already, above), so that no call waits for their pages.
  auto serve = [this] {
    make_thread_memos();
    io_.run();
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(serve);
  serve();
  for (auto& t : pool) t.join();
  if (signals) signals->cancel();
  if (hangup_signal) hangup_signal->cancel();
  drain();
  close_dirty_log();
}

void GatewayApp::close_dirty_log() {
  Parts& p = *parts_;
  if (!p.dirty_log) return;
  // Every WRITE acknowledged is in the log; an orderly stop keeps the write
  // verifier, so clients need not resend their UNSTABLE writes after the restart.
  try {
    p.dirty_pool.reset();  // its last jobs have run
    p.dirty_log->close_clean();
    const cache::DirtyUsage u = p.dirty_log->usage();
    spdlog::info("dirty log closed in good order: {} dirty bytes of {} files kept for the next start", u.dirty_bytes,
                 u.dirty_files);
  } catch (const std::exception& e) {
    spdlog::error("dirty log: cannot close it in good order ({}): the next start picks a new write verifier", e.what());
  }
}

void GatewayApp::drain() {
  // stop() closed the listeners and the client connections, failed the origin calls
  // in flight and stopped the io_context at once. What that queued (the failed
  // calls' coroutines resuming, the disk pools' completions) would otherwise be
  // destroyed with the io_context, after the layers it refers to: run it now, on
  // this thread, until the io_context has no work at all (then run_for() returns
  // and the io_context stops by itself), bounded in time: 5 s of the injected
  // clock, looked at between slices.
  io_.restart();
  const auto until = timer_clock_.now() + std::chrono::seconds(5);
  std::size_t ran = 0;
  for (auto now = timer_clock_.now(); !io_.stopped() && now < until; now = timer_clock_.now()) {
    const auto slice = std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(100));
    ran += io_.run_for(slice);
  }
  const auto replies = parts_->read_replies->usage(), blocks = parts_->read_blocks->usage();
  spdlog::info("READ data in flight at most: replies {} KiB of {} KiB ({} waited), blocks {} KiB of {} KiB ({} "
               "waited, {} read-aheads skipped)",
               replies.peak >> 10, replies.limit >> 10, replies.waits, blocks.peak >> 10, blocks.limit >> 10,
               blocks.waits, blocks.refused);
  if (io_.stopped()) {
    spdlog::info("nfsgw stopped: every call in flight finished or failed ({} handlers run after the stop)", ran);
  } else {
    spdlog::warn("nfsgw stopped with work still pending after 5 s ({} handlers run after the stop)", ran);
    io_.stop();
  }
}

void GatewayApp::stop() {
  asio::post(io_, [this] {
    // No reload may start stacks from now on: the admin command and the SIGHUP
    // reload in progress finish first.
    parts_->admin->stop();
    parts_->reloader->stop();
    std::lock_guard lock(parts_->stacks_mu);
    parts_->running = false;
    for (auto& t : parts_->retiring) t->cancel();
    parts_->server->stop();
    if (parts_->flusher) parts_->flusher->stop();
    if (parts_->locks) parts_->locks->stop();
    for (auto& f : parts_->forwarders) f->stop();
    io_.stop();
  });
}

}  // namespace nfsgw
