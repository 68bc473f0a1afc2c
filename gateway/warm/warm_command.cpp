#include "gateway/warm/warm_command.h"

#include <stdexcept>

#include "gateway/warm/tree_walker.h"

namespace nfsgw::warm {

Credentials warm_credentials(const config::ExportConfig& e) {
  Credentials c;
  c.uid = e.warm_uid.value_or(e.anon_uid);
  c.gid = e.warm_gid.value_or(e.anon_gid);
  c.machine_name = "nfsgw-warm";
  return c;
}

void start_warm(const WarmEnvironment& env, const WarmExport& e, const admin::WarmRequest& request,
                std::shared_ptr<WarmProgress> progress, std::function<void(WarmOutcome)> done) {
  const config::ExportConfig& cfg = *e.config;
  if (!e.metadata_cache)
    throw std::invalid_argument("export " + cfg.path +
                                " has metadata_cache = false: a warm would keep nothing (nfsgw exports shows it)");
  if (request.data && !e.data_cache)
    throw std::invalid_argument("export " + cfg.path +
                                " keeps no file data (data_cache off, or no data store): warm it without --data");
  if (!cfg.allows(kWarmAddress))
    throw std::invalid_argument("export " + cfg.path + " does not admit " + kWarmAddress +
                                ", the address a warm walks from: add \"" + kWarmAddress +
                                "/32\" to its clients to warm it");
  if (!env.nfs || !env.root_handle) throw std::invalid_argument("warm is not available in this gateway");

  WalkSettings s;
  s.depth = request.depth;
  s.data = request.data;
  s.parallel = request.parallel;
  s.read_bytes = env.read_bytes;
  s.ctx.cred = warm_credentials(cfg);
  s.ctx.client_address = kWarmAddress;
  std::vector<std::string> paths = request.manifest;
  if (paths.empty()) paths.push_back(request.subpath);

  const OriginTraffic before = e.traffic ? e.traffic() : OriginTraffic{};
  const auto started = env.now();
  auto walker = TreeWalker::create(env.executor, *env.nfs, env.root_handle(cfg.id), cfg.path, std::move(s), progress);
  walker->start(std::move(paths), [progress, before, started, traffic = e.traffic, now = env.now,
                                   done = std::move(done)] {
    WarmOutcome o;
    o.figures = progress->figures();
    const OriginTraffic after = traffic ? traffic() : OriginTraffic{};
    o.origin_calls = after.calls - before.calls;
    o.blocks_fetched = after.blocks - before.blocks;
    o.bytes_fetched = after.bytes - before.bytes;
    o.ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now() - started).count());
    o.cancelled = progress->cancelled();
    done(o);
  });
}

}  // namespace nfsgw::warm
