// nfsgw-difftest: the differential tester of issue 18 (docs/difftest.md). For each
// seed: a fresh tree and nfsgw, the starting tree made at the origin, then random
// steps until --calls calls to nfsgw or --seconds; every violation is printed with
// its seed and step, and the first of each kind is shrunk to the shortest
// sequence that still shows it (replayed from a fresh state).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

#include "tests/difftest/generator.h"
#include "tests/difftest/interrupt.h"
#include "tests/difftest/options.h"
#include "tests/difftest/runner.h"
#include "tests/difftest/shrinker.h"
#include "tests/difftest/starting_tree.h"
#include "tests/support/nfsgw_process.h"

namespace difftest {
namespace {

std::string indented(const std::string& text) {
  std::string out = "    ";
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '\n' && i + 1 < text.size()) out += "    ";
  }
  return out;
}

void print_stats(const char* what, const Stats& s, double seconds) {
  std::printf(
      "difftest: %s: %llu calls to nfsgw, %llu checks, %llu violations, %llu kills, %llu reloads, "
      "%llu origin changes, %llu origin calls, %llu model gaps, %llu model errors, %llu steps skipped, "
      "%llu write-back WRITEs, %llu flushes, %llu dirty files flushed, %.1f s, %.0f calls/s\n",
      what, (unsigned long long)s.calls, (unsigned long long)s.checks, (unsigned long long)s.violations,
      (unsigned long long)s.kills, (unsigned long long)s.reloads, (unsigned long long)s.origin_changes,
      (unsigned long long)s.origin_calls, (unsigned long long)s.model_gaps, (unsigned long long)s.model_errors,
      (unsigned long long)s.skipped, (unsigned long long)s.absorbed, (unsigned long long)s.flushes,
      (unsigned long long)s.dirty_flushed, seconds, seconds > 0 ? static_cast<double>(s.calls) / seconds : 0.0);
  std::fflush(stdout);
}

/// One seed's run (its shrinking replays not counted); `stopped` when a violation
/// ended it.
Stats run_seed(std::uint64_t seed, const Options& o, Runner& runner, const std::vector<Step>& setup,
               bool& stopped) {
  const Stats before = runner.stats;
  runner.begin();
  std::vector<Violation> found;
  for (const Step& s : setup) runner.run(s, found);
  Generator gen(seed, runner, o.generator, setup.back().id + 1);
  std::vector<Step> ran;
  stopped = false;
  // The first violation of each kind, with how many steps led to it.
  std::map<std::string, std::pair<Violation, std::size_t>> first;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto name = [&](std::uint32_t label) { return runner.object_name(label); };
  while (runner.stats.calls - before.calls < o.calls && elapsed() < o.seconds && !interrupted()) {
    const Step s = gen.next();
    found.clear();
    const bool did = runner.run(s, found);
    if (o.verbose) std::printf("  %9.3f %s%s\n", elapsed(), describe(s, name).c_str(), did ? "" : "   (skipped)");
    if (!did) continue;
    ran.push_back(s);
    bool stop = false;
    for (const Violation& v : found) {
      const bool hunted = o.stop_on.empty() || v.kind.find(o.stop_on) != std::string::npos;
      stop |= hunted && !o.keep_going;
      std::printf("difftest: VIOLATION (seed %llu, step #%u): %s\n    step: %s\n%s", (unsigned long long)seed, v.step,
                  v.kind.c_str(), describe(s, name).c_str(), indented(v.detail).c_str());
      if (hunted) first.emplace(v.kind, std::make_pair(v, ran.size()));
    }
    std::fflush(stdout);
    if ((stopped = stop)) break;
  }
  const Stats done = runner.stats - before;
  print_stats(("seed " + std::to_string(seed)).c_str(), done, elapsed());
  if (!o.shrink || interrupted()) return done;
  for (const auto& [kind, at] : first) {
    std::printf("difftest: shrinking \"%s\" (seed %llu, %zu steps; at most %.0f s)...\n", kind.c_str(),
                (unsigned long long)seed, at.second, o.shrink_seconds);
    std::fflush(stdout);
    Shrinker shrinker(runner, setup, std::chrono::seconds(static_cast<long>(o.shrink_seconds)));
    const std::vector<Step> prefix(ran.begin(), ran.begin() + static_cast<std::ptrdiff_t>(at.second));
    const ShrinkResult r = shrinker.shrink(prefix, at.first);
    if (!r.reproduced) {
      std::printf("difftest: \"%s\" did not happen again in a replay from a fresh state (%d replays, %.0f s)\n",
                  kind.c_str(), r.replays, r.seconds);
      continue;
    }
    Violation seen;
    const std::string steps = shrinker.show(r.steps, kind, &seen);
    std::printf(
        "difftest: shortest sequence found for \"%s\" (seed %llu): %zu steps after the starting tree "
        "(tests/difftest/starting_tree.cpp), from %zu; %d replays, %.0f s:\n%s",
        kind.c_str(), (unsigned long long)seed, r.steps.size(), at.second, r.replays, r.seconds, steps.c_str());
    std::printf("  which fails with:\n%s", indented(seen.kind.empty() ? r.violation.detail : seen.detail).c_str());
    // A kill -9 in the sequence may only be there because the kind names it.
    std::vector<Step> no_kills = r.steps;
    std::erase_if(no_kills, [](const Step& s) { return s.op == Op::Kill; });
    bool kills = no_kills.size() < r.steps.size();
    for (Step& s : no_kills) kills |= std::exchange(s.kill_at_once, false);
    if (kills) {
      const auto without = shrinker.first_violation(no_kills);
      std::printf("difftest: without its kill -9 steps the sequence %s\n",
                  without ? ("fails with \"" + without->kind + "\"").c_str() : "passes: the kills are needed");
    }
    std::fflush(stdout);
  }
  return done;
}

}  // namespace
}  // namespace difftest

