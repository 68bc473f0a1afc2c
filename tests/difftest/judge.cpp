#include "tests/difftest/judge.h"

#include <sstream>

namespace difftest {
namespace {

std::string show(const AttrValue& v) {
  if (!v) return "STALE (gone)";
  std::ostringstream s;
  s << *v;
  return s.str();
}

std::string show(const Model& m, Binding b) {
  if (b == kNoName) return "NOENT";
  return "object made by step #" + std::to_string(m.obj(b).label) + " (" + m.obj(b).made_as + ")";
}

std::string show(const Listing& l) {
  std::string s = "{";
  for (const auto& [name, fileid] : l) s += (s.size() > 1 ? ", " : "") + name + ":" + std::to_string(fileid);
  return s + "}";
}

std::string show_bytes(const std::string& b) {
  std::string s = std::to_string(b.size()) + " bytes \"";
  for (std::size_t i = 0; i < b.size() && i < 24; ++i) s += b[i] >= 32 && b[i] < 127 ? b[i] : '.';
  return s + (b.size() > 24 ? "...\"" : "\"");
}

/// "now" / "until 1.234 s ago, before a change through nfsgw".
template <typename V>
std::string when(const History<V>& h, const typename History<V>::Version& v, Clock::time_point now) {
  if (v.end == kCurrent) return "now";
  std::ostringstream s;
  s << "until " << std::chrono::duration<double>(now - v.end_time).count() << " s ago";
  if (v.end <= h.bound()) s << ", before a change through nfsgw";
  return s.str();
}

template <typename V, typename Show>
std::string versions(const History<V>& h, Clock::time_point now, Show show_value) {
  if (!h.known()) return "  (never recorded)\n";
  std::string out;
  const auto& vs = h.versions();
  for (std::size_t i = vs.size(); i-- > 0 && vs.size() - i <= 4;)
    out += "  origin held " + show_value(vs[i].value) + " (" + when(h, vs[i], now) + ")\n";
  return out;
}

/// Why the answer `match` picks out is not allowed: the newest version it equals
/// decides (none: the origin never held it).
template <typename V, typename Match>
const char* reason(const History<V>& h, const Promise& p, const Judge& j, Match match) {
  const auto& vs = h.versions();
  for (auto it = vs.rbegin(); it != vs.rend(); ++it) {
    if (!match(it->value)) continue;
    if (it->end <= h.bound()) {
      const Change& c = h.last_change();
      return j.exp != c.exp ? kBeforeOtherExport : j.restarts > c.restarts ? kBeforeRestart : kBeforeChange;
    }
    return p.kind == Promise::Kind::Strict ? kNotNow : kPastWindow;
  }
  return kNever;
}

template <typename V, typename Match>
Verdict judge(const History<V>& h, const Promise& p, const Judge& j, Match match, std::string detail) {
  if (h.any(p, j.now, match)) return {};
  return {reason(h, p, j, match), std::move(detail)};
}

}  // namespace

Listing as_seen_at_root(Listing l, std::uint64_t root_fileid) {
  for (auto& [name, fileid] : l)
    if (name == "..") fileid = root_fileid;
  return l;
}

Verdict Judge::attr(const Promise& p, int id, const AttrValue& seen) const {
  const auto& h = model_.obj(id).attrs;
  return judge(h, p, *this, [&](const AttrValue& v) { return v == seen; },
               "nfsgw answered " + show(seen) + "\n" + attr_versions(id));
}

Verdict Judge::binding(const Promise& p, int dir, const std::string& name, Binding seen, bool at_root) const {
  if (name == "." || (name == ".." && at_root)) {
    if (seen == dir) return {};
    return {name == "." ? kNever : kOutside,
            "nfsgw answered " + show(model_, seen) + ", where \"" + name + "\" is the directory itself\n"};
  }
  static const History<Binding> never;
  auto it = model_.obj(dir).names.find(name);
  const History<Binding>& h = it == model_.obj(dir).names.end() ? never : it->second;
  return judge(h, p, *this, [&](Binding b) { return b == seen; },
               "nfsgw answered " + show(model_, seen) + "\n" + binding_versions(dir, name));
}

Verdict Judge::listing(const Promise& p, int dir, const Listing& seen, bool at_root) const {
  const auto& h = model_.obj(dir).listing;
  const auto& attrs = model_.obj(dir).attrs;
  const std::uint64_t own = attrs.known() && attrs.current() ? attrs.current()->fileid : 0;
  auto shown = [&](const Listing& l) { return at_root ? as_seen_at_root(l, own) : l; };
  const std::string detail = "nfsgw listed " + show(seen) +
                             (at_root ? " (at the export root: \"..\" must be the root)" : "") + "\n" +
                             versions(h, now, [&](const Listing& l) { return show(shown(l)); });
  Verdict v = judge(h, p, *this, [&](const Listing& l) { return shown(l) == seen; }, detail);
  if (!v || !at_root) return v;
  // At the root, the names are judged apart from "..": a listing whose names are
  // allowed shows what lies outside the export through its "..".
  auto names = [&](const Listing& l) {
    Listing out;
    for (const auto& e : l)
      if (e.first != "..") out.push_back(e);
    return out;
  };
  const Listing seen_names = names(seen);
  Verdict by_names = judge(h, p, *this, [&](const Listing& l) { return names(l) == seen_names; }, detail);
  return by_names ? by_names : Verdict{kOutside, detail};
}

Verdict Judge::bytes(const Promise& p, int id, std::uint64_t offset, const std::string& data, bool eof) const {
  const auto& h = model_.obj(id).bytes;
  auto match = [&](const std::string& b) {
    const std::string part = offset >= b.size() ? std::string() : b.substr(offset, data.size());
    return part == data && eof == (offset + data.size() >= b.size());
  };
  return judge(h, p, *this, match,
               "nfsgw read " + show_bytes(data) + (eof ? " (eof)" : "") + " at " + std::to_string(offset) + "\n" +
                   versions(h, now, [](const std::string& b) { return show_bytes(b); }));
}

Verdict Judge::target(int id, const std::string& seen) const {
  const auto& t = model_.obj(id).target;
  if (t && *t == seen) return {};
  return {kNever, "nfsgw read the link as \"" + seen + "\", the origin made it \"" + (t ? *t : "?") + "\"\n"};
}

Verdict Judge::some_version(const Promise& p, int id, int user, const std::string& seen,
                            const std::function<bool(const Attr&, std::uint32_t)>& match) const {
  return judge(model_.obj(id).attrs, p, *this,
               [&](const AttrValue& v) {
                 if (!v) return false;
                 const auto bits = model_.perms.bits(*v, user);
                 return bits && match(*v, *bits);
               },
               "nfsgw answered " + seen + "\n" + attr_versions(id));
}

Verdict Judge::maybe_gone(const Promise& p, int id) const {
  return judge(model_.obj(id).attrs, p, *this, [](const AttrValue& v) { return !v.has_value(); },
               "nfsgw answered STALE\n" + attr_versions(id));
}

std::string Judge::attr_versions(int id) const {
  return versions(model_.obj(id).attrs, now, [](const AttrValue& v) { return show(v); });
}

std::string Judge::listing_versions(int dir) const {
  return versions(model_.obj(dir).listing, now, [](const Listing& l) { return show(l); });
}

std::string Judge::binding_versions(int dir, const std::string& name) const {
  auto it = model_.obj(dir).names.find(name);
  if (it == model_.obj(dir).names.end()) return "  (never recorded)\n";
  return versions(it->second, now, [&](Binding b) { return show(model_, b); });
}

}  // namespace difftest
