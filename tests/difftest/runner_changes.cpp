// Changes, through nfsgw or straight at the origin: CREATE, MKDIR, SYMLINK, REMOVE,
// RMDIR, RENAME, LINK, SETATTR, WRITE. What a change may touch is found from the
// model before the call (runner.h says what happens around it).
#include <algorithm>
#include <stdexcept>

#include "tests/difftest/runner.h"
#include "tests/difftest/send.h"

namespace difftest {
namespace {

void add(std::vector<int>& to, int id) {
  if (id >= 0 && std::find(to.begin(), to.end(), id) == to.end()) to.push_back(id);
}

void add(std::vector<std::pair<int, std::string>>& to, int dir, const std::string& name) {
  const std::pair<int, std::string> key{dir, name};
  if (std::find(to.begin(), to.end(), key) == to.end()) to.push_back(key);
}

/// The (directory, name) pairs a change names.
std::vector<std::pair<int, std::string>> names_of(const Step& s, int a, int b) {
  switch (s.op) {
    case Op::Create:
    case Op::Mkdir:
    case Op::Symlink:
    case Op::Remove:
    case Op::Rmdir: return {{a, s.name}};
    case Op::Rename: return {{a, s.name}, {b, s.name2}};
    case Op::Link: return {{b, s.name}};
    default: return {};
  }
}

}  // namespace

Runner::Touched Runner::touched_by(const Step& s, int a, int b) const {
  auto bound_to = [&](int dir, const std::string& name) {
    const auto& names = model_.obj(dir).names;
    auto it = names.find(name);
    return it == names.end() || !it->second.known() ? kNoName : it->second.current();
  };
  Touched t;
  for (const auto& [dir, name] : names_of(s, a, b)) {
    add(t.attrs, dir);
    add(t.listings, dir);
    add(t.names, dir, name);
    // The object behind the name: removed, replaced, or (EXIST) left alone; a
    // folder removed loses its ".." too (the origin answers NOENT for it then).
    const int victim = bound_to(dir, name);
    add(t.attrs, victim);
    if (victim >= 0 && model_.obj(victim).names.count("..")) add(t.names, victim, "..");
  }
  switch (s.op) {
    case Op::Rename: {
      const int moved = bound_to(a, s.name);
      if (moved >= 0 && model_.obj(moved).type() == kDir) {
        add(t.names, moved, "..");
        add(t.listings, moved);
      }
      break;
    }
    case Op::Link: add(t.attrs, a); break;
    case Op::Setattr:
    case Op::Write:
      add(t.attrs, a);
      if (model_.obj(a).type() == kReg && (s.op == Op::Write || s.size)) add(t.bytes, a);
      break;
    default: break;
  }
  return t;
}

bool Runner::record(const Touched& t, bool only_unknown) {
  bool changed = false;
  for (const auto& [dir, name] : t.names) {
    const auto& names = model_.obj(dir).names;
    const bool known = names.count(name) && names.at(name).known();
    if (!only_unknown || !known) changed |= recorder_.binding(dir, name);
  }
  for (int id : t.attrs)
    if (!only_unknown || !model_.obj(id).attrs.known()) changed |= recorder_.attr(id);
  for (int dir : t.listings)
    if (!only_unknown || !model_.obj(dir).listing.known()) changed |= recorder_.listing(dir);
  for (int id : t.bytes)
    if (!only_unknown || !model_.obj(id).bytes.known()) changed |= recorder_.bytes(id);
  return changed;
}

void Runner::bound(const Touched& t, int exp, std::uint64_t restarts) {
  const Change tick{model_.next_tick(), exp, restarts};
  for (const auto& [dir, name] : t.names) model_.obj(dir).names[name].bound(tick);
  for (int id : t.attrs) model_.obj(id).attrs.bound(tick);
  for (int dir : t.listings) model_.obj(dir).listing.bound(tick);
  for (int id : t.bytes) model_.obj(id).bytes.bound(tick);
}

void Runner::change(const Step& s, int a, int b, std::vector<Violation>& found) {
  // What the names are bound to must be known before the victims can be.
  for (const auto& [dir, name] : names_of(s, a, b)) {
    const auto& names = model_.obj(dir).names;
    if (!names.count(name) || !names.at(name).known()) recorder_.binding(dir, name);
  }
  const Touched t = touched_by(s, a, b);
  record(t, true);
  auto bound_to = [&](int dir, const std::string& name) { return model_.obj(dir).names[name].current(); };
  const Binding from_before = s.op == Op::Rename ? bound_to(a, s.name) : kNoName;
  const Binding to_before = s.op == Op::Rename ? bound_to(b, s.name2) : kNoName;

  const Handle& origin_a = model_.obj(a).origin;
  const Handle origin_b = b >= 0 ? model_.obj(b).origin : Handle{};
  // A change that may have nfsgw flush a dirty file first: what the origin held
  // before, which the flush writes over.
  const bool may_flush = flushes_first(s, a);
  std::string before_flush;
  if (may_flush) {
    recorder_.bytes(a);
    before_flush = model_.obj(a).bytes.known() ? model_.obj(a).bytes.current() : std::string();
  }
  Reply r;
  if (s.at_origin) {
    r = send(world_.origin(s.user), s, origin_a, origin_b);
    ++stats.origin_calls;
    if (!r.transport_ok) {
      // Unanswered (ganesha stalls now and then): whether it happened is read
      // from the origin below, as for any change made there.
      world_.reconnect_origin();
      r.transport_ok = true;
    }
  } else {
    r = send(world_.gateway(s.user), s, *view(s.exp).handle(a), b >= 0 ? *view(s.exp).handle(b) : Handle{});
    ++stats.calls;
  }
  if (!r.transport_ok) {
    lost_gateway(s, r, found);
    record(t, false);
    return;
  }
  // The change's answers are judged as the restart's: the bound keeps the count before.
  const std::uint64_t restarts = stats.kills;
  auto kill_now = [&] {
    if (!s.kill_at_once) return;
    world_.kill_restart();
    ++stats.kills;
    restarted();
  };
  // A WRITE through a write-back export that nfsgw took into its dirty log leaves
  // the origin as it was.
  if (!s.at_origin && s.op == Op::Write && r.status == kOk && exports()[static_cast<std::size_t>(s.exp)].write_back &&
      absorbed(s, a, r, found)) {
    kill_now();
    return;
  }
  const bool flushed = may_flush && r.status != kJukebox;
  kill_now();
  bool changed = record(t, false);
  if (s.at_origin) {
    ++stats.origin_changes;
    for (int id : t.attrs) origin_changed(id);
    return;
  }
  const std::string op = op_name(s.op);
  auto report = [&](Problem p) {
    if (p) found.push_back({s.id, p.kind, p.detail});
  };
  if (flushed) {
    // The flush changed the origin whether or not the change was done: the bytes
    // it left are checked instead.
    changed = false;
    if (Problem p = judge_flushed(s, a, before_flush, r)) {
      report(p);
      return;
    }
  }
  const bool dirty_meta = r.status == kOk && (s.op == Op::Setattr || s.op == Op::Link) && model_.obj(a).dirty;
  if (exports()[static_cast<std::size_t>(s.exp)].read_only) {
    if (r.status != kRofs || changed)
      report(judge_part(op + " on a read-only export",
                        {changed ? "done" : "not refused with ROFS",
                         std::string("nfsgw answered ") + status_name(r.status) +
                             (changed ? " and the origin changed" : "") + "\n"}));
    return;
  }
  if (r.status == kOk) {
    bound(t, s.exp, restarts);
    Problem p = judge_effect(s, a, b, r, from_before == to_before ? -2 : from_before);
    // A dirty file's SETATTR (without a size) or LINK: nfsgw's snapshot answers.
    report(p ? p : dirty_meta ? dirty_setattr(s, a, r) : judge_change_reply(s, a, b, r));
    return;
  }
  if (changed) {
    report(judge_part(op + " refused", {"but done", std::string("nfsgw answered ") + status_name(r.status) +
                                                        " and the origin changed\n"}));
    return;
  }
  // Nothing changed: the origin must refuse the same call in the same way.
  const Reply o = send(world_.origin(s.user), s, origin_a, origin_b);
  ++stats.origin_calls;
  if (!o.transport_ok) {
    // Unanswered: no verdict; if the origin did it after all, it is a change made there.
    world_.reconnect_origin();
    if (record(t, false)) ++stats.origin_changes;
    return;
  }
  if (o.status == kOk) {
    record(t, false);
    ++stats.origin_changes;
  }
  Problem p;
  if (o.status != r.status)
    p = judge_part(op + " status", {"not the origin's", std::string("nfsgw answered ") + status_name(r.status) +
                                                            ", the origin answers the same call " +
                                                            status_name(o.status) + "\n"});
  report(p ? p : judge_change_reply(s, a, b, r));
}

Runner::Problem Runner::judge_effect(const Step& s, int a, int b, const Reply& r, Binding before_from) {
  const std::string op = op_name(s.op);
  auto bound_to = [&](int dir, const std::string& name) { return model_.obj(dir).names[name].current(); };
  auto expect = [&](bool ok, const std::string& what) {
    return judge_part(op + " effect", ok ? Verdict{} : Verdict{"not done", "nfsgw answered OK, but at the origin " + what + "\n"});
  };
  switch (s.op) {
    case Op::Create:
    case Op::Mkdir:
    case Op::Symlink: {
      const Binding made = bound_to(a, s.name);
      if (Problem p = expect(made != kNoName, "\"" + s.name + "\" does not exist")) return p;
      if (r.handle.empty()) return {};
      std::string why;
      const int id = object_of(s.exp, r.handle, why);
      if (id == made) return {};
      return judge_part(op + " handle", {"not the new object's", "nfsgw's handle is not the new object's: " + why + "\n"});
    }
    case Op::Remove:
    case Op::Rmdir: return expect(bound_to(a, s.name) == kNoName, "\"" + s.name + "\" still exists");
    case Op::Rename:
      if (before_from == -2) return {};  // two names of one object: nothing happens
      if (Problem p = expect(bound_to(b, s.name2) == before_from, "the new name is not the object renamed"))
        return p;
      return expect((a == b && s.name == s.name2) || bound_to(a, s.name) == kNoName, "the old name is still there");
    case Op::Link: return expect(bound_to(b, s.name) == a, "the new name is not the file");
    case Op::Setattr: {
      // A symbolic link's mode cannot be set on Linux: the origin may say OK to it.
      const AttrValue& now = model_.obj(a).attrs.current();
      const bool mode_ok = !s.set_mode || (now && (now->type == kLnk || (now->mode & 07777) == (s.mode & 07777)));
      const bool ok = now && mode_ok && (!s.size || now->size == *s.size);
      return expect(ok, "the attributes are not those set: " + judge_.attr_versions(a));
    }
    case Op::Write: {
      const auto& bytes = model_.obj(a).bytes;
      const bool ok = !bytes.known() || bytes.current().substr(std::min<std::size_t>(s.offset, bytes.current().size()),
                                                               s.data.size()) == s.data;
      return expect(ok, "the file does not hold the bytes written");
    }
    default: return {};
  }
}

Runner::Problem Runner::judge_change_reply(const Step& s, int a, int b, const Reply& r) {
  const Promise& p = promise(s.exp);
  const std::string kind = std::string(op_name(s.op)) + " reply attributes";
  auto check = [&](int id, const std::optional<Attr>& attr) -> Problem {
    if (!attr || id < 0) return {};
    return judge_part(kind, judge_.attr(p, id, attr));
  };
  switch (s.op) {
    case Op::Create:
    case Op::Mkdir:
    case Op::Symlink: {
      if (Problem f = check(a, r.dir_attr)) return f;
      if (r.status != kOk) return {};
      return check(model_.obj(a).names[s.name].current(), r.attr);
    }
    case Op::Remove:
    case Op::Rmdir: return check(a, r.dir_attr);
    case Op::Rename:
      if (Problem f = check(a, r.dir_attr)) return f;
      return check(b, r.dir2_attr);
    case Op::Link:
      if (Problem f = check(a, r.attr)) return f;
      return check(b, r.dir_attr);
    case Op::Setattr:
    case Op::Write: return check(a, r.attr);
    default: return {};
  }
}

}  // namespace difftest