int main(int argc, char** argv) {
  using namespace difftest;
  std::string error;
  const Options o = parse_options(argc, argv, error);
  if (!error.empty()) {
    std::fprintf(stderr, "nfsgw-difftest: %s\n%s", error.c_str(), usage());
    return 2;
  }
  // A write to nfsgw's socket after its kill -9 must fail, not end the tester.
  ::signal(SIGPIPE, SIG_IGN);
  catch_interrupts();
  if (o.nfsgw) ::setenv("NFSGW_BIN", o.nfsgw->c_str(), 1);
  const auto bin = integ::nfsgw_binary();
  if (!bin) {
    std::fprintf(stderr, "nfsgw-difftest: no nfsgw binary (--nfsgw BIN, NFSGW_BIN, or build target nfsgw)\n");
    return 2;
  }
  std::printf("difftest: nfsgw %s; seeds %zu, at most %llu calls and %.0f s each; ports %u-%u\n", bin->c_str(),
              o.seeds.size(), (unsigned long long)o.calls, o.seconds, unsigned{o.port_base}, o.port_base + 2u);
  World world("/tmp/difftest-" + std::to_string(::getpid()), o.port_base);
  try {
    world.start_origin();
    Runner runner(world);
    runner.verbose = o.verbose;
    const std::vector<Step> setup = starting_tree();
    const auto start = std::chrono::steady_clock::now();
    Stats total;
    for (std::uint64_t seed : o.seeds) {
      bool stopped = false;
      total += run_seed(seed, o, runner, setup, stopped);
      if (stopped || interrupted()) break;
    }
    world.finish_run();
    print_stats("all seeds", total, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (interrupted()) std::printf("difftest: interrupted\n");
    return total.violations ? 1 : interrupted() ? 2 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nfsgw-difftest: %s\nthe end of ganesha's log:\n%s\nthe end of nfsgw's log:\n%s\n", e.what(),
                 world.origin_log_tail().c_str(), world.gateway_log_tail().c_str());
    return 2;
  }
}
