#include "tests/support/nfsgw_process.h"

#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "tests/support/temp_dir.h"
#include "tests/support/waiting.h"

namespace integ {

std::optional<std::string> nfsgw_binary() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NFSGW_BIN"); env && *env) candidates.push_back(env);
#ifdef NFSGW_BIN_PATH
  candidates.push_back(NFSGW_BIN_PATH);
#endif
  candidates.push_back(std::string(NFSGW_BUILD_DIR) + "/nfsgw");
  candidates.push_back(std::string(NFSGW_BUILD_DIR) + "/gateway/nfsgw");
  for (const auto& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(c)) return c;
  }
  return std::nullopt;
}

bool nfsgw_sanitized() {
#ifdef NFSGW_SANITIZED_NFSGW
  return true;
#else
  const char* v = std::getenv("NFSGW_BIN_SANITIZED");
  return v && std::string(v) == "1";
#endif
}

std::optional<std::string> wan_emu_binary() {
  std::vector<std::string> candidates;
#ifdef WAN_EMU_BIN_PATH
  candidates.push_back(WAN_EMU_BIN_PATH);
#endif
  if (const char* env = std::getenv("WAN_EMU_BIN"); env && *env) candidates.push_back(env);
  candidates.push_back(std::string(NFSGW_BUILD_DIR) + "/tools/wan-emu/wan-emu");
  for (const auto& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(c)) return c;
  }
  return std::nullopt;
}

bool selftest_mode() {
  const char* v = std::getenv("NFSGW_INTEG_SELFTEST");
  return v && std::string(v) == "1";
}

namespace {
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
}  // namespace

namespace {

void append_export(std::string& t, const ExportSettings& e, const std::string& origin_url) {
  t += "[[export]]\n";
  t += "path = " + quoted(e.export_path) + "\n";
  t += "origin = " + quoted(origin_url) + "\n";
  t += "access = " + quoted(e.access) + "\n";
  t += "squash = " + quoted(e.squash) + "\n";
  t += "anon_uid = " + std::to_string(e.anon_uid) + "\n";
  t += "anon_gid = " + std::to_string(e.anon_gid) + "\n";
  t += "clients = [";
  for (size_t i = 0; i < e.clients.size(); ++i) t += (i ? ", " : "") + quoted(e.clients[i]);
  t += "]\n";
  t += "upstream_connections = " + std::to_string(e.upstream_connections) + "\n";
  const auto& m = e.metadata;
  if (m.enabled) t += std::string("metadata_cache = ") + (*m.enabled ? "true" : "false") + "\n";
  if (m.consistency) t += "consistency = " + quoted(*m.consistency) + "\n";
  if (m.access_check) t += "access_check = " + quoted(*m.access_check) + "\n";
  for (const auto& [key, value] : m.durations) t += key + " = " + quoted(value) + "\n";
  if (e.data_cache) t += std::string("data_cache = ") + (*e.data_cache ? "true" : "false") + "\n";
  if (e.readahead_kb) t += "readahead_kb = " + std::to_string(*e.readahead_kb) + "\n";
  if (e.origin_timeout) t += "origin_timeout = " + quoted(*e.origin_timeout) + "\n";
  if (e.writes) t += "writes = " + quoted(*e.writes) + "\n";
  if (e.write_back_delay) t += "write_back_delay = " + quoted(*e.write_back_delay) + "\n";
  for (const auto& [key, value] : e.export_extra) t += key + " = " + value + "\n";
}

}  // namespace

