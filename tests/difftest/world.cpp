#include "tests/difftest/world.h"

#include <signal.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/nfsgw_process.h"
#include "tests/support/origin.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace difftest {

using namespace std::chrono_literals;

const std::array<ExportDef, kExports>& exports() {
  using K = Promise::Kind;
  static const std::array<ExportDef, kExports> defs = {{
      {"/rw", {K::Ttl, 1h}, false, false},
      {"/ro", {K::Ttl, 1h}, true, false},
      {"/strict", {K::Strict, {}}, false, false},
      {"/sub", {K::Ttl, 1h}, false, true},
      {"/imm", {K::Immutable, {}}, false, false},
      {"/short", {K::Ttl, 2s}, false, false},
      {"/back", {K::Ttl, 1h}, false, false, true},
  }};
  return defs;
}

const std::array<User, kUsers>& users() {
  // u2 is also in u1's group, so group bits grant it what they grant u1's group.
  static const std::array<User, kUsers> all = {{
      {1001, 1001, {1001}, "u1"},
      {1002, 1002, {1002, 1001}, "u2"},
      {1003, 1003, {1003}, "u3"},
  }};
  return all;
}

namespace {

/// The origin's ports and nfsgw's (World's constructor says which).
struct Ports {
  std::uint16_t origin_nfs, origin_mount, gateway;
};

std::string origin_url(const std::string& path, const Ports& ports) {
  return "nfs://127.0.0.1" + path + "?nfsport=" + std::to_string(ports.origin_nfs) +
         "&mountport=" + std::to_string(ports.origin_mount);
}

/// Export `i` of configuration `variant` (the variants differ in /short's windows
/// and in an extra export nobody uses, so a reload has something to apply).
integ::ExportSettings export_settings(int i, int variant, const std::string& tree, const Ports& ports) {
  const ExportDef& d = exports()[static_cast<std::size_t>(i)];
  integ::ExportSettings e;
  e.export_path = d.path;
  e.origin_url = origin_url(d.subtree ? tree + "/sub" : tree, ports);
  e.access = d.read_only ? "ro" : "rw";
  e.squash = "none";
  e.upstream_connections = 2;
  if (d.write_back) {
    e.writes = "back";
    // Long enough that nothing is flushed but by the tester's own steps.
    e.write_back_delay = variant == 0 ? "1h" : "50m";
  }
  switch (d.promise.kind) {
    case Promise::Kind::Strict: e.metadata.consistency = "strict"; break;
    case Promise::Kind::Immutable: e.metadata.consistency = "immutable"; break;
    case Promise::Kind::Ttl: {
      e.metadata.consistency = "ttl";
      const std::string w = d.promise.window >= 1h ? "1h" : (variant == 0 ? "2s" : "1s");
      for (const char* key : {"attr_ttl", "dir_ttl", "negative_ttl", "access_ttl"}) e.metadata.durations[key] = w;
      break;
    }
  }
  return e;
}

integ::GatewayConfig gateway_config(int variant, const std::string& tree, const Ports& ports) {
  integ::GatewayConfig cfg;
  static_cast<integ::ExportSettings&>(cfg) = export_settings(0, variant, tree, ports);
  cfg.port = ports.gateway;
  for (int i = 1; i < kExports; ++i) cfg.extra_exports.push_back(export_settings(i, variant, tree, ports));
  if (variant == 1) {
    integ::ExportSettings spare = export_settings(0, variant, tree, ports);
    spare.export_path = "/spare";
    cfg.extra_exports.push_back(spare);
  }
  return cfg;
}

void must_connect(Nfs3Client& c, std::uint16_t port, const User& u) {
  c.set_credentials(u.uid, u.gid, u.groups);
  if (nfsgw::test::wait_until([&] { return c.connect(port); }, 5s, "a connection")) return;
  throw std::runtime_error("cannot connect to port " + std::to_string(port) + ": " + c.error());
}

}  // namespace

World::World(std::string work_dir, std::uint16_t port_base)
    : work_dir_(std::move(work_dir)),
      origin_nfs_port_(port_base),
      origin_mount_port_(static_cast<std::uint16_t>(port_base + 1)),
      gateway_port_(static_cast<std::uint16_t>(port_base + 2)) {
  integ::make_dirs(work_dir_);
  for (auto& c : gw_) {
    c = std::make_unique<Nfs3Client>();
    // Longer than nfsgw's own origin_timeout (60 s): an origin that is slow to
    // answer is not taken for an nfsgw that does not answer.
    c->timeout_ms = 120000;
  }
  for (auto& c : origin_) c = std::make_unique<Nfs3Client>();
  truth_ = std::make_unique<Nfs3Client>();
}

