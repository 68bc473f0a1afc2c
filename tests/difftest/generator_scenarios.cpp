// The scenarios of generator.h: short sequences shaped like issue 18's faults, on
// objects picked at random, mixed into the random stream.
#include <algorithm>
#include <array>

#include "tests/difftest/generator.h"

namespace difftest {
namespace {
constexpr int kRw = 0, kRo = 1, kStrict = 2, kSub = 3, kImm = 4, kShort = 5, kBack = kBackExport;
}  // namespace

std::uint32_t Generator::queue(Step s) {
  s.id = next_id_++;
  pending_.push_back(std::move(s));
  return pending_.back().id;
}

int Generator::owner(int id, int fallback) const {
  const Obj& o = runner_.model().obj(id);
  if (!o.alive()) return fallback;
  for (int u = 0; u < kUsers; ++u)
    if (users()[static_cast<std::size_t>(u)].uid == o.attrs.current()->uid) return u;
  return fallback;
}

bool Generator::reach(int exp, int user, int id) {
  const Model& m = runner_.model();
  const auto path = m.walk(runner_.view(exp).root(), id);
  if (!path) return false;
  for (const auto& [dir, name] : *path) {
    const int child = m.obj(dir).names.at(name).current();
    if (runner_.view(exp).handle(child)) continue;
    Step s = make(Op::Lookup);
    s.exp = exp;
    s.user = owner(dir, user);
    s.a = label(dir);
    s.name = name;
    queue(s);
  }
  return true;
}

const std::vector<std::string>& scenario_names() {
  static const std::vector<std::string> names = {"strict-lookup", "two-exports", "hard-link", "dotdot",
                                                 "kill-after", "stale-read", "same-file-rename", "dirty-read"};
  return names;
}

void Generator::scenario() {
  // By index in scenario_names(); kill_after comes with the kills (--kill-every):
  // a restart costs about 0.2 s.
  static const std::array<int, 8> weights = {2, 3, 2, 1, 0, 1, 1, 2};
  std::discrete_distribution<int> which(weights.begin(), weights.end());
  const auto& names = scenario_names();
  const auto only = std::find(names.begin(), names.end(), options_.only);
  switch (only != names.end() ? static_cast<int>(only - names.begin()) : which(rng_)) {
    case 4: kill_after(); break;
    case 5: stale_read(); break;
    case 6: same_file_rename(); break;
    case 7: dirty_read(); break;
    case 0: strict_lookup(); break;
    case 1: two_exports(); break;
    case 2: hard_link(); break;
    default: dotdot(); break;
  }
}

namespace {
std::uint64_t size_of_file(const Model& m, int id) {
  return m.obj(id).alive() ? m.obj(id).attrs.current()->size : 0;
}
/// A file's folder and name now, from the tree's root.
std::optional<std::pair<int, std::string>> where(const Model& m, int id) {
  const auto path = m.walk(m.by_label(kTreeLabel), id);
  if (!path || path->empty()) return std::nullopt;
  return path->back();
}
}  // namespace

void Generator::strict_lookup() {
  const std::vector<int> files = objects(-1, kReg);
  if (files.empty()) return;
  const int f = any_of(files);
  const auto at = where(runner_.model(), f);
  const int user = owner(f, 0);
  if (!at || !reach(kStrict, user, at->first)) return;
  auto ask = [&](Op op, int id, const std::string& name = "") {
    Step s = make(op);
    s.exp = kStrict;
    s.user = user;
    s.a = label(id);
    s.name = name;
    queue(s);
  };
  ask(Op::Lookup, at->first, at->second);
  Step grow = make(Op::Write);
  grow.at_origin = true;
  grow.user = user;
  grow.a = label(f);
  grow.offset = runner_.model().obj(f).attrs.current()->size;
  grow.data.assign(3000, 'S');
  queue(grow);
  Step chmod = make(Op::Setattr);
  chmod.at_origin = true;
  chmod.user = user;
  chmod.a = label(f);
  chmod.set_mode = true;
  chmod.mode = (runner_.model().obj(f).attrs.current()->mode & 0777) == 0600 ? 0644 : 0600;
  queue(chmod);
  ask(Op::Lookup, at->first, at->second);
  ask(Op::Readdirplus, at->first);
  ask(Op::Getattr, f);
}

void Generator::kill_after() {
  const std::vector<int> choices = {kRw, kStrict, kSub, kImm, kShort};
  const int exp = any_of(choices);
  auto ask = [&](Op op, int user, std::uint32_t object, const std::string& name = "") {
    Step s = make(op);
    s.exp = exp;
    s.user = user;
    s.a = object;
    s.name = name;
    return queue(s);
  };
  const Model& m = runner_.model();
  switch (pick(3)) {
    case 0: {  // a file removed (of one name: what a second name shows is hard-link's)
      std::vector<int> files = objects(-1, kReg);
      std::erase_if(files, [&](int id) { return m.obj(id).attrs.current()->nlink != 1; });
      if (files.empty()) return;
      const int f = any_of(files);
      const auto at = where(m, f);
      const int user = at ? owner(at->first, 0) : 0;
      if (!at || !reach(exp, user, f)) return;
      ask(Op::Getattr, user, label(f));
      Step drop = make(Op::Remove);
      drop.exp = exp;
      drop.user = user;
      drop.a = label(at->first);
      drop.name = at->second;
      drop.kill_at_once = true;
      queue(drop);
      ask(Op::Lookup, user, label(at->first), at->second);
      ask(Op::Getattr, user, label(f));
      ask(Op::Readdir, user, label(at->first));
      return;
    }
    case 1: {  // a name created after nfsgw cached that it does not exist
      const std::vector<int> dirs = objects(-1, kDir);
      const int d = any_of(dirs);
      const int user = owner(d, 0);
      if (!reach(exp, user, d)) return;
      const std::string name = free_name(d);
      ask(Op::Lookup, user, label(d), name);
      Step made = make(Op::Create);
      made.exp = exp;
      made.user = user;
      made.a = label(d);
      made.name = name;
      made.mode = 0644;
      made.kill_at_once = true;
      const std::uint32_t file = queue(made);
      ask(Op::Lookup, user, label(d), name);
      ask(Op::Getattr, user, file);
      ask(Op::Readdirplus, user, label(d));
      return;
    }
    default: {  // a mode changed
      std::vector<int> all = objects(-1, 0);
      std::erase_if(all, [&](int id) { return !m.obj(id).alive() || m.obj(id).type() == kLnk; });
      const int f = any_of(all);
      const int user = owner(f, 0);
      if (!reach(exp, user, f)) return;
      ask(Op::Getattr, user, label(f));
      ask(Op::Access, (user + 1) % kUsers, label(f));
      Step chmod = make(Op::Setattr);
      chmod.exp = exp;
      chmod.user = user;
      chmod.a = label(f);
      chmod.set_mode = true;
      chmod.mode = m.obj(f).type() == kDir ? 0700 : 0600;
      chmod.kill_at_once = true;
      queue(chmod);
      ask(Op::Getattr, user, label(f));
      ask(Op::Access, (user + 1) % kUsers, label(f));
      return;
    }
  }
}

void Generator::two_exports() {
  const std::vector<int> others = {kRo, kStrict, kSub, kImm, kShort};
  const int exp = any_of(others);
  const Model& m = runner_.model();
  std::vector<int> files = objects(-1, kReg);
  std::erase_if(files, [&](int id) { return !m.walk(runner_.view(exp).root(), id); });
  if (files.empty()) return;
  const int f = any_of(files);
  const auto at = where(m, f);
  const int user = owner(f, 0);
  if (!at || !reach(exp, user, f) || !reach(kRw, user, f)) return;
  auto look = [&](std::uint32_t new_file, const std::string& new_name) {
    auto ask = [&](Op op, std::uint32_t object, const std::string& name = "") {
      Step s = make(op);
      s.exp = exp;
      s.user = user;
      s.a = object;
      s.name = name;
      s.count = 4096;
      queue(s);
    };
    ask(Op::Lookup, label(at->first), at->second);
    ask(Op::Getattr, label(f));
    ask(Op::Readdir, label(at->first));
    ask(Op::Read, label(f));
    ask(Op::Access, label(f));
    if (!new_name.empty()) ask(Op::Lookup, label(at->first), new_name);
    if (new_file) ask(Op::Getattr, new_file);
  };
  look(0, "");
  Step c = make(Op::Getattr);
  c.exp = kRw;
  c.user = user;
  c.a = label(f);
  std::string new_name;
  switch (pick(5)) {
    case 0:
      c.op = Op::Write;
      c.offset = m.obj(f).attrs.current()->size;
      c.data.assign(200, 'W');
      break;
    case 1:
      c.op = Op::Create;
      c.a = label(at->first);
      c.name = new_name = free_name(at->first);
      c.mode = 0640;
      break;
    case 2:
      c.op = Op::Remove;
      c.a = label(at->first);
      c.name = at->second;
      break;
    case 3:
      c.op = Op::Setattr;
      c.set_mode = true;
      c.mode = (m.obj(f).attrs.current()->mode & 0777) == 0600 ? 0644 : 0600;
      break;
    default:
      c.op = Op::Rename;
      c.a = c.b = label(at->first);
      c.name = at->second;
      c.name2 = new_name = free_name(at->first);
      break;
  }
  const std::uint32_t made = queue(c);
  look(c.op == Op::Create ? made : 0, new_name);
}

void Generator::hard_link() {
  const Model& m = runner_.model();
  const std::vector<int> files = objects(-1, kReg), dirs = objects(-1, kDir);
  if (files.empty()) return;
  const int f = any_of(files), d = any_of(dirs);
  const std::string name = free_name(d);
  const int user = owner(d, 0);
  Step link = make(Op::Link);
  link.at_origin = true;
  link.user = user;
  link.a = label(f);
  link.b = label(d);
  link.name = name;
  std::vector<int> seen_by = {kRw, kRo, kStrict, kSub, kImm, kShort};
  std::erase_if(seen_by, [&](int e) { return !m.walk(runner_.view(e).root(), f); });
  if (seen_by.empty() || !reach(kRw, user, d)) return;
  const int exp = any_of(seen_by);
  queue(link);
  if (!reach(exp, user, f)) return;
  auto getattr = [&](int e) {
    if (!m.walk(runner_.view(e).root(), f)) return;
    Step s = make(Op::Getattr);
    s.exp = e;
    s.user = user;
    s.a = label(f);
    queue(s);
  };
  getattr(exp);
  getattr(kImm);
  Step drop = make(Op::Remove);
  drop.exp = kRw;
  drop.user = user;
  drop.a = label(d);
  drop.name = name;
  if (chance(0.3)) {  // another file renamed over the second name
    std::vector<int> others = files;
    std::erase(others, f);
    const int x = others.empty() ? -1 : any_of(others);
    const auto at = x >= 0 ? where(m, x) : std::nullopt;
    if (at && reach(kRw, user, at->first)) {
      drop.op = Op::Rename;
      drop.a = label(at->first);
      drop.name = at->second;
      drop.b = label(d);
      drop.name2 = name;
    }
  }
  queue(drop);
  getattr(exp);
  getattr(kRw);
  getattr(kImm);
}

void Generator::dotdot() {
  const Model& m = runner_.model();
  const int root = runner_.view(kSub).root();
  auto ask = [&](Op op, int id, const std::string& name = "") {
    Step s = make(op);
    s.exp = kSub;
    s.user = pick(kUsers);
    s.a = label(id);
    s.name = name;
    queue(s);
  };
  ask(Op::Readdir, root);
  ask(Op::Readdirplus, root);
  ask(Op::Lookup, root, "..");
  std::vector<int> below = m.reachable(root);
  std::erase_if(below, [&](int id) { return id == root || m.obj(id).type() != kDir; });
  if (below.empty()) return;
  const int d = any_of(below);
  if (!reach(kSub, owner(d, 0), d)) return;
  ask(Op::Readdirplus, d);
  ask(Op::Lookup, d, "..");
}

}  // namespace difftest