std::string gateway_toml(const GatewayConfig& cfg, const std::string& cache_dir) {
  std::string t;
  t += "[server]\n";
  t += "listen = \"127.0.0.1\"\n";
  t += "nfs_port = " + std::to_string(cfg.port) + "\n";
  t += "mount_port = 0\n";
  t += "register_rpcbind = false\n";
  t += "threads = " + std::to_string(cfg.threads) + "\n";
  t += "max_record_bytes = " + std::to_string(cfg.max_record_bytes) + "\n";
  for (const auto& [key, value] : cfg.server_extra) t += key + " = " + value + "\n";
  t += "\n";
  t += "[cache]\n";
  t += "dir = " + quoted(cache_dir) + "\n";
  if (cfg.memory_mb) t += "memory_mb = " + std::to_string(*cfg.memory_mb) + "\n";
  if (cfg.metadata_max_gb) t += "metadata_max_gb = " + std::to_string(*cfg.metadata_max_gb) + "\n";
  if (cfg.secret_file) t += "secret_file = " + quoted(*cfg.secret_file) + "\n";
  if (cfg.block_kb) t += "block_kb = " + std::to_string(*cfg.block_kb) + "\n";
  if (cfg.data_max_gb) t += "data_max_gb = " + std::to_string(*cfg.data_max_gb) + "\n";
  if (cfg.dirty_max_gb) t += "dirty_max_gb = " + std::to_string(*cfg.dirty_max_gb) + "\n";
  t += "\n";
  append_export(t, cfg, cfg.origin_url);
  for (const auto& e : cfg.extra_exports) {
    t += "\n";
    append_export(t, e, e.origin_url.empty() ? cfg.origin_url : e.origin_url);
  }
  return t;
}

Gateway::Gateway(GatewayConfig cfg, std::string work_dir) : cfg_(std::move(cfg)), work_dir_(std::move(work_dir)) {
  make_dirs(work_dir_);
  make_dirs(work_dir_ + "/cache");
  config_path_ = work_dir_ + "/nfsgw.toml";
  log_path_ = work_dir_ + "/nfsgw.log";
  write_text_file(config_path_, gateway_toml(cfg_, work_dir_ + "/cache"));
}

Gateway::~Gateway() {
  if (running()) stop();
}

void Gateway::start() {
  auto bin = nfsgw_binary();
  if (!bin) throw std::runtime_error("nfsgw binary not found");
  proc_ = std::make_unique<Process>(std::vector<std::string>{*bin, "--config", config_path_}, log_path_);
  if (!wait_for_port(cfg_.port, 30000, proc_.get())) {
    std::string why = proc_->running() ? "does not listen on port " + std::to_string(cfg_.port)
                                       : "exited early";
    proc_->stop(std::chrono::seconds(5));
    throw std::runtime_error("nfsgw " + why + "; log:\n" + log());
  }
}

int Gateway::stop() {
  if (!proc_) return -1;
  int code = proc_->stop();
  proc_.reset();
  return code;
}

int Gateway::kill9() {
  if (!proc_) return -1;
  proc_->signal(SIGKILL);
  int code = proc_->wait(std::chrono::seconds(30)).value_or(-1);
  proc_.reset();
  return code;
}

RunResult Gateway::cli(const std::string& command, const std::vector<std::string>& args,
                       std::chrono::milliseconds timeout) const {
  auto bin = nfsgw_binary();
  if (!bin) return RunResult{-1, "nfsgw binary not found"};
  std::vector<std::string> argv = {*bin, command, "--config", config_path_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, timeout);
}

bool Gateway::running() const { return proc_ && proc_->running(); }

pid_t Gateway::pid() const { return proc_ ? proc_->pid() : -1; }

std::string Gateway::url() const {
  return "nfs://127.0.0.1" + cfg_.export_path + "?nfsport=" + std::to_string(cfg_.port) +
         "&mountport=" + std::to_string(cfg_.port);
}

std::string Gateway::url(const std::string& file) const {
  return "nfs://127.0.0.1" + cfg_.export_path + "/" + file + "?nfsport=" + std::to_string(cfg_.port) +
         "&mountport=" + std::to_string(cfg_.port);
}

std::string Gateway::log() const { return read_file(log_path_); }

bool wait_for_port(std::uint16_t port, int timeout_ms, Process* must_stay_alive) {
  bool died = false;
  const auto accepts = [&] {
    if (must_stay_alive && !must_stay_alive->running()) return died = true;
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::close(fd);
    return rc == 0;
  };
  return nfsgw::test::wait_until(accepts, std::chrono::milliseconds(timeout_ms), "the port") && !died;
}

}  // namespace integ
