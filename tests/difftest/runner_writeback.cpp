// Write-back (issue 20; docs/difftest.md, *Write-back*): WRITEs nfsgw takes into
// its dirty log through /back, the changes that have it flush a dirty file first,
// `nfsgw flush`, and what a kill -9 does to dirty files in the model.
#include <algorithm>
#include <sstream>

#include "tests/difftest/runner.h"

namespace difftest {
namespace {

/// "the origin holds 120 bytes, nfsgw's flush should have left 130; first
/// difference at 100: 'x' where 'A'".
std::string difference(const std::string& got, const std::string& want) {
  std::ostringstream s;
  s << "the origin holds " << got.size() << " bytes, where " << want.size() << " were due";
  const std::size_t n = std::min(got.size(), want.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    auto c = [](char x) { return x >= 32 && x < 127 ? std::string(1, x) : "\\" + std::to_string(+x); };
    s << "; first difference at byte " << i << ": '" << c(got[i]) << "' where '" << c(want[i]) << "' was due";
    break;
  }
  s << "\n";
  return s.str();
}

}  // namespace

std::optional<std::uint64_t> Runner::log_verifier(const Step& s, const Handle& h, std::vector<Violation>& found) {
  const Reply c = world_.gateway(s.user).commit(h);
  ++stats.calls;
  if (!c.transport_ok) {
    Step commit = s;
    lost_gateway(commit, c, found);
    return std::nullopt;
  }
  if (c.status != kOk) {
    found.push_back({s.id, "COMMIT status", std::string("nfsgw answered a COMMIT through a write-back export ") +
                                                status_name(c.status) + " after the WRITE\n"});
    return std::nullopt;
  }
  return c.verf;
}

bool Runner::absorbed(const Step& s, int a, const Reply& r, std::vector<Violation>& found) {
  const Handle& h = *view(s.exp).handle(a);
  // COMMIT through a write-back export answers the dirty log's verifier: a WRITE
  // that carries it is in the log, one that carries the origin's went there.
  if (!log_verf_ || s.stable == Stable::UnstableCommit) {
    const auto v = log_verifier(s, h, found);
    if (!v) return true;
    if (s.stable == Stable::UnstableCommit && *v != r.verf)
      found.push_back({s.id, "COMMIT verifier: not the WRITE's, without a restart",
                       "nfsgw answered the UNSTABLE WRITE with verifier " + std::to_string(r.verf) +
                           " and the COMMIT right after it with " + std::to_string(*v) +
                           " (a client sends the data again, for ever)\n"});
    log_verf_ = v;
  }
  if (r.verf != *log_verf_) return false;
  // A WRITE /back sends on to the origin is made stable there and carries the
  // log's verifier too (docs/difftest.md, fault 5): an UNSTABLE one answered
  // stable went there. (A FILE_SYNC one is not told apart by its reply; the tester
  // writes through /back only where the log takes its WRITEs.)
  if (s.stable == Stable::UnstableCommit && r.committed != 0) return false;
  ++stats.absorbed;
  const std::uint64_t end = s.offset + s.data.size();
  if (Problem p = judge_part("WRITE reply attributes", judge_.absorbed_write(promise(s.exp), a, end, r.attr)))
    found.push_back({s.id, p.kind, p.detail});
  if (s.stable == Stable::FileSync && r.committed != 2)
    found.push_back({s.id, "WRITE stability", "a FILE_SYNC WRITE answered committed " + std::to_string(r.committed) + "\n"});
  Obj& o = model_.obj(a);
  const bool became_dirty = !o.dirty;
  if (!o.dirty) o.dirty.emplace();
  Dirty& d = *o.dirty;
  // The snapshot comes from /back's metadata cache, which (ttl) may not have seen
  // the origin's copy grow before the WRITE: then it changed behind nfsgw's back
  // as surely as after it (a conflict), and a later reply from below may show the
  // origin's larger size.
  if (became_dirty && r.attr) {
    const AttrValue& now = o.attrs.current();
    if (now && now->size > r.attr->size) d.conflict = true;
  }
  d.write(s.offset, s.data);
  if (r.attr) {
    d.size = r.attr->size;
    d.attr = r.attr;
    d.last = *r.attr;
  } else {
    d.size = std::max(d.size, end);
  }
  if (std::find(d.writers.begin(), d.writers.end(), s.user) == d.writers.end()) d.writers.push_back(s.user);
  // No bound: the origin is as it was, and the snapshot may keep attributes of a
  // version the origin changed behind nfsgw's back (a conflict). The flush bounds.
  return true;
}

bool Runner::flushes_first(const Step& s, int a) const {
  if (s.at_origin || exports()[static_cast<std::size_t>(s.exp)].read_only || !model_.obj(a).dirty) return false;
  return s.op == Op::Write || (s.op == Op::Setattr && s.size);
}

Runner::Problem Runner::judge_flushed(const Step& s, int a, const std::string& before, const Reply& r) {
  Obj& o = model_.obj(a);
  const Dirty d = *o.dirty;
  o.dirty.reset();
  ++stats.dirty_flushed;
  Touched t;
  t.attrs = {a};
  t.bytes = {a};
  bound(t, s.exp, stats.kills);
  if (!o.alive()) return {};  // gone at the origin: the flush had nowhere to go
  std::string due = d.flushed_over(before);
  if (r.status == kOk) {
    if (s.op == Op::Write) {
      const std::size_t end = static_cast<std::size_t>(s.offset) + s.data.size();
      if (due.size() < end) due.resize(end, '\0');
      std::copy(s.data.begin(), s.data.end(), due.begin() + static_cast<std::ptrdiff_t>(s.offset));
    } else if (s.size) {
      due.resize(static_cast<std::size_t>(*s.size), '\0');
    }
  }
  const std::string now = o.bytes.known() ? o.bytes.current() : std::string();
  if (now == due) return {};
  return judge_part(std::string(op_name(s.op)) + " of a dirty file",
                    {"the origin does not hold nfsgw's dirty bytes flushed first",
                     std::string("nfsgw answered ") + status_name(r.status) + "; nfsgw held dirty data (" +
                         d.describe() + ")\n" + difference(now, due)});
}

Runner::Problem Runner::dirty_setattr(const Step& s, int a, const Reply& r) {
  Dirty& d = *model_.obj(a).dirty;
  Problem p = judge_part(std::string(op_name(s.op)) + " reply attributes", judge_.dirty_change(a, r.attr));
  // The snapshot is nfsgw's from now on, even a wrong one (reported here): later
  // answers are judged against it, so one fault is not reported at every step.
  if (r.attr) {
    d.last = *r.attr;
    d.size = r.attr->size;
    // Answered before the step's own kill -9 (kill-after): restarted() already ran,
    // and the restart made the snapshot again with times of its own (later than
    // these), learnt from the first answer after it.
    if (!s.kill_at_once) d.attr = r.attr;
  }
  return p;
}

void Runner::flush(const Step& s, std::vector<Violation>& found) {
  const std::vector<int> dirty = model_.dirty();
  std::vector<std::string> before;
  std::vector<bool> alive;
  for (int id : dirty) {
    recorder_.attr(id);
    alive.push_back(model_.obj(id).alive());
    if (alive.back()) recorder_.bytes(id);
    const auto& b = model_.obj(id).bytes;
    before.push_back(b.known() ? b.current() : std::string());
  }
  ++stats.flushes;
  std::string output;
  if (!world_.flush(output)) {
    found.push_back({s.id, "FLUSH failed", "nfsgw flush: " + output + "\n"});
    return;
  }
  for (std::size_t i = 0; i < dirty.size(); ++i) {
    const int id = dirty[i];
    Touched t;
    t.attrs = {id};
    t.bytes = {id};
    record(t, false);
    Obj& o = model_.obj(id);
    const Dirty d = *o.dirty;
    o.dirty.reset();
    bound(t, kBackExport, stats.kills);
    const std::string name = object_name(o.label);
    if (!alive[i]) {
      if (o.alive())
        found.push_back({s.id, "FLUSH: a removed file came back",
                         name + " was gone at the origin before the flush, and is there after it\n"});
      continue;
    }
    if (!o.alive()) {
      found.push_back({s.id, "FLUSH: the file is gone", name + " was at the origin before the flush, not after\n"});
      continue;
    }
    const std::string due = d.flushed_over(before[i]);
    if (due != before[i]) ++stats.dirty_flushed;
    if (o.bytes.current() != due)
      found.push_back({s.id, "FLUSH: the origin does not hold nfsgw's dirty bytes",
                       name + ": nfsgw held dirty data (" + d.describe() + ")\n" +
                           difference(o.bytes.current(), due)});
  }
}

void Runner::restarted() {
  log_verf_.reset();
  for (int id : model_.dirty()) {
    Dirty& d = *model_.obj(id).dirty;
    if (d.attr) d.last = *d.attr;
    d.attr.reset();
  }
}

void Runner::learn_dirty_times(const Step& s, int id, const Reply& r) {
  // The snapshot's times after a restart, and its ctime when it moved on.
  auto learn = [&](int who, const std::optional<Attr>& a) {
    if (who < 0 || !a || !model_.obj(who).dirty) return;
    Dirty& d = *model_.obj(who).dirty;
    if (d.attr && !time_before(d.attr->ctime_sec, d.attr->ctime_nsec, a->ctime_sec, a->ctime_nsec)) return;
    d.attr = a;
    d.last = *a;
    d.size = a->size;
  };
  if (r.status != kOk) return;
  switch (s.op) {
    case Op::Getattr:
    case Op::Access:
    case Op::Read: learn(id, r.attr); break;
    case Op::Lookup: {
      if (r.handle.empty()) break;
      std::string why;
      learn(object_of(s.exp, r.handle, why), r.attr);
      break;
    }
    case Op::Readdirplus:
      for (const Entry& e : r.entries) {
        if (e.handle.empty() || e.name == "." || e.name == "..") continue;
        std::string why;
        learn(object_of(s.exp, e.handle, why), e.attr);
      }
      break;
    default: break;
  }
}

bool Runner::about_dirty(const Step&, int, const Reply&) { return !model_.dirty().empty(); }

void Runner::origin_changed(int id) {
  if (id >= 0 && model_.obj(id).dirty) model_.obj(id).dirty->conflict = true;
}

}  // namespace difftest
