#include "tests/difftest/shrinker.h"

#include <algorithm>

#include "tests/difftest/interrupt.h"

namespace difftest {

bool Shrinker::out_of_time() const {
  return interrupted() || std::chrono::steady_clock::now() - start_ > budget_;
}

bool Shrinker::replay_once(std::vector<Step>& steps) {
  ++replays_;
  runner_.begin();
  std::vector<Violation> found;
  for (const Step& s : setup_) runner_.run(s, found);
  found.clear();
  // A step the runner skipped changed nothing in this replay: a failing replay
  // stays one without it (nor is what came after the failure needed).
  std::vector<Step> ran;
  for (const Step& s : steps) {
    if (runner_.run(s, found)) ran.push_back(s);
    for (const Violation& v : found) {
      if (v.kind != kind_) continue;
      last_ = v;
      steps = std::move(ran);
      return true;
    }
    found.clear();
  }
  return false;
}

bool Shrinker::fails(std::vector<Step>& steps) {
  const bool timing = std::any_of(steps.begin(), steps.end(), [](const Step& s) {
    return s.op == Op::Kill || s.op == Op::Reload;
  });
  for (int attempt = 0; attempt < (timing ? attempts_ : 1); ++attempt) {
    if (replay_once(steps)) return true;
    if (out_of_time()) return false;
  }
  return false;
}

ShrinkResult Shrinker::shrink(std::vector<Step> steps, const Violation& target) {
  start_ = std::chrono::steady_clock::now();
  kind_ = target.kind;
  last_ = target;
  replays_ = 0;
  ShrinkResult result;
  result.reproduced = fails(steps);
  if (result.reproduced) {
    // ddmin: try dropping each of n chunks; on success keep the rest (and fewer
    // chunks), else split finer, down to single steps.
    std::size_t n = 2;
    while (steps.size() >= 2 && !out_of_time()) {
      const std::size_t chunk = (steps.size() + n - 1) / n;
      bool dropped = false;
      for (std::size_t start = 0; start < steps.size() && !out_of_time(); start += chunk) {
        std::vector<Step> rest(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(start));
        if (start + chunk < steps.size())
          rest.insert(rest.end(), steps.begin() + static_cast<std::ptrdiff_t>(start + chunk), steps.end());
        if (fails(rest)) {
          steps = std::move(rest);
          n = std::max<std::size_t>(n - 1, 2);
          dropped = true;
          break;
        }
      }
      if (dropped) continue;
      if (n >= steps.size()) break;
      n = std::min(steps.size(), n * 2);
    }
  }
  result.steps = std::move(steps);
  result.violation = last_;
  result.replays = replays_;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return result;
}

std::string Shrinker::show(const std::vector<Step>& steps, const std::string& kind, Violation* seen) {
  runner_.begin();
  std::vector<Violation> found;
  for (const Step& s : setup_) runner_.run(s, found);
  found.clear();
  std::string out;
  auto name = [&](std::uint32_t label) { return runner_.object_name(label); };
  for (const Step& s : steps) {
    const std::string line = describe(s, name);
    const bool ran = runner_.run(s, found);
    out += "  " + line + (ran ? "" : "   (skipped)") + "\n";
    for (const Violation& v : found) {
      if (v.kind != kind) continue;
      if (seen) *seen = v;
      return out;
    }
    found.clear();
  }
  return out;
}

}  // namespace difftest

namespace difftest {

std::optional<Violation> Shrinker::first_violation(const std::vector<Step>& steps) {
  runner_.begin();
  std::vector<Violation> found;
  for (const Step& s : setup_) runner_.run(s, found);
  found.clear();
  for (const Step& s : steps) {
    runner_.run(s, found);
    if (!found.empty()) return found.front();
  }
  return std::nullopt;
}

}  // namespace difftest
