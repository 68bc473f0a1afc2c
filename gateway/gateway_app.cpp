#include "gateway/gateway_app.h"

#include <filesystem>
#include <optional>

#include <spdlog/spdlog.h>

#include "cache/handle_codec.h"
#include "cache/kv_store.h"
#include "gateway/handle_translator.h"
#include "gateway/mount_program.h"
#include "gateway/rpc/dispatcher.h"
#include "gateway/rpc/mount_procedures.h"
#include "gateway/rpc/nfs3_procedures.h"
#include "gateway/rpcbind_registration.h"
#include "gateway/server/rpc_server.h"
#include "gateway/upstream/forwarder.h"

namespace nfsgw {

namespace asio = boost::asio;

struct GatewayApp::Parts {
  std::unique_ptr<cache::KvStore> handle_store;
  std::optional<cache::HandleCodec> codec;
  std::vector<std::unique_ptr<upstream::Forwarder>> forwarders;
  std::optional<HandleTranslator> translator;
  std::optional<MountProgram> mount;
  rpc::Dispatcher dispatcher;
  std::optional<server::RpcServer> server;
  std::optional<RpcbindRegistration> rpcbind;
};

GatewayApp::GatewayApp(config::Config cfg)
    : cfg_(std::move(cfg)), parts_(std::make_unique<Parts>()) {
  Parts& p = *parts_;
  std::filesystem::create_directories(cfg_.cache.dir);
  p.handle_store = cache::open_rocksdb_store(cfg_.cache.dir + "/handles", cfg_.cache.memory_mb);
  p.codec.emplace(cache::load_or_create_secret(cfg_.cache.secret_file), *p.handle_store);

  // One layer stack per export; today: translator -> forwarder. The caching layers
  // will slot in between, each switchable by configuration.
  std::vector<ExportRoute> routes;
  for (const auto& e : cfg_.exports) {
    auto& fwd = p.forwarders.emplace_back(std::make_unique<upstream::Forwarder>(io_, e));
    upstream::Forwarder* f = fwd.get();
    routes.push_back(ExportRoute{&e, f, [f] { return f->root_handle(); }});
    spdlog::info("export {} -> {} ({}, squash {}, {} upstream connections)", e.path,
                 e.origin.text, e.access == config::Access::ReadOnly ? "ro" : "rw",
                 e.squash == config::Squash::None   ? "none"
                 : e.squash == config::Squash::Root ? "root"
                                                    : "all",
                 e.upstream_connections);
  }
  p.translator.emplace(*p.codec, routes);
  p.mount.emplace(cfg_.exports, *p.codec, *p.translator);
  p.dispatcher.add(rpc::make_nfs3_table(*p.translator));
  p.dispatcher.add(rpc::make_mount3_table(*p.mount));
  p.dispatcher.add(rpc::make_mount1_table(*p.mount));

  server::ConnectionLimits limits;
  limits.max_record_bytes = cfg_.server.max_record_bytes;
  p.server.emplace(io_, p.dispatcher, limits);
  nfs_port_ = p.server->listen(cfg_.server.listen, cfg_.server.nfs_port);
  std::uint16_t mount_port = nfs_port_;
  if (cfg_.server.mount_port != 0 && cfg_.server.mount_port != nfs_port_)
    mount_port = p.server->listen(cfg_.server.listen, cfg_.server.mount_port);
  if (cfg_.server.register_rpcbind) p.rpcbind.emplace(nfs_port_, mount_port);
}

GatewayApp::~GatewayApp() {
  // Unregister first, so clients stop finding a gateway that is going away.
  parts_->rpcbind.reset();
}

void GatewayApp::run(bool handle_signals) {
  for (auto& f : parts_->forwarders) f->start();
  std::optional<asio::signal_set> signals;
  if (handle_signals) {
    signals.emplace(io_, SIGINT, SIGTERM);
    signals->async_wait([this](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      spdlog::info("signal {}: stopping", sig);
      stop();
    });
  }
  unsigned threads = cfg_.server.threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  spdlog::info("nfsgw serving with {} threads", threads);
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back([this] { io_.run(); });
  io_.run();
  for (auto& t : pool) t.join();
  spdlog::info("nfsgw stopped");
}

void GatewayApp::stop() {
  asio::post(io_, [this] {
    parts_->server->stop();
    for (auto& f : parts_->forwarders) f->stop();
    io_.stop();
  });
}

}  // namespace nfsgw
