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

bool time_before(std::uint32_t a_sec, std::uint32_t a_nsec, std::uint32_t b_sec, std::uint32_t b_nsec) {
  return a_sec != b_sec ? a_sec < b_sec : a_nsec < b_nsec;
}

bool same_but_size_and_times(const Attr& a, const Attr& b) {
  return a.type == b.type && a.mode == b.mode && a.nlink == b.nlink && a.uid == b.uid && a.gid == b.gid &&
         a.fileid == b.fileid;
}

Promise Judge::attr_promise(const Promise& p, int id) const {
  if (!model_.obj(id).dirty) return p;
  return Promise{Promise::Kind::Immutable, {}};
}

Verdict Judge::dirty_attr(int id, const AttrValue& seen) const {
  const Obj& o = model_.obj(id);
  const Dirty& d = *o.dirty;
  const Promise relaxed = attr_promise({}, id);
  const std::string detail = "nfsgw answered " + show(seen) + "\nfor a file nfsgw holds dirty data of (" +
                             d.describe() + (d.attr ? "; its snapshot: " + show(d.attr) : "") + ")\n" +
                             attr_versions(id);
  if (!seen) return judge(o.attrs, relaxed, *this, [](const AttrValue& v) { return !v.has_value(); }, detail);
  // After a kill -9 the snapshot is made again from the origin's size and the
  // dirty bytes' end: the same size, unless the origin's copy changed meanwhile
  // (behind nfsgw's back, or grown by a WRITE through another export, which the
  // model does not add to nfsgw's size): then larger, never smaller.
  if (seen->size != d.size && (d.attr || (!d.conflict && seen->size < d.size))) return {kDirtySize, detail};
  if (d.attr) {
    // mtime is the dirty data's (it moves with nfsgw's WRITEs only); ctime may
    // move on (a change of the attributes at the origin), never back.
    if (seen->mtime_sec != d.attr->mtime_sec || seen->mtime_nsec != d.attr->mtime_nsec)
      return {kDirtyTimes, detail};
    if (time_before(seen->ctime_sec, seen->ctime_nsec, d.attr->ctime_sec, d.attr->ctime_nsec))
      return {kDirtyTimesBack, detail};
  } else if (!time_before(d.last.mtime_sec, d.last.mtime_nsec, seen->mtime_sec, seen->mtime_nsec) ||
             !time_before(d.last.ctime_sec, d.last.ctime_nsec, seen->ctime_sec, seen->ctime_nsec)) {
    // After a kill -9 the snapshot takes times of its own, later than any before.
    return {kDirtyTimesBack, detail};
  }
  return judge(o.attrs, relaxed, *this,
               [&](const AttrValue& v) { return v && same_but_size_and_times(*v, *seen); }, detail);
}

Verdict Judge::absorbed_write(const Promise& p, int id, std::uint64_t end, const AttrValue& seen) const {
  const Obj& o = model_.obj(id);
  const std::string what = "nfsgw answered " + show(seen) + "\n";
  if (!seen) return {kNever, "WRITE answered OK without the file's attributes\n"};
  if (o.dirty) {
    const Dirty& d = *o.dirty;
    const std::string detail = what + "for a file nfsgw holds dirty data of (" + d.describe() +
                               (d.attr ? "; its snapshot: " + show(d.attr) : "") + ")\n" + attr_versions(id);
    // The origin's copy grown behind nfsgw's back may grow nfsgw's size (as in
    // dirty_change: after a restart the snapshot is rebuilt from the origin's).
    const std::uint64_t want = std::max(d.size, end);
    if (seen->size != want && !(d.conflict && seen->size > want)) return {kDirtySize, detail};
    const Attr& before = d.attr ? *d.attr : d.last;
    if (!time_before(before.mtime_sec, before.mtime_nsec, seen->mtime_sec, seen->mtime_nsec) ||
        !time_before(before.ctime_sec, before.ctime_nsec, seen->ctime_sec, seen->ctime_nsec))
      return {kDirtyTimesBack, detail};
    // All but size and times: the snapshot's, or the origin's as a reply from below
    // showed it to nfsgw (the snapshot merges those: a LINK made at the origin).
    if (d.attr && same_but_size_and_times(*d.attr, *seen)) return {};
    return judge(o.attrs, attr_promise(p, id), *this,
                 [&](const AttrValue& v) { return v && same_but_size_and_times(*v, *seen); }, detail);
  }
  // The file becomes dirty: its snapshot is a version the export may show, grown
  // to the write's end, with later times.
  return judge(o.attrs, p, *this,
               [&](const AttrValue& v) {
                 return v && same_but_size_and_times(*v, *seen) && seen->size == std::max(v->size, end) &&
                        time_before(v->mtime_sec, v->mtime_nsec, seen->mtime_sec, seen->mtime_nsec);
               },
               what + "for a file that becomes dirty (size: the version's grown to " + std::to_string(end) +
                   ", times later than the version's)\n" + attr_versions(id));
}

Verdict Judge::dirty_change(int id, const AttrValue& seen) const {
  const Obj& o = model_.obj(id);
  const Dirty& d = *o.dirty;
  if (!seen) return {};
  const std::string detail = "nfsgw answered " + show(seen) + "\nfor a file nfsgw holds dirty data of (" +
                             d.describe() + (d.attr ? "; its snapshot before: " + show(d.attr) : "") + ")\n" +
                             attr_versions(id);
  // The origin's copy grown behind nfsgw's back may grow nfsgw's size.
  if (seen->size != d.size && !(d.conflict && seen->size > d.size)) return {kDirtySize, detail};
  const Attr& before = d.attr ? *d.attr : d.last;
  if (time_before(seen->mtime_sec, seen->mtime_nsec, before.mtime_sec, before.mtime_nsec) ||
      time_before(seen->ctime_sec, seen->ctime_nsec, before.ctime_sec, before.ctime_nsec))
    return {kDirtyTimesBack, detail};
  return judge(o.attrs, attr_promise({}, id), *this,
               [&](const AttrValue& v) { return v && same_but_size_and_times(*v, *seen); }, detail);
}

Verdict Judge::attr(const Promise& p, int id, const AttrValue& seen) const {
  if (model_.obj(id).dirty) return dirty_attr(id, seen);
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
  if (const auto& d = model_.obj(id).dirty) {
    // nfsgw's dirty bytes over what the layer below has (the origin's, within
    // the export's promise), at nfsgw's size.
    auto match_at = [&](const std::string& b) {
      const std::string part = offset >= b.size() ? std::string() : b.substr(offset, data.size());
      return part == data && eof == (offset + data.size() >= b.size());
    };
    auto match = [&](const std::string& below) {
      if (match_at(d->over(below))) return true;
      // After a kill -9 the size is made again from the origin's, which a
      // conflict may have grown.
      if (d->attr || !d->conflict || below.size() <= d->size) return false;
      Dirty grown = *d;
      grown.size = below.size();
      return match_at(grown.over(below));
    };
    if (h.any(p, now, match)) return {};
    return {kDirtyBytes, "nfsgw read " + show_bytes(data) + (eof ? " (eof)" : "") + " at " + std::to_string(offset) +
                             "\nnfsgw holds dirty data of the file (" + d->describe() + "); with the origin's " +
                             "bytes below it shows:\n" +
                             versions(h, now, [&](const std::string& b) { return show_bytes(d->over(b)); })};
  }
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
  return judge(model_.obj(id).attrs, attr_promise(p, id), *this, [](const AttrValue& v) { return !v.has_value(); },
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
