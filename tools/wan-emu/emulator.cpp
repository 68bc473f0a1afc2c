#include "tools/wan-emu/emulator.h"

#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "tools/wan-emu/relay_session.h"

namespace nfsgw::wanemu {

Emulator::Emulator(boost::asio::io_context& io, const Options& opts)
    : io_(io), link_(std::make_shared<LinkState>()), stats_file_(opts.stats_file) {
  link_->delay[static_cast<int>(Direction::Up)] = std::chrono::milliseconds(opts.delay_up_ms);
  link_->delay[static_cast<int>(Direction::Down)] = std::chrono::milliseconds(opts.delay_down_ms);
  link_->max_queued_bytes = static_cast<std::size_t>(opts.max_queue_kb) * 1024;
  set_bandwidth(opts.bandwidth_kbps);
  for (const PairSpec& p : opts.pairs)
    listeners_.push_back(std::make_unique<PairListener>(io.get_executor(), p.listen, p.target, link_));
  if (opts.control) {
    control_ = std::make_unique<ControlServer>(
        io.get_executor(), *opts.control, [this](const std::string& l) { return execute(l); },
        [this] { stop(); });
  }
}

void Emulator::start() {
  for (auto& l : listeners_) l->start();
  if (control_) control_->start();
}

void Emulator::stop() {
  for (auto& l : listeners_) l->stop();
  if (control_) control_->stop();
  cut_all();
  io_.stop();
}

void Emulator::set_bandwidth(std::uint64_t kbps) {
  bandwidth_kbps_ = kbps;
  for (auto& s : link_->shaper) s.set_rate(kbps * 1000 / 8);
}

void Emulator::cut_all() {
  // close() never destroys a session synchronously (its handlers hold it), but copy
  // the set anyway so the iteration does not depend on that.
  std::vector<RelaySession*> live(link_->sessions.begin(), link_->sessions.end());
  for (RelaySession* s : live) s->close();
}

std::string Emulator::stats_json() const {
  std::string extra = fmt::format(
      R"("delay_ms":{{"up":{},"down":{}}},"bandwidth_kbps":{},"cut":{},"sessions":{})",
      link_->delay_of(Direction::Up).count(), link_->delay_of(Direction::Down).count(), bandwidth_kbps_,
      link_->cut ? "true" : "false", link_->sessions.size());
  return link_->counters.to_json(extra);
}

void Emulator::write_stats_file(const std::string& json) const {
  if (stats_file_.empty()) return;
  // Write aside and rename, so a reader never sees half a file.
  std::string tmp = stats_file_ + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << json << '\n';
    if (!f) return;
  }
  std::rename(tmp.c_str(), stats_file_.c_str());
}

ControlReply Emulator::execute(const std::string& line) {
  std::istringstream in(line);
  std::string cmd;
  in >> cmd;
  std::vector<std::string> args;
  for (std::string a; in >> a;) args.push_back(a);
  try {
    if (cmd == "stats" && args.empty()) {
      std::string json = stats_json();
      write_stats_file(json);
      return {json};
    }
    if (cmd == "reset" && args.empty()) {
      link_->counters.reset();
      return {"ok"};
    }
    if (cmd == "cut" && args.empty()) {
      link_->cut = true;
      cut_all();
      return {"ok"};
    }
    if (cmd == "restore" && args.empty()) {
      link_->cut = false;
      return {"ok"};
    }
    if (cmd == "delay" && (args.size() == 1 || args.size() == 2)) {
      auto up = parse_number(args[0], kMaxDelayMs);
      auto down = args.size() == 2 ? parse_number(args[1], kMaxDelayMs) : up;
      link_->delay[static_cast<int>(Direction::Up)] = std::chrono::milliseconds(up);
      link_->delay[static_cast<int>(Direction::Down)] = std::chrono::milliseconds(down);
      return {"ok"};
    }
    if (cmd == "bandwidth" && args.size() == 1) {
      set_bandwidth(parse_number(args[0], 100'000'000));
      return {"ok"};
    }
    if (cmd == "quit" && args.empty()) return {"ok", true};
  } catch (const UsageError& e) {
    return {std::string("error ") + e.what()};
  }
  return {"error unknown command (stats|reset|cut|restore|delay MS [DOWN_MS]|bandwidth KBPS|quit)"};
}

}  // namespace nfsgw::wanemu
