#include "tests/difftest/generator.h"

#include <algorithm>
#include <array>

namespace difftest {
namespace {

constexpr std::array<const char*, 8> kNames = {"a", "b", "c", "d", "e", "f", "g", "h"};
const std::vector<std::uint32_t> kFileModes = {0644, 0600, 0640, 0664, 0444, 0755, 0700, 0604, 0660, 0};
const std::vector<std::uint32_t> kDirModes = {0777, 0755, 0700, 0750, 0711, 0770, 0555};
const std::vector<std::string> kTargets = {"a", "../b", "sub/c", "nowhere", "/etc/passwd"};
const std::vector<std::uint32_t> kReadCounts = {1, 7, 100, 4096, 65536};
// The modes a file nfsgw holds dirty data of may be given: its owner keeps the
// right to write it, which the flush (sent as the writer) needs.
const std::vector<std::uint32_t> kOwnerWriteModes = {0644, 0600, 0664, 0755, 0700, 0660, 0666};
constexpr int kMostObjects = 60;

/// The type an object had when last seen alive (0: never).
std::uint32_t last_type(const Obj& o) {
  const auto& vs = o.attrs.versions();
  for (auto it = vs.rbegin(); it != vs.rend(); ++it)
    if (it->value) return it->value->type;
  return 0;
}

std::uint64_t size_of(const Obj& o) { return o.alive() ? o.attrs.current()->size : 0; }

}  // namespace

Generator::Generator(std::uint64_t seed, const Runner& runner, GeneratorOptions options, std::uint32_t first_id)
    : rng_(seed), runner_(runner), options_(options), next_id_(first_id) {}

std::uint32_t Generator::label(int id) const { return runner_.model().obj(id).label; }

Step Generator::make(Op op) {
  Step s;
  s.op = op;
  return s;
}

std::vector<int> Generator::objects(int exp, std::uint32_t type) const {
  const Model& m = runner_.model();
  std::vector<int> out;
  auto fits = [&](int id) { return type == 0 || (m.obj(id).alive() && m.obj(id).type() == type); };
  if (exp >= 0) {
    for (int id : runner_.view(exp).known())
      if (fits(id)) out.push_back(id);
    return out;
  }
  // At the origin: what is reachable in the tree now.
  for (int id : m.reachable(m.by_label(kTreeLabel)))
    if (fits(id)) out.push_back(id);
  return out;
}

int Generator::alive_objects() const { return static_cast<int>(objects(-1, 0).size()); }

std::string Generator::name_in(int dir) {
  std::vector<std::string> present;
  for (const auto& [name, h] : runner_.model().obj(dir).names)
    if (name != "." && name != ".." && h.known() && h.current() != kNoName) present.push_back(name);
  if (!present.empty() && chance(0.65)) return any_of(present);
  return kNames[static_cast<std::size_t>(pick(static_cast<int>(kNames.size())))];
}

bool Generator::is_export_root(int dir, const std::string& name) const {
  // T/sub is /sub's root: an administrator does not remove or move an exported
  // folder, and nfsgw finds its export's root by path again when it restarts.
  return dir == runner_.model().by_label(kTreeLabel) && name == "sub";
}

std::string Generator::free_name(int dir) {
  std::vector<std::string> free;
  const auto& names = runner_.model().obj(dir).names;
  for (const char* n : kNames) {
    auto it = names.find(n);
    if (it == names.end() || !it->second.known() || it->second.current() == kNoName) free.emplace_back(n);
  }
  if (free.empty()) return kNames[static_cast<std::size_t>(pick(static_cast<int>(kNames.size())))];
  return any_of(free);
}

Step Generator::next() {
  if (pending_.empty()) {
    // Half the kills come right after a change through nfsgw (kill_after).
    if (chance(options_.kill_every)) chance(0.5) ? kill_after() : (void)queue(make(Op::Kill));
    if (chance(options_.reload_every)) {
      Step s = make(Op::Reload);
      s.variant = pick(2);
      s.sighup = chance(0.5);
      queue(s);
    }
    if (pending_.empty() && chance(options_.scenarios)) scenario();
    if (pending_.empty() && chance(options_.flush_every)) queue(make(Op::Flush));
  }
  if (!pending_.empty()) {
    Step s = pending_.front();
    pending_.pop_front();
    return s;
  }
  for (int attempt = 0; attempt < 20; ++attempt) {
    Step s;
    s.user = pick(kUsers);
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    bool ok;
    if (r < options_.back_writes) {
      ok = back_write(s);
    } else if (r < 0.12) {
      s.at_origin = true;
      ok = change(s, -1);
    } else if (r < 0.32) {
      s.exp = pick(kExports);
      ok = change(s, s.exp);
    } else {
      s.exp = pick(kExports);
      ok = question(s);
    }
    if (ok) {
      s.id = next_id_++;
      return s;
    }
  }
  Step s = make(Op::Getattr);
  s.a = kTreeLabel;
  s.id = next_id_++;
  return s;
}

bool Generator::owner_may_write(int id) const {
  const Obj& o = runner_.model().obj(id);
  if (!o.alive() || o.type() != kReg) return false;
  const std::uint32_t uid = o.attrs.current()->uid;
  for (const auto& v : o.attrs.versions())
    if (v.value && (v.value->uid != uid || (v.value->mode & 0200) == 0)) return false;
  return true;
}

std::uint64_t Generator::visible_size(int id) const {
  const Obj& o = runner_.model().obj(id);
  return o.dirty ? o.dirty->size : size_of(o);
}

bool Generator::back_write(Step& s) {
  std::vector<int> files = objects(kBackExport, kReg);
  std::erase_if(files, [&](int id) { return !owner_may_write(id); });
  if (files.empty()) return false;
  const int id = any_of(files);
  const std::uint64_t size = visible_size(id);
  s.op = Op::Write;
  s.exp = kBackExport;
  s.user = owner(id, 0);
  s.a = label(id);
  // At the start, the end, inside, and past the end (a hole nfsgw must fill with zeros).
  const std::array<std::uint64_t, 4> offsets = {0, size, size ? rng_() % size : 0, size + 1 + rng_() % 200};
  s.offset = offsets[static_cast<std::size_t>(pick(4))];
  s.data.assign(static_cast<std::size_t>(1 + pick(300)), static_cast<char>('a' + pick(26)));
  s.stable = chance(0.3) ? Stable::UnstableCommit : Stable::FileSync;
  return true;
}

bool Generator::question(Step& s) {
  const Model& m = runner_.model();
  std::vector<int> known = objects(s.exp, 0), alive;
  for (int id : known)
    if (m.obj(id).alive()) alive.push_back(id);
  const int id = !alive.empty() && chance(0.9) ? any_of(alive) : any_of(known);
  s.a = label(id);
  const Obj& o = m.obj(id);
  const int roll = pick(12);
  switch (last_type(o)) {
    case kDir:
      if (roll < 5) {
        s.op = Op::Lookup;
        s.name = chance(0.1) ? (chance(0.5) ? "." : "..") : name_in(id);
      } else {
        s.op = roll < 6 ? Op::Readdir : roll < 8 ? Op::Readdirplus : roll < 10 ? Op::Getattr : Op::Access;
      }
      break;
    case kReg:
      s.op = roll < 4 ? Op::Getattr : roll < 7 ? Op::Access : Op::Read;
      if (s.op == Op::Read) {
        const std::uint64_t size = visible_size(id);
        const std::array<std::uint64_t, 4> offsets = {0, size ? rng_() % size : 0, size, size + 5};
        s.offset = offsets[static_cast<std::size_t>(pick(4))];
        s.count = any_of(kReadCounts);
      }
      break;
    case kLnk: s.op = roll < 6 ? Op::Readlink : roll < 10 ? Op::Getattr : Op::Access; break;
    default: s.op = roll < 8 ? Op::Getattr : Op::Access; break;
  }
  return true;
}

bool Generator::change(Step& s, int exp) {
  const Model& m = runner_.model();
  const std::vector<int> dirs = objects(exp, kDir), files = objects(exp, kReg);
  std::vector<int> any = objects(exp, 0);
  std::erase_if(any, [&](int id) { return !m.obj(id).alive(); });
  if (dirs.empty() || any.empty()) return false;
  const bool grow = alive_objects() < kMostObjects;
  // CREATE, MKDIR, SYMLINK, LINK, REMOVE, RMDIR, RENAME, SETATTR, WRITE
  const std::array<int, 9> weights = {grow ? 3 : 0, grow ? 1 : 0, grow ? 1 : 0, grow ? 1 : 0, 3, 1, 2, 3, 4};
  std::discrete_distribution<int> which(weights.begin(), weights.end());
  const int dir = any_of(dirs);
  s.a = label(dir);
  switch (which(rng_)) {
    case 0:
      s.op = Op::Create;
      s.name = chance(0.8) ? free_name(dir) : name_in(dir);
      s.mode = any_of(kFileModes);
      return true;
    case 1: {
      const auto path = m.walk(m.by_label(kTreeLabel), dir);
      if (!path || path->size() >= 3) return false;  // the tree stays shallow
      s.op = Op::Mkdir;
      s.name = free_name(dir);
      s.mode = any_of(kDirModes);
      return true;
    }
    case 2:
      s.op = Op::Symlink;
      s.name = free_name(dir);
      s.data = any_of(kTargets);
      return true;
    case 3:
      if (files.empty()) return false;
      s.op = Op::Link;
      s.a = label(any_of(files));
      s.b = label(dir);
      s.name = chance(0.8) ? free_name(dir) : name_in(dir);
      return true;
    case 4:
      s.op = Op::Remove;
      s.name = name_in(dir);
      return true;
    case 5:
      s.op = Op::Rmdir;
      s.name = name_in(dir);
      return !is_export_root(dir, s.name);
    case 6: {
      s.op = Op::Rename;
      s.name = name_in(dir);
      const int to = any_of(dirs);
      s.b = label(to);
      s.name2 = chance(0.5) ? free_name(to) : name_in(to);
      return !is_export_root(dir, s.name) && !is_export_root(to, s.name2);
    }
    case 7: {
      const int id = any_of(any);
      s.op = Op::Setattr;
      s.a = label(id);
      if (m.obj(id).type() == kReg && chance(0.4)) {
        const std::array<std::uint64_t, 4> sizes = {0, 10, 100, 5000};
        s.size = sizes[static_cast<std::size_t>(pick(4))];
      } else {
        s.set_mode = true;
        s.mode = m.obj(id).type() == kDir ? any_of(kDirModes)
                 : m.obj(id).dirty        ? any_of(kOwnerWriteModes)
                                          : any_of(kFileModes);
      }
      return true;
    }
    default: {
      if (exp == kBackExport) return back_write(s);
      if (files.empty()) return false;
      const int id = any_of(files);
      const std::uint64_t size = visible_size(id);
      s.op = Op::Write;
      s.a = label(id);
      const std::array<std::uint64_t, 3> offsets = {0, size, size ? rng_() % size : 0};
      s.offset = offsets[static_cast<std::size_t>(pick(3))];
      s.data.assign(static_cast<std::size_t>(1 + pick(300)), static_cast<char>('A' + pick(26)));
      return true;
    }
  }
}

}  // namespace difftest