namespace difftest {
// A file's attributes cached through a ttl export (no READ, so no block of that
// version is cached), the file rewritten at the origin from offset 0 with more
// bytes than it had (new content and a new size), then READ through that export.
void Generator::stale_read() {
  const std::vector<int> choices = {0, 1, 3};  // /rw, /ro, /sub: ttl 1 h
  const int exp = any_of(choices);
  const Model& m = runner_.model();
  std::vector<int> files = objects(-1, kReg);
  std::erase_if(files, [&](int id) { return !m.walk(runner_.view(exp).root(), id) || size_of_file(m, id) == 0; });
  if (files.empty()) return;
  const int f = any_of(files);
  const int user = owner(f, 0);
  if (!reach(exp, user, f)) return;
  Step get = make(Op::Getattr);
  get.exp = exp;
  get.user = user;
  get.a = label(f);
  queue(get);
  Step w = make(Op::Write);
  w.at_origin = true;
  w.user = user;
  w.a = label(f);
  w.offset = 0;
  w.data.assign(static_cast<std::size_t>(size_of_file(m, f) + 100), 'R');
  queue(w);
  Step r = make(Op::Read);
  r.exp = exp;
  r.user = user;
  r.a = label(f);
  r.offset = 0;
  r.count = 4096;
  queue(r);
}
}  // namespace difftest

