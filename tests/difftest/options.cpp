#include "tests/difftest/options.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace difftest {

const char* usage() {
  return "usage: nfsgw-difftest [--seed N | --seeds A,B,C | --seeds A-B] [--calls N] [--seconds S]\n"
         "                      [--kill-every P] [--reload-every P] [--scenarios P] [--scenario NAME]\n"
         "                      [--back-writes P] [--flush-every P]\n"
         "                      [--nfsgw BIN]\n"
         "                      [--keep-going | --stop-on TEXT] [--shrink on|off] [--shrink-seconds S]\n"
         "                      [--port-base N] [--verbose]\n"
         "Drives nfsgw with random NFSv3 calls against an nfs-ganesha origin and checks every\n"
         "answer against what each export promises (docs/difftest.md). --calls and --seconds\n"
         "bound each seed's run; P is a probability per step. --scenario mixes in only that\n"
         "scenario (strict-lookup, two-exports, hard-link, dotdot, kill-after, stale-read,\n"
         "same-file-rename, dirty-read). --back-writes P: WRITEs through the write-back\n"
         "export /back; --flush-every P: `nfsgw flush` steps. Exit 1 on a\n"
         "violation, 2 when the set-up fails. --stop-on stops (and shrinks) only at a violation\n"
         "whose kind contains TEXT; --keep-going never stops and shrinks the first of each kind.\n"
         "--port-base N: the origin listens on N and N+1, nfsgw on N+2 (default 30300).\n";
}

namespace {

double number(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || d < 0) throw std::invalid_argument(flag + ": not a number: " + v);
  return d;
}

std::uint64_t whole(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0') throw std::invalid_argument(flag + ": not a whole number: " + v);
  return n;
}

std::vector<std::uint64_t> seed_list(const std::string& v) {
  std::vector<std::uint64_t> out;
  if (const auto dash = v.find('-'); dash != std::string::npos) {
    const std::uint64_t from = whole("--seeds", v.substr(0, dash)), to = whole("--seeds", v.substr(dash + 1));
    if (to < from || to - from > 100000) throw std::invalid_argument("--seeds: bad range " + v);
    for (std::uint64_t s = from; s <= to; ++s) out.push_back(s);
    return out;
  }
  std::size_t at = 0;
  while (at <= v.size()) {
    const auto comma = v.find(',', at);
    out.push_back(whole("--seeds", v.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace

Options parse_options(int argc, char** argv, std::string& error) {
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
        return argv[++i];
      };
      if (flag == "--seed") {
        o.seeds = {whole(flag, value())};
      } else if (flag == "--seeds") {
        o.seeds = seed_list(value());
      } else if (flag == "--calls") {
        o.calls = whole(flag, value());
      } else if (flag == "--seconds") {
        o.seconds = number(flag, value());
      } else if (flag == "--kill-every") {
        o.generator.kill_every = number(flag, value());
      } else if (flag == "--reload-every") {
        o.generator.reload_every = number(flag, value());
      } else if (flag == "--back-writes") {
        o.generator.back_writes = number(flag, value());
      } else if (flag == "--flush-every") {
        o.generator.flush_every = number(flag, value());
      } else if (flag == "--scenarios") {
        o.generator.scenarios = number(flag, value());
      } else if (flag == "--scenario") {
        o.generator.only = value();
        const auto& names = scenario_names();
        if (std::find(names.begin(), names.end(), o.generator.only) == names.end())
          throw std::invalid_argument("--scenario: one of strict-lookup, two-exports, hard-link, dotdot, kill-after, stale-read, same-file-rename, dirty-read");
      } else if (flag == "--nfsgw") {
        o.nfsgw = value();
      } else if (flag == "--stop-on") {
        o.stop_on = value();
      } else if (flag == "--keep-going") {
        o.keep_going = true;
      } else if (flag == "--shrink") {
        const std::string v = value();
        if (v != "on" && v != "off") throw std::invalid_argument("--shrink: on or off, not " + v);
        o.shrink = v == "on";
      } else if (flag == "--shrink-seconds") {
        o.shrink_seconds = number(flag, value());
      } else if (flag == "--port-base") {
        const std::uint64_t n = whole(flag, value());
        if (n < 1 || n > 65533) throw std::invalid_argument("--port-base: 1 to 65533, not " + std::to_string(n));
        o.port_base = static_cast<std::uint16_t>(n);
      } else if (flag == "--verbose") {
        o.verbose = true;
      } else {
        throw std::invalid_argument("unknown flag " + flag);
      }
    }
  } catch (const std::invalid_argument& e) {
    error = e.what();
  }
  return o;
}

}  // namespace difftest
