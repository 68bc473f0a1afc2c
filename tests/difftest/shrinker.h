// Finds a short sequence that still fails: replays candidate subsequences of a
// failing run, each from a fresh state (a new tree at the origin and a new nfsgw
// cache), and keeps any that fails with a violation of the same kind, removing
// steps by delta debugging (ddmin: chunks of halving size, then single steps)
// until no step can go or the time bound is reached. Steps whose objects or
// handles a shorter sequence does not make are skipped by the runner, so a
// removed step takes what depended on it along; a failing replay drops the steps
// it skipped.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/difftest/runner.h"
#include "tests/difftest/step.h"

namespace difftest {

struct ShrinkResult {
  std::vector<Step> steps;  // the shortest failing sequence found (setup not included)
  bool reproduced = false;  // whether a replay failed at all
  Violation violation;      // as the last failing replay saw it
  int replays = 0;
  double seconds = 0;
};

class Shrinker {
 public:
  /// `attempts`: replays per candidate (faults that depend on timing, such as a
  /// kill -9 racing a write, may need more than one).
  Shrinker(Runner& runner, std::vector<Step> setup, std::chrono::seconds budget, int attempts = 2)
      : runner_(runner), setup_(std::move(setup)), budget_(budget), attempts_(attempts) {}

  ShrinkResult shrink(std::vector<Step> steps, const Violation& target);

  /// Runs `steps` once from a fresh state, describing each step as it runs
  /// (object paths as they are then) and the violation it ends with, if any.
  std::string show(const std::vector<Step>& steps, const std::string& kind, Violation* seen);

  /// Replays `steps` once from a fresh state; the first violation, if any. Used
  /// to see whether a shrunk sequence's kill -9 steps are needed for its failure.
  std::optional<Violation> first_violation(const std::vector<Step>& steps);

 private:
  /// Whether `steps` fails with `kind_`; if so, `steps` becomes the steps that ran
  /// up to the failing one.
  bool fails(std::vector<Step>& steps);
  bool replay_once(std::vector<Step>& steps);
  bool out_of_time() const;

  Runner& runner_;
  std::vector<Step> setup_;
  std::chrono::seconds budget_;
  int attempts_;
  std::string kind_;
  Violation last_;
  int replays_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace difftest