namespace difftest {
// Two names of one file in one folder (the second made at the origin), the folder
// listed through /rw, one name renamed onto the other through /rw (POSIX: nothing
// happens, both names stay), the folder listed and the old name looked up again.
void Generator::same_file_rename() {
  const Model& m = runner_.model();
  std::vector<int> files = objects(-1, kReg);
  if (files.empty()) return;
  const int f = any_of(files);
  const auto at = where(m, f);
  if (!at) return;
  const int d = at->first;
  const int user = owner(d, 0);
  const std::string second = free_name(d);
  if (second == at->second) return;
  if (!reach(0, user, d) || !reach(2, user, d)) return;
  Step link = make(Op::Link);
  link.at_origin = true;
  link.user = user;
  link.a = label(f);
  link.b = label(d);
  link.name = second;
  queue(link);
  auto ask = [&](int exp, Op op, const std::string& name = "") {
    Step s = make(op);
    s.exp = exp;
    s.user = user;
    s.a = label(d);
    s.name = name;
    queue(s);
  };
  ask(0, Op::Readdir);
  Step mv = make(Op::Rename);
  mv.exp = 0;
  mv.user = user;
  mv.a = mv.b = label(d);
  mv.name = at->second;
  mv.name2 = second;
  queue(mv);
  ask(0, Op::Readdir);
  ask(2, Op::Readdir);
  ask(0, Op::Lookup, at->second);
}
}  // namespace difftest

