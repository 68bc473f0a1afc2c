#include "tests/support/gateway_env.h"

#include <memory>

#include "tests/support/ports.h"
#include "tests/support/temp_dir.h"

namespace integ {
namespace {
struct State {
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<Gateway> gateway;
};
State& state() {
  static State s;
  return s;
}
}  // namespace

Gateway* shared_gateway() { return state().gateway.get(); }

std::string gateway_url() {
  if (auto* g = shared_gateway()) return g->url();
  return shared_origin().url();
}

std::string gateway_url(const std::string& file) {
  if (auto* g = shared_gateway()) return g->url(file);
  auto& o = shared_origin();
  return "nfs://127.0.0.1" + o.export_dir() + "/" + file + "?nfsport=" + std::to_string(o.nfs_port()) +
         "&mountport=" + std::to_string(o.mount_port());
}

std::string gateway_export_path() { return shared_gateway() ? "/export" : shared_origin().export_dir(); }

std::uint16_t gateway_port() { return shared_gateway() ? shared_gateway()->port() : kOriginNfsPort; }

std::uint16_t gateway_mount_port() { return shared_gateway() ? shared_gateway()->port() : kOriginMountPort; }

void OriginAndGatewayEnvironment::SetUp() {
  try {
    shared_origin().start();
    if (!nfsgw_binary()) return;  // tests skip through INTEG_REQUIRE_NFSGW()
    auto& s = state();
    s.dir = std::make_unique<TempDir>("gw");
    GatewayConfig cfg;
    cfg.port = kGatewayPort;
    cfg.origin_url = shared_origin().url();
    s.gateway = std::make_unique<Gateway>(cfg, s.dir->sub("gw"));
    s.gateway->start();
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
}

void OriginAndGatewayEnvironment::TearDown() {
  auto& s = state();
  if (s.gateway) {
    int code = s.gateway->stop();
    EXPECT_EQ(code, 0) << "nfsgw did not stop cleanly on SIGTERM; log:\n" << s.gateway->log();
  }
  s.gateway.reset();
  s.dir.reset();
  shared_origin().stop();
}

}  // namespace integ
