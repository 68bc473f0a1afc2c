#include "tests/support/wan_relay.h"

#include <chrono>
#include <regex>
#include <stdexcept>

#include "tests/support/nfsgw_process.h"

namespace integ {

std::string nfs3_key(unsigned proc) { return "100003:3:" + std::to_string(proc); }

long calls_of(const ProcCounts& procs, const std::string& key) {
  auto it = procs.find(key);
  return it == procs.end() ? 0 : it->second.calls;
}

long nfs3_calls(const ProcCounts& procs) {
  long n = 0;
  for (const auto& [key, count] : procs) {
    if (key.rfind("100003:3:", 0) == 0) n += count.calls;
  }
  return n;
}

std::string describe(const ProcCounts& procs) {
  std::string s;
  for (const auto& [k, v] : procs) {
    if (v.calls == 0 && v.replies == 0) continue;
    s += k + " calls " + std::to_string(v.calls) + " replies " + std::to_string(v.replies) + "; ";
  }
  return s.empty() ? "(no calls)" : s;
}

WanRelay::WanRelay(const std::vector<std::pair<std::uint16_t, std::uint16_t>>& pairs, std::uint16_t control_port,
                   const std::string& log_path) {
  auto bin = wan_emu_binary();
  if (!bin) throw std::runtime_error("wan-emu binary not found (build target wan-emu or set WAN_EMU_BIN)");
  bin_ = *bin;
  control_ = "127.0.0.1:" + std::to_string(control_port);
  std::vector<std::string> argv = {bin_};
  for (const auto& [listen, target] : pairs) {
    argv.push_back("--pair");
    argv.push_back("127.0.0.1:" + std::to_string(listen) + "=127.0.0.1:" + std::to_string(target));
  }
  argv.push_back("--control");
  argv.push_back(control_);
  proc_ = std::make_unique<Process>(argv, log_path);
  if (!wait_for_port(control_port, 10000, proc_.get())) {
    std::string log = proc_->log();
    proc_->stop(std::chrono::seconds(5));
    throw std::runtime_error("wan-emu did not come up:\n" + log);
  }
}

WanRelay::~WanRelay() {
  if (proc_) proc_->stop();
}

std::string WanRelay::ctl(const std::vector<std::string>& cmd, bool* ok) const {
  std::vector<std::string> argv = {bin_, "--ctl", control_};
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  auto r = run(argv, std::chrono::seconds(15));
  if (ok) *ok = r.exit_code == 0;
  return r.output;
}

bool WanRelay::reset() const {
  bool ok = false;
  std::string answer = ctl({"reset"}, &ok);
  return ok && answer.find("ok") != std::string::npos;
}

std::optional<ProcCounts> WanRelay::procs() const {
  bool ok = false;
  std::string json = ctl({"stats"}, &ok);
  if (!ok || json.find("\"procs\"") == std::string::npos) return std::nullopt;
  ProcCounts out;
  static const std::regex entry(R"re("(\d+:\d+:\d+)":\{"calls":(\d+),"replies":(\d+))re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), entry); it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = {std::stol((*it)[2]), std::stol((*it)[3])};
  }
  return out;
}

std::optional<std::uint64_t> WanRelay::down_bytes() const {
  bool ok = false;
  const std::string json = ctl({"stats"}, &ok);
  static const std::regex down(R"re("down":\{"bytes":(\d+))re");
  std::smatch m;
  if (!ok || !std::regex_search(json, m, down)) return std::nullopt;
  return std::stoull(m[1]);
}

std::string WanRelay::log() const { return proc_ ? proc_->log() : std::string(); }

bool WanRelay::running() const { return proc_ && proc_->running(); }

}  // namespace integ