namespace difftest {
// A WRITE through /back (nfsgw keeps it dirty), the file read and its attributes
// asked through the other exports, then something that dirty data must survive
// or that must flush it, the questions again, and now and then `nfsgw flush`.
void Generator::dirty_read() {
  const Model& m = runner_.model();
  std::vector<int> files = objects(-1, kReg);
  std::erase_if(files, [&](int id) { return !owner_may_write(id); });
  if (files.empty()) return;
  const int f = any_of(files);
  const int user = owner(f, 0);
  const auto at = where(m, f);
  if (!at) return;
  for (int e : {kBack, kRw, kStrict, kShort, kImm})
    if (!reach(e, user, f)) return;
  const std::uint64_t size = visible_size(f);
  auto write = [&](int exp, bool at_origin, std::uint64_t offset, std::size_t n, char c) {
    Step w = make(Op::Write);
    w.exp = exp;
    w.at_origin = at_origin;
    w.user = user;
    w.a = label(f);
    w.offset = offset;
    w.data.assign(n, c);
    if (exp == kBack && !at_origin) w.stable = chance(0.3) ? Stable::UnstableCommit : Stable::FileSync;
    return queue(w);
  };
  const std::array<std::uint64_t, 4> offsets = {0, size, size + 1 + rng_() % 200, size ? rng_() % size : 0};
  write(kBack, false, offsets[static_cast<std::size_t>(pick(4))], static_cast<std::size_t>(1 + pick(300)),
        static_cast<char>('a' + pick(26)));
  auto ask = [&](int exp, Op op, std::uint32_t object, const std::string& name = "") {
    Step s = make(op);
    s.exp = exp;
    s.user = user;
    s.a = object;
    s.name = name;
    s.count = 65536;
    queue(s);
  };
  auto look = [&](bool more) {
    for (int e : {kRw, kStrict, kShort, kImm, kBack}) {
      ask(e, Op::Read, label(f));
      ask(e, Op::Getattr, label(f));
    }
    if (!more) return;
    ask(kStrict, Op::Lookup, label(at->first), at->second);
    ask(kRw, Op::Readdirplus, label(at->first));
  };
  look(true);
  bool flush = chance(0.25);
  switch (pick(9)) {
    case 0: break;
    case 1: queue(make(Op::Kill)); break;
    case 2: write(kBack, true, size / 2, 50, 'Z'); break;  // a conflict: changed behind nfsgw's back
    case 3: {
      Step cut = make(Op::Setattr);
      cut.exp = kRw;
      cut.user = user;
      cut.a = label(f);
      const std::array<std::uint64_t, 4> sizes = {0, 10, size / 2, size + 50};
      cut.size = sizes[static_cast<std::size_t>(pick(4))];
      queue(cut);
      break;
    }
    case 4: {
      Step chmod = make(Op::Setattr);
      chmod.exp = kRw;
      chmod.user = user;
      chmod.a = label(f);
      chmod.set_mode = true;
      chmod.mode = (m.obj(f).attrs.current()->mode & 0777) == 0600 ? 0644 : 0600;
      queue(chmod);
      break;
    }
    case 5: write(kStrict, false, 0, 20, 'T'); break;  // nfsgw flushes the file first
    case 6: {
      Step link = make(Op::Link);
      link.exp = kRw;
      link.user = user;
      link.a = label(f);
      link.b = label(at->first);
      link.name = free_name(at->first);
      queue(link);
      break;
    }
    case 8: {
      // Its name removed straight at the origin (the last one, mostly): the flush
      // finds the file gone (STALE), and no export may answer for it after that.
      Step drop = make(Op::Remove);
      drop.exp = kBack;
      drop.at_origin = true;
      drop.user = owner(at->first, user);
      drop.a = label(at->first);
      drop.name = at->second;
      queue(drop);
      flush = true;
      break;
    }
    default:
      write(kBack, false, size + 10, static_cast<std::size_t>(1 + pick(100)), static_cast<char>('a' + pick(26)));
      break;
  }
  look(true);
  if (flush) {
    queue(make(Op::Flush));
    look(false);
  }
}
}  // namespace difftest
