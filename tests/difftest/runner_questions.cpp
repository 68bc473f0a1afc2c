// Questions through nfsgw: GETATTR, LOOKUP, ACCESS, READLINK, READ, READDIR and
// READDIRPLUS, each answer judged part by part (runner.h says how).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tests/difftest/runner.h"
#include "tests/difftest/send.h"

namespace difftest {
namespace {

constexpr std::uint32_t kChangeBits = integ::kAccessModify | integ::kAccessExtend | integ::kAccessDelete;

std::string summary(const Reply& r) {
  std::ostringstream s;
  if (!r.transport_ok) return "no answer (" + r.error + ")";
  s << status_name(r.status);
  if (r.attr) s << ", attributes " << *r.attr;
  if (r.dir_attr) s << ", directory attributes " << *r.dir_attr;
  if (r.status == kOk && !r.entries.empty()) {
    s << ", entries {";
    for (const Entry& e : r.entries) s << e.name << ":" << e.fileid << " ";
    s << "}";
  }
  return s.str();
}

Listing listing_of(const Reply& r) {
  Listing l;
  for (const Entry& e : r.entries) l.emplace_back(e.name, e.fileid);
  std::sort(l.begin(), l.end());
  return l;
}

/// The origin's answer as an export shows it at its root: ".." is the root.
void as_seen_at_root(const Step& s, Reply& origin, const Handle& root_origin) {
  if (s.op == Op::Lookup && s.name == ".." && origin.status == kOk) {
    origin.handle = root_origin;
    origin.attr = origin.dir_attr;
  }
  const Entry* self = nullptr;
  for (const Entry& e : origin.entries)
    if (e.name == ".") self = &e;
  if (!self) return;
  const Entry dot = *self;
  for (Entry& e : origin.entries)
    if (e.name == "..") e.fileid = dot.fileid, e.handle = dot.handle, e.attr = dot.attr;
}

}  // namespace

void Runner::question(const Step& s, int id, std::vector<Violation>& found) {
  const Reply r = send(world_.gateway(s.user), s, *view(s.exp).handle(id), {});
  ++stats.calls;
  if (!r.transport_ok) {
    lost_gateway(s, r, found);
    return;
  }
  Problem p = judge_question(s, id, r);
  if (!p) learn_dirty_times(s, id, r);
  // Now and then the model's own view is checked against the origin's.
  const bool audit = s.id % 64 == 0;
  if (!p && !audit) return;
  refresh(s, id, r);
  if (!p) return;
  p = judge_question(s, id, r);
  if (!p) return;
  Reply o = send(world_.origin(s.user), s, model_.obj(id).origin, {});
  ++stats.origin_calls;
  if (!o.transport_ok) {  // ganesha stalls now and then: once more
    world_.reconnect_origin();
    o = send(world_.origin(s.user), s, model_.obj(id).origin, {});
    ++stats.origin_calls;
  }
  // The origin's own answer is no excuse for one about a file nfsgw holds dirty
  // data of: nfsgw must show its own bytes.
  if (o.transport_ok && !about_dirty(s, id, r) && same_answer(s, id, r, o)) {
    ++stats.model_errors;
    if (verbose)
      std::fprintf(stderr, "difftest: model error at step #%u (%s): %s%s", s.id, p.kind.c_str(), p.detail.c_str(),
                   ("the origin answers the same: " + summary(o) + "\n").c_str());
    return;
  }
  found.push_back({s.id, p.kind, p.detail + "the origin answers the same call now: " + summary(o) + "\n"});
}

Runner::Problem Runner::judge_part(const std::string& kind, const Verdict& v) {
  ++stats.checks;
  if (!v) return {};
  return {kind + ": " + v.reason, v.detail};
}

Runner::Problem Runner::judge_question(const Step& s, int id, const Reply& r) {
  const Promise& p = promise(s.exp);
  const std::string op = op_name(s.op);
  const int user = s.user;
  auto attrs_of = [&](int who, const std::optional<Attr>& a, const std::string& what) -> Problem {
    if (!a) return {};
    return judge_part(op + " " + what, judge_.attr(p, who, a));
  };
  // Whether some allowed version of the object grants (or refuses) `bit` to the user.
  auto bits = [&](const std::string& seen, std::uint32_t bit, bool granted) {
    return judge_.some_version(p, id, user, seen,
                               [=](const Attr&, std::uint32_t b) { return ((b & bit) != 0) == granted; });
  };
  // Whether some allowed version of the object is (or is not) of `type`.
  auto of_type = [&](const std::string& seen, std::uint32_t type, bool is) {
    return judge_.some_version(p, id, user, seen,
                               [=](const Attr& a, std::uint32_t) { return (a.type == type) == is; });
  };
  auto not_dir = [&](const std::string& seen) { return of_type(seen, kDir, false); };
  if (r.status == kStale) return judge_part(op + " STALE", judge_.maybe_gone(p, id));
  // Any other answer says the object exists.
  // (nfsgw's attributes shown in full beside the origin's versions: which one it kept.)
  if (Problem f = judge_part(op + " answered for a removed object",
                             judge_.some_version(judge_.attr_promise(p, id), id, user, summary(r),
                                                 [](const Attr&, std::uint32_t) { return true; })))
    return f;
  Problem found;
  switch (s.op) {
    case Op::Getattr:
      if (r.status != kOk) break;
      return judge_part("GETATTR attributes", judge_.attr(p, id, r.attr));
    case Op::Access: {
      if (r.status != kOk) break;
      const std::uint32_t mask = exports()[static_cast<std::size_t>(s.exp)].read_only ? ~kChangeBits : ~0u;
      char seen[32];
      std::snprintf(seen, sizeof seen, "ACCESS 0x%02x", r.access);
      auto same_bits = [&](const Attr&, std::uint32_t b) { return (b & integ::kAccessAll & mask) == r.access; };
      if ((found = judge_part("ACCESS bits", judge_.some_version(p, id, user, seen, same_bits)))) return found;
      return attrs_of(id, r.attr, "attributes");
    }
    case Op::Readlink:
      if (r.status == kInval) return judge_part("READLINK INVAL", of_type("INVAL", kLnk, false));
      if (r.status != kOk) break;
      if ((found = judge_part("READLINK target", judge_.target(id, r.data)))) return found;
      return attrs_of(id, r.attr, "attributes");
    case Op::Read:
      if (r.status == kIsdir) return judge_part("READ ISDIR", of_type("ISDIR", kDir, true));
      if (r.status == kInval) return judge_part("READ INVAL", of_type("INVAL", kReg, false));
      if (r.status == kAcces) return judge_part("READ ACCES", bits("ACCES", kMayRead, false));
      if (r.status != kOk) break;
      if ((found = judge_part("READ data", judge_.bytes(p, id, s.offset, r.data, r.eof)))) return found;
      if ((found = judge_part("READ permission", bits("OK", kMayRead, true)))) return found;
      return attrs_of(id, r.attr, "attributes");
    case Op::Lookup: {
      if (r.status == kNotdir) return judge_part("LOOKUP NOTDIR", not_dir("NOTDIR"));
      if (r.status == kAcces) return judge_part("LOOKUP ACCES", bits("ACCES", integ::kAccessLookup, false));
      const bool at_root = id == view(s.exp).root();
      if (r.status == kNoent) {
        if ((found = judge_part("LOOKUP NOENT", judge_.binding(p, id, s.name, kNoName, at_root)))) return found;
        return judge_part("LOOKUP permission", bits("NOENT", integ::kAccessLookup, true));
      }
      if (r.status != kOk) break;
      std::string why;
      const int child = object_of(s.exp, r.handle, why);
      if (child < 0) return judge_part("LOOKUP handle", {kNever, "nfsgw answered " + why + "\n"});
      if ((found = judge_part("LOOKUP binding", judge_.binding(p, id, s.name, child, at_root)))) return found;
      if ((found = judge_part("LOOKUP permission", bits("OK", integ::kAccessLookup, true)))) return found;
      if ((found = attrs_of(child, r.attr, "object attributes"))) return found;
      return attrs_of(id, r.dir_attr, "directory attributes");
    }
    case Op::Readdir:
    case Op::Readdirplus: {
      if (r.status == kNotdir) return judge_part(op + " NOTDIR", not_dir("NOTDIR"));
      if (r.status == kAcces) return judge_part(op + " ACCES", bits("ACCES", integ::kAccessRead, false));
      if (r.status != kOk) break;
      const bool at_root = id == view(s.exp).root();
      if ((found = judge_part(op + " listing", judge_.listing(p, id, listing_of(r), at_root)))) {
        if (r.dir_attr) {
          std::ostringstream with;
          with << "nfsgw's directory attributes: " << *r.dir_attr << "\n";
          found.detail += with.str();
        }
        return found;
      }
      if ((found = judge_part(op + " permission", bits("OK", integ::kAccessRead, true)))) return found;
      if ((found = attrs_of(id, r.dir_attr, "directory attributes"))) return found;
      return s.op == Op::Readdirplus ? judge_entries(s, id, r) : Problem{};
    }
    default: break;
  }
  return judge_part(op + " status", {kNever, std::string("nfsgw answered ") + status_name(r.status) + "\n"});
}

Runner::Problem Runner::judge_entries(const Step& s, int dir, const Reply& r) {
  const Promise& p = promise(s.exp);
  const bool at_root = dir == view(s.exp).root();
  for (const Entry& e : r.entries) {
    if (e.handle.empty()) continue;
    std::string why;
    const int id = object_of(s.exp, e.handle, why);
    if (id < 0) return judge_part("READDIRPLUS entry handle", {kNever, "entry \"" + e.name + "\": " + why + "\n"});
    if (Problem f = judge_part("READDIRPLUS entry handle", judge_.binding(p, dir, e.name, id, at_root)))
      return {f.kind, "entry \"" + e.name + "\": " + f.detail};
    if (e.attr) {
      if (Problem f = judge_part("READDIRPLUS entry attributes", judge_.attr(p, id, e.attr)))
        return {f.kind, "entry \"" + e.name + "\": " + f.detail};
    }
  }
  return {};
}

void Runner::refresh(const Step& s, int id, const Reply& r) {
  // Whether the model knew the key is read before the origin is asked again.
  auto again = [&](bool known, bool changed, const std::string& what, const std::string& versions) {
    if (known && changed)
      gap(what + " of " + object_name(model_.obj(id).label) + " at step #" + std::to_string(s.id) + "\n" + versions);
  };
  const bool at_root = id == view(s.exp).root();
  auto name_again = [&](const std::string& name) {
    if (name == "." || (name == ".." && at_root)) return;
    const auto& names = model_.obj(id).names;
    const bool known = names.count(name) && names.at(name).known();
    const bool changed = recorder_.binding(id, name);
    again(known, changed, "binding of \"" + name + "\"", judge_.binding_versions(id, name));
  };
  bool known = model_.obj(id).attrs.known();
  bool changed = recorder_.attr(id);
  again(known, changed, "attributes", judge_.attr_versions(id));
  switch (s.op) {
    case Op::Lookup:
      name_again(s.name);
      break;
    case Op::Read:
      known = model_.obj(id).bytes.known();
      changed = recorder_.bytes(id);
      again(known, changed, "bytes", "");
      break;
    case Op::Readdir:
    case Op::Readdirplus:
      known = model_.obj(id).listing.known();
      changed = recorder_.listing(id);
      again(known, changed, "listing", judge_.listing_versions(id));
      if (s.op == Op::Readdirplus)
        for (const Entry& e : r.entries) name_again(e.name);
      break;
    default: break;
  }
}

bool Runner::same_answer(const Step& s, int id, const Reply& gw, Reply origin) {
  if (id == view(s.exp).root()) as_seen_at_root(s, origin, model_.obj(id).origin);
  if (gw.status != origin.status) return false;
  if (gw.status != kOk) return true;
  auto same_attr = [](const std::optional<Attr>& x, const std::optional<Attr>& y) { return !x || !y || *x == *y; };
  auto same_object = [&](const Handle& g, const Handle& o) {
    if (g.empty() || o.empty()) return true;
    std::string why;
    return object_of(s.exp, g, why) == recorder_.object(o, "(outside the tree)", std::nullopt);
  };
  if (!same_attr(gw.attr, origin.attr) || !same_attr(gw.dir_attr, origin.dir_attr)) return false;
  if (!same_object(gw.handle, origin.handle)) return false;
  const std::uint32_t mask = exports()[static_cast<std::size_t>(s.exp)].read_only ? ~kChangeBits : ~0u;
  if (s.op == Op::Access && gw.access != (origin.access & mask)) return false;
  if (gw.data != origin.data || gw.eof != origin.eof) return false;
  auto by_name = [](const Entry& x, const Entry& y) { return x.name < y.name; };
  std::vector<Entry> g = gw.entries, o = origin.entries;
  std::sort(g.begin(), g.end(), by_name);
  std::sort(o.begin(), o.end(), by_name);
  if (g.size() != o.size()) return false;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g[i].name != o[i].name || g[i].fileid != o[i].fileid || !same_attr(g[i].attr, o[i].attr) ||
        !same_object(g[i].handle, o[i].handle))
      return false;
  }
  return true;
}

}  // namespace difftest