World::~World() {
  gateway_.reset();
  origin_server_.reset();
  integ::remove_tree(work_dir_);
}

void World::start_origin() {
  origin_server_ = std::make_unique<integ::GaneshaOrigin>(origin_nfs_port_, origin_mount_port_);
  origin_server_->start();
  reconnect_origin();
}

void World::reconnect_origin() {
  const User root{0, 0, {}, "root"};
  must_connect(*truth_, origin_nfs_port_, root);
  for (int u = 0; u < kUsers; ++u) must_connect(origin(u), origin_nfs_port_, users()[static_cast<std::size_t>(u)]);
}

void World::fresh(int round) {
  finish_run();
  const std::string name = "w" + std::to_string(round);
  tree_ = origin_server_->export_dir() + "/" + name;
  std::string error;
  const Handle top = mount(origin_mount_port_, origin_server_->export_dir(), &error);
  if (top.empty()) throw std::runtime_error("origin MNT: " + error);
  Reply t = truth_->mkdir(top, name, 0777);
  Reply s = t.status == kOk ? truth_->mkdir(t.handle, "sub", 0777) : t;
  if (!t.transport_ok || t.status != kOk || !s.transport_ok || s.status != kOk)
    throw std::runtime_error("cannot make the tree " + tree_ + ": " + t.error + s.error);
  origin_tree_ = t.handle;
  origin_sub_ = s.handle;
  // MKDIR's mode is filtered by ganesha's umask: say it again.
  truth_->setattr(origin_tree_, SetAttrs{0777, std::nullopt});
  truth_->setattr(origin_sub_, SetAttrs{0777, std::nullopt});

  run_dir_ = work_dir_ + "/" + name;
  const Ports ports{origin_nfs_port_, origin_mount_port_, gateway_port_};
  gateway_ = std::make_unique<integ::Gateway>(gateway_config(0, tree_, ports), run_dir_);
  gateway_->start();
  connect_all();
  for (int i = 0; i < kExports; ++i) {
    gw_roots_[static_cast<std::size_t>(i)] = mount(gateway_port_, exports()[static_cast<std::size_t>(i)].path, &error);
    if (gw_roots_[static_cast<std::size_t>(i)].empty())
      throw std::runtime_error(std::string("nfsgw MNT ") + exports()[static_cast<std::size_t>(i)].path + ": " + error);
  }
}

void World::connect_all() {
  for (int u = 0; u < kUsers; ++u) must_connect(gateway(u), gateway_port_, users()[static_cast<std::size_t>(u)]);
}

void World::kill_restart() {
  gateway_->kill9();
  gateway_->start();
  connect_all();
}

void World::reload(int variant, bool sighup) {
  const Ports ports{origin_nfs_port_, origin_mount_port_, gateway_port_};
  std::ofstream(gateway_->config_path(), std::ios::trunc)
      << integ::gateway_toml(gateway_config(variant, tree_, ports), gateway_->cache_dir());
  if (sighup) {
    ::kill(gateway_->pid(), SIGHUP);
    return;
  }
  const integ::RunResult r = gateway_->cli("reload");
  if (r.exit_code != 0) throw std::runtime_error("nfsgw reload failed: " + r.output);
}

bool World::flush(std::string& output) {
  const integ::RunResult r = gateway_->cli("flush", {}, std::chrono::seconds(60));
  output = r.output;
  return r.exit_code == 0;
}

void World::finish_run() {
  if (gateway_) {
    gateway_->stop();
    gateway_.reset();
  }
  if (!run_dir_.empty()) integ::remove_tree(run_dir_);
  // Old trees stay until the origin stops (its directory goes then): removed
  // behind ganesha's back, one once left ganesha silent for 20 s.
}

bool World::gateway_running() const { return gateway_ && gateway_->running(); }

std::string World::gateway_log_tail(std::size_t bytes) const {
  if (!gateway_) return "";
  const std::string log = gateway_->log();
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

std::string World::origin_log_tail(std::size_t bytes) const {
  // GaneshaOrigin's fixed layout: /tmp/integ-origin-<nfs port>/state.
  const std::string log = integ::read_file("/tmp/integ-origin-" + std::to_string(origin_nfs_port_) + "/state/ganesha.log");
  return log.size() > bytes ? log.substr(log.size() - bytes) : log;
}

}  // namespace difftest
