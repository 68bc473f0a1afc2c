#include "tests/difftest/runner.h"

#include <cstdio>
#include <stdexcept>

namespace difftest {

Stats& Stats::operator+=(const Stats& o) {
  skipped += o.skipped;
  calls += o.calls;
  checks += o.checks;
  violations += o.violations;
  kills += o.kills;
  reloads += o.reloads;
  origin_changes += o.origin_changes;
  origin_calls += o.origin_calls;
  model_gaps += o.model_gaps;
  model_errors += o.model_errors;
  absorbed += o.absorbed;
  flushes += o.flushes;
  dirty_flushed += o.dirty_flushed;
  return *this;
}

Stats Stats::operator-(const Stats& o) const {
  Stats d = *this;
  d.skipped -= o.skipped;
  d.calls -= o.calls;
  d.checks -= o.checks;
  d.violations -= o.violations;
  d.kills -= o.kills;
  d.reloads -= o.reloads;
  d.origin_changes -= o.origin_changes;
  d.origin_calls -= o.origin_calls;
  d.model_gaps -= o.model_gaps;
  d.model_errors -= o.model_errors;
  d.absorbed -= o.absorbed;
  d.flushes -= o.flushes;
  d.dirty_flushed -= o.dirty_flushed;
  return d;
}

Runner::Runner(World& world) : world_(world), judge_(model_) {}

void Runner::begin() {
  world_.fresh(round_++);
  model_ = Model();
  log_verf_.reset();
  recorder_.set_step(kTreeLabel);
  const int tree = model_.add(world_.origin_tree(), kTreeLabel, "");
  recorder_.attr(tree);
  recorder_.set_step(kSubLabel);
  const int sub = model_.add(world_.origin_sub(), kSubLabel, "sub");
  recorder_.attr(sub);
  recorder_.binding(tree, "sub");
  for (int e = 0; e < kExports; ++e)
    views_[static_cast<std::size_t>(e)].reset(world_.gateway_root(e), exports()[static_cast<std::size_t>(e)].subtree ? sub : tree);
}

namespace {
bool names_two_objects(Op op) { return op == Op::Rename || op == Op::Link; }
}  // namespace

bool Runner::run(const Step& s, std::vector<Violation>& found) {
  judge_.now = Clock::now();
  judge_.exp = s.exp;
  judge_.restarts = stats.kills;
  recorder_.set_step(s.id);
  if (s.op == Op::Kill) {
    world_.kill_restart();
    ++stats.kills;
    restarted();
    return true;
  }
  if (s.op == Op::Flush) {
    const std::size_t before = found.size();
    flush(s, found);
    stats.violations += found.size() - before;
    return true;
  }
  if (s.op == Op::Reload) {
    try {
      world_.reload(s.variant, s.sighup);
    } catch (const std::exception& e) {
      found.push_back({s.id, "RELOAD refused", e.what()});
      ++stats.violations;
    }
    ++stats.reloads;
    return true;
  }
  const int a = model_.by_label(s.a);
  const int b = names_two_objects(s.op) ? model_.by_label(s.b) : -1;
  const bool missing = a < 0 || (names_two_objects(s.op) && b < 0) ||
                       (!s.at_origin && (!view(s.exp).handle(a) || (b >= 0 && !view(s.exp).handle(b))));
  if (missing) {
    ++stats.skipped;
    return false;
  }
  const std::size_t before = found.size();
  if (s.changes()) {
    change(s, a, b, found);
  } else {
    question(s, a, found);
  }
  stats.violations += found.size() - before;
  return true;
}

int Runner::object_of(int exp, const Handle& h, std::string& why) {
  const Decoded d = decode_gateway_handle(h);
  if (!d.valid) {
    why = d.why;
    return -1;
  }
  if (d.export_id != view(exp).id()) {
    why = "a handle of another export (id " + std::to_string(d.export_id) + ")";
    return -1;
  }
  const int id = d.root ? view(exp).root() : recorder_.object(d.origin, "(outside the tree)", std::nullopt);
  views_[static_cast<std::size_t>(exp)].learn(id, h);
  return id;
}

void Runner::lost_gateway(const Step& s, const Reply& r, std::vector<Violation>& found) {
  std::string detail = "no answer: " + r.error + "\n";
  if (!world_.gateway_running()) detail += "nfsgw exited; the end of its log:\n" + world_.gateway_log_tail();
  found.push_back({s.id, std::string(op_name(s.op)) + " not answered", detail});
  // Go on with a running nfsgw and connected clients.
  world_.kill_restart();
  restarted();
}

std::string Runner::object_name(std::uint32_t label) const {
  const int id = model_.by_label(label);
  if (id < 0) return "<not made>";
  const int tree = model_.by_label(kTreeLabel);
  std::string name = "[" + model_.path(tree, id) + "]";
  // With --verbose, names carry the object's fileid, to follow one object
  // across moves.
  const Obj& o = model_.obj(id);
  if (verbose && o.attrs.known() && o.attrs.current()) name += "#" + std::to_string(o.attrs.current()->fileid);
  return name;
}

void Runner::gap(const std::string& what) {
  ++stats.model_gaps;
  if (verbose) std::fprintf(stderr, "difftest: model gap: %s\n", what.c_str());
}

}  // namespace difftest
