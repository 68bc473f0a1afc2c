#include "tests/unit/metacache/fake_origin.h"

#include <algorithm>
#include <stdexcept>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace nfsgw::metacache::test {

using nfs3::FileType;
using nfs3::Proc;
using nfs3::Status;

namespace {

constexpr std::array<std::uint8_t, 4> kMagic{'F', 'A', 'K', 'E'};
constexpr std::uint32_t R = 4, W = 2, X = 1;

std::size_t idx(Proc p) { return static_cast<std::size_t>(p); }

std::uint32_t xdr_string(std::size_t n) { return 4 + static_cast<std::uint32_t>((n + 3) & ~std::size_t{3}); }

std::uint64_t dir_size(std::size_t entries) { return 4096 + 32 * entries; }

}  // namespace

FakeOrigin::FakeOrigin() {
  Node root;
  const nfs3::Time t = tick();
  root.attr.type = FileType::Dir;
  root.attr.mode = 0755;
  root.attr.nlink = 2;
  root.attr.size = dir_size(0);
  root.attr.used = root.attr.size;
  root.attr.fsid = kFsid;
  root.attr.fileid = kRootId;
  root.attr.atime = root.attr.mtime = root.attr.ctime = t;
  root.parent = kRootId;
  nodes_.emplace(kRootId, std::move(root));
}

// ---- handles and the tree ------------------------------------------------------

nfs3::FileHandle FakeOrigin::handle(std::uint64_t fileid) const {
  std::array<std::uint8_t, kHandleSize> b{};
  std::copy(kMagic.begin(), kMagic.end(), b.begin());
  for (int i = 0; i < 8; ++i) b[4 + i] = static_cast<std::uint8_t>(fileid >> (56 - 8 * i));
  return nfs3::FileHandle(b);
}

FakeOrigin::Node* FakeOrigin::find(const nfs3::FileHandle& fh) {
  return const_cast<Node*>(static_cast<const FakeOrigin*>(this)->find(fh));
}

const FakeOrigin::Node* FakeOrigin::find(const nfs3::FileHandle& fh) const {
  if (fh.len != kHandleSize || !std::equal(kMagic.begin(), kMagic.end(), fh.bytes.begin())) return nullptr;
  std::uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = (id << 8) | fh.bytes[4 + i];
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}

nfs3::Time FakeOrigin::tick() { return nfs3::Time{1'700'000'000u + ++clock_, 0}; }

void FakeOrigin::touch_dir(Node& dir, const nfs3::Time& t) {
  dir.attr.mtime = dir.attr.ctime = t;
  dir.attr.size = dir.attr.used = dir_size(dir.entries.size());
}

std::uint64_t FakeOrigin::make_node(Node& dir, const std::string& name, FileType type, std::uint32_t mode,
                                    std::uint32_t uid, std::uint32_t gid, const nfs3::Time& t) {
  const std::uint64_t id = next_fileid_++;
  Node n;
  n.attr.type = type;
  n.attr.mode = mode;
  n.attr.nlink = type == FileType::Dir ? 2 : 1;
  n.attr.uid = uid;
  n.attr.gid = gid;
  n.attr.size = n.attr.used = type == FileType::Dir ? dir_size(0) : 0;
  n.attr.fsid = kFsid;
  n.attr.fileid = id;
  n.attr.atime = n.attr.mtime = n.attr.ctime = t;
  n.parent = dir.attr.fileid;
  if (type == FileType::Dir) ++dir.attr.nlink;
  dir.entries[name] = id;
  touch_dir(dir, t);
  nodes_.emplace(id, std::move(n));
  return id;
}

void FakeOrigin::drop_link(Node& dir, const std::string& name, const nfs3::Time& t) {
  const std::uint64_t id = dir.entries.at(name);
  dir.entries.erase(name);
  Node& child = nodes_.at(id);
  if (child.attr.type == FileType::Dir) {
    --dir.attr.nlink;
    nodes_.erase(id);
  } else if (--child.attr.nlink == 0) {
    nodes_.erase(id);
  } else {
    child.attr.ctime = t;
  }
  touch_dir(dir, t);
}

void FakeOrigin::do_move(Node& from, const std::string& from_name, Node& to, const std::string& to_name) {
  const nfs3::Time t = tick();
  const std::uint64_t id = from.entries.at(from_name);
  auto existing = to.entries.find(to_name);
  if (existing != to.entries.end()) {
    if (existing->second == id) return;  // two links of one file: nothing to do
    drop_link(to, to_name, t);
  }
  from.entries.erase(from_name);
  to.entries[to_name] = id;
  Node& child = nodes_.at(id);
  child.attr.ctime = t;
  if (child.attr.type == FileType::Dir && &from != &to) {
    child.parent = to.attr.fileid;
    --from.attr.nlink;
    ++to.attr.nlink;
  }
  touch_dir(from, t);
  touch_dir(to, t);
}

nfs3::FileHandle FakeOrigin::at(const std::string& path) const {
  std::lock_guard lock(mu_);
  std::uint64_t id = kRootId;
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    const std::string name = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (name.empty()) continue;
    const Node& n = nodes_.at(id);
    auto it = n.entries.find(name);
    if (it == n.entries.end()) throw std::out_of_range("FakeOrigin: no " + path);
    id = it->second;
  }
  return handle(id);
}

nfs3::FileHandle FakeOrigin::add_dir(const nfs3::FileHandle& dir, const std::string& name, std::uint32_t mode,
                                     std::uint32_t uid, std::uint32_t gid) {
  std::lock_guard lock(mu_);
  return handle(make_node(*find(dir), name, FileType::Dir, mode, uid, gid, tick()));
}

nfs3::FileHandle FakeOrigin::add_file(const nfs3::FileHandle& dir, const std::string& name, std::uint32_t mode,
                                      std::uint32_t uid, std::uint32_t gid, std::string data) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = make_node(*find(dir), name, FileType::Reg, mode, uid, gid, tick());
  Node& n = nodes_.at(id);
  n.attr.size = n.attr.used = data.size();
  n.data = std::move(data);
  return handle(id);
}

nfs3::FileHandle FakeOrigin::add_symlink(const nfs3::FileHandle& dir, const std::string& name,
                                         const std::string& target, std::uint32_t mode, std::uint32_t uid,
                                         std::uint32_t gid) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = make_node(*find(dir), name, FileType::Lnk, mode, uid, gid, tick());
  Node& n = nodes_.at(id);
  n.data = target;
  n.attr.size = n.attr.used = target.size();
  return handle(id);
}

void FakeOrigin::unlink(const nfs3::FileHandle& dir, const std::string& name) {
  std::lock_guard lock(mu_);
  drop_link(*find(dir), name, tick());
}

void FakeOrigin::move(const nfs3::FileHandle& from_dir, const std::string& from, const nfs3::FileHandle& to_dir,
                      const std::string& to) {
  std::lock_guard lock(mu_);
  do_move(*find(from_dir), from, *find(to_dir), to);
}

void FakeOrigin::chmod(const nfs3::FileHandle& fh, std::uint32_t mode) {
  std::lock_guard lock(mu_);
  Node& n = *find(fh);
  n.attr.mode = mode;
  n.attr.ctime = tick();
}

void FakeOrigin::append(const nfs3::FileHandle& fh) {
  std::lock_guard lock(mu_);
  Node& n = *find(fh);
  n.data.push_back('+');
  n.attr.size = n.attr.used = n.data.size();
  n.attr.mtime = n.attr.ctime = tick();
}

void FakeOrigin::set_link_target(const nfs3::FileHandle& fh, const std::string& target) {
  std::lock_guard lock(mu_);
  Node& n = *find(fh);
  n.data = target;
  n.attr.size = n.attr.used = target.size();
  n.attr.mtime = n.attr.ctime = tick();
}

void FakeOrigin::set_free_bytes(std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  free_bytes_ = bytes;
}

void FakeOrigin::set_name_max(std::uint32_t n) {
  std::lock_guard lock(mu_);
  name_max_ = n;
}

nfs3::Fattr FakeOrigin::attributes(const nfs3::FileHandle& fh) const {
  std::lock_guard lock(mu_);
  const Node* n = find(fh);
  if (n == nullptr) throw std::out_of_range("FakeOrigin: no such object");
  return n->attr;
}

std::vector<std::string> FakeOrigin::names(const nfs3::FileHandle& dir) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, id] : find(dir)->entries) out.push_back(name);
  return out;
}

// ---- call control ----------------------------------------------------------------

std::size_t FakeOrigin::calls(Proc p) const {
  std::lock_guard lock(mu_);
  return calls_[idx(p)];
}

std::size_t FakeOrigin::total_calls() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (auto c : calls_) n += c;
  return n;
}

void FakeOrigin::reset_calls() {
  std::lock_guard lock(mu_);
  calls_.fill(0);
}

void FakeOrigin::fail(Proc p, std::size_t times, Status status) {
  std::lock_guard lock(mu_);
  failures_[idx(p)] = Failure{0, times, status, true};
}

void FakeOrigin::fail_later(Proc p, std::size_t after, std::size_t times, Status status, bool made_up) {
  std::lock_guard lock(mu_);
  failures_[idx(p)] = Failure{after, times, status, made_up};
}

template <typename Res, typename Compute>
Awaitable<Res> FakeOrigin::serve(Proc p, Compute compute) {
  std::optional<Res> res;
  {
    std::lock_guard lock(mu_);
    ++calls_[idx(p)];
    Failure& f = failures_[idx(p)];
    if (f.after > 0) {
      --f.after;
      res = compute();
    } else if (f.times > 0) {
      --f.times;
      res.emplace();
      res->status = f.status;
      res->gateway_status = f.made_up;
    } else {
      res = compute();
    }
  }
  co_await gates_.pass(p);
  co_return std::move(*res);
}

// ---- permissions -------------------------------------------------------------------

bool FakeOrigin::may(const Credentials& c, const nfs3::Fattr& a, std::uint32_t rwx) {
  if (c.uid == 0) return true;
  std::uint32_t shift = 0;
  if (c.uid == a.uid) {
    shift = 6;
  } else if (c.gid == a.gid || std::find(c.gids.begin(), c.gids.end(), a.gid) != c.gids.end()) {
    shift = 3;
  }
  return ((a.mode >> shift) & rwx) == rwx;
}

// ---- procedures --------------------------------------------------------------------

nfs3::GetattrRes FakeOrigin::do_getattr(const nfs3::GetattrArgs& a) {
  nfs3::GetattrRes res;
  const Node* n = find(a.object);
  if (n == nullptr) {
    res.status = Status::Stale;
  } else {
    res.attributes = n->attr;
  }
  return res;
}

nfs3::SetattrRes FakeOrigin::do_setattr(const Credentials& c, const nfs3::SetattrArgs& a) {
  nfs3::SetattrRes res;
  Node* n = find(a.object);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  const nfs3::WccAttr before = wcc(n->attr);
  res.obj_wcc.before = before;
  res.obj_wcc.after = n->attr;
  if (c.uid != 0 && c.uid != n->attr.uid) {
    res.status = Status::Perm;
    return res;
  }
  if (a.guard && !(*a.guard == n->attr.ctime)) {
    res.status = Status::NotSync;
    return res;
  }
  const nfs3::Sattr& s = a.new_attributes;
  const nfs3::Time t = tick();
  if (s.mode) n->attr.mode = *s.mode;
  if (s.uid) n->attr.uid = *s.uid;
  if (s.gid) n->attr.gid = *s.gid;
  if (s.size && n->attr.type == FileType::Reg) {
    n->data.resize(*s.size);
    n->attr.size = n->attr.used = *s.size;
    n->attr.mtime = t;
  }
  if (s.mtime.how == nfs3::TimeHow::ServerTime) n->attr.mtime = t;
  if (s.mtime.how == nfs3::TimeHow::ClientTime) n->attr.mtime = s.mtime.time;
  if (s.atime.how == nfs3::TimeHow::ServerTime) n->attr.atime = t;
  if (s.atime.how == nfs3::TimeHow::ClientTime) n->attr.atime = s.atime.time;
  n->attr.ctime = t;
  res.obj_wcc.after = n->attr;
  return res;
}

nfs3::LookupRes FakeOrigin::do_lookup(const Credentials& c, const nfs3::LookupArgs& a) {
  nfs3::LookupRes res;
  const Node* dir = find(a.what.dir);
  if (dir == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.dir_attributes = dir->attr;
  if (dir->attr.type != FileType::Dir) {
    res.status = Status::NotDir;
    return res;
  }
  if (!may(c, dir->attr, X)) {
    res.status = Status::Acces;
    return res;
  }
  std::uint64_t id = 0;
  if (a.what.name == ".") {
    id = dir->attr.fileid;
  } else if (a.what.name == "..") {
    id = dir->parent;
  } else if (auto it = dir->entries.find(a.what.name); it != dir->entries.end()) {
    id = it->second;
  } else {
    res.status = Status::NoEnt;
    return res;
  }
  res.object = handle(id);
  res.obj_attributes = nodes_.at(id).attr;
  return res;
}

nfs3::AccessRes FakeOrigin::do_access(const Credentials& c, const nfs3::AccessArgs& a) {
  nfs3::AccessRes res;
  const Node* n = find(a.object);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.obj_attributes = n->attr;
  const bool dir = n->attr.type == FileType::Dir;
  std::uint32_t granted = 0;
  if (may(c, n->attr, R)) granted |= nfs3::access::Read;
  if (may(c, n->attr, W)) granted |= nfs3::access::Modify | nfs3::access::Extend | (dir ? nfs3::access::Delete : 0);
  if (may(c, n->attr, X)) granted |= dir ? nfs3::access::Lookup : nfs3::access::Execute;
  res.access = granted & a.access;
  return res;
}

nfs3::ReadlinkRes FakeOrigin::do_readlink(const Credentials& c, const nfs3::ReadlinkArgs& a) {
  nfs3::ReadlinkRes res;
  const Node* n = find(a.symlink);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.symlink_attributes = n->attr;
  if (n->attr.type != FileType::Lnk) {
    res.status = Status::Inval;
  } else if (!may(c, n->attr, R)) {
    res.status = Status::Acces;
  } else {
    res.data = n->data;
  }
  return res;
}

nfs3::ReadRes FakeOrigin::do_read(const Credentials& c, const nfs3::ReadArgs& a) {
  nfs3::ReadRes res;
  const Node* n = find(a.file);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.file_attributes = n->attr;
  if (n->attr.type != FileType::Reg) {
    res.status = n->attr.type == FileType::Dir ? Status::IsDir : Status::Inval;
  } else if (!may(c, n->attr, R)) {
    res.status = Status::Acces;
  } else {
    const std::size_t from = std::min<std::uint64_t>(a.offset, n->data.size());
    const std::size_t len = std::min<std::size_t>(a.count, n->data.size() - from);
    res.data.assign(n->data.begin() + static_cast<std::ptrdiff_t>(from),
                    n->data.begin() + static_cast<std::ptrdiff_t>(from + len));
    res.count = static_cast<std::uint32_t>(len);
    res.eof = from + len == n->data.size();
  }
  return res;
}

nfs3::WriteRes FakeOrigin::do_write(const Credentials& c, const nfs3::WriteArgs& a) {
  nfs3::WriteRes res;
  Node* n = find(a.file);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.file_wcc.before = wcc(n->attr);
  res.file_wcc.after = n->attr;
  if (n->attr.type != FileType::Reg) {
    res.status = n->attr.type == FileType::Dir ? Status::IsDir : Status::Inval;
    return res;
  }
  if (!may(c, n->attr, W)) {
    res.status = Status::Acces;
    return res;
  }
  const std::size_t end = a.offset + a.data.size();
  if (n->data.size() < end) n->data.resize(end);
  std::copy(a.data.begin(), a.data.end(), n->data.begin() + static_cast<std::ptrdiff_t>(a.offset));
  n->attr.size = n->attr.used = n->data.size();
  n->attr.mtime = n->attr.ctime = tick();
  res.file_wcc.after = n->attr;
  res.count = static_cast<std::uint32_t>(a.data.size());
  res.committed = nfs3::StableHow::FileSync;
  return res;
}

template <typename Res, typename Fill>
Res FakeOrigin::make_child(const Credentials& c, const nfs3::DirOpArgs& where, FileType type, std::uint32_t mode,
                           Fill fill) {
  Res res;
  Node* dir = find(where.dir);
  if (dir == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.dir_wcc.before = wcc(dir->attr);
  res.dir_wcc.after = dir->attr;
  if (dir->attr.type != FileType::Dir) {
    res.status = Status::NotDir;
  } else if (!may(c, dir->attr, W | X)) {
    res.status = Status::Acces;
  } else if (where.name.empty() || where.name == "." || where.name == "..") {
    res.status = Status::Inval;
  } else if (dir->entries.count(where.name) != 0) {
    res.status = Status::Exist;
  }
  if (res.status != Status::Ok) return res;
  const std::uint64_t id = make_node(*dir, where.name, type, mode, c.uid, c.gid, tick());
  Node& n = nodes_.at(id);
  fill(n);
  res.obj = handle(id);
  res.obj_attributes = n.attr;
  res.dir_wcc.after = dir->attr;
  return res;
}

nfs3::RemoveRes FakeOrigin::do_remove(const Credentials& c, const nfs3::RemoveArgs& a, bool rmdir) {
  nfs3::RemoveRes res;
  Node* dir = find(a.object.dir);
  if (dir == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.dir_wcc.before = wcc(dir->attr);
  res.dir_wcc.after = dir->attr;
  auto it = dir->entries.find(a.object.name);
  if (dir->attr.type != FileType::Dir) {
    res.status = Status::NotDir;
  } else if (!may(c, dir->attr, W | X)) {
    res.status = Status::Acces;
  } else if (a.object.name == "." || a.object.name == "..") {
    res.status = Status::Inval;
  } else if (it == dir->entries.end()) {
    res.status = Status::NoEnt;
  } else {
    const Node& victim = nodes_.at(it->second);
    const bool is_dir = victim.attr.type == FileType::Dir;
    if (rmdir && !is_dir) res.status = Status::NotDir;
    if (!rmdir && is_dir) res.status = Status::IsDir;
    if (rmdir && is_dir && !victim.entries.empty()) res.status = Status::NotEmpty;
  }
  if (res.status != Status::Ok) return res;
  drop_link(*dir, a.object.name, tick());
  res.dir_wcc.after = dir->attr;
  return res;
}

nfs3::RenameRes FakeOrigin::do_rename(const Credentials& c, const nfs3::RenameArgs& a) {
  nfs3::RenameRes res;
  Node* from = find(a.from.dir);
  Node* to = find(a.to.dir);
  if (from == nullptr || to == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.fromdir_wcc.before = wcc(from->attr);
  res.fromdir_wcc.after = from->attr;
  res.todir_wcc.before = wcc(to->attr);
  res.todir_wcc.after = to->attr;
  auto src = from->entries.find(a.from.name);
  auto dst = to->entries.find(a.to.name);
  if (from->attr.type != FileType::Dir || to->attr.type != FileType::Dir) {
    res.status = Status::NotDir;
  } else if (!may(c, from->attr, W | X) || !may(c, to->attr, W | X)) {
    res.status = Status::Acces;
  } else if (src == from->entries.end()) {
    res.status = Status::NoEnt;
  } else if (a.to.name.empty() || a.to.name == "." || a.to.name == "..") {
    res.status = Status::Inval;
  } else if (dst != to->entries.end() && dst->second != src->second) {
    const Node& moved = nodes_.at(src->second);
    const Node& replaced = nodes_.at(dst->second);
    const bool moved_dir = moved.attr.type == FileType::Dir;
    const bool replaced_dir = replaced.attr.type == FileType::Dir;
    if (moved_dir && !replaced_dir) res.status = Status::NotDir;
    if (!moved_dir && replaced_dir) res.status = Status::IsDir;
    if (replaced_dir && !replaced.entries.empty()) res.status = Status::NotEmpty;
  }
  if (res.status != Status::Ok) return res;
  do_move(*from, a.from.name, *to, a.to.name);
  res.fromdir_wcc.after = from->attr;
  res.todir_wcc.after = to->attr;
  return res;
}

nfs3::LinkRes FakeOrigin::do_link(const Credentials& c, const nfs3::LinkArgs& a) {
  nfs3::LinkRes res;
  Node* file = find(a.file);
  Node* dir = find(a.link.dir);
  if (file == nullptr || dir == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.file_attributes = file->attr;
  res.linkdir_wcc.before = wcc(dir->attr);
  res.linkdir_wcc.after = dir->attr;
  if (file->attr.type == FileType::Dir) {
    res.status = Status::IsDir;
  } else if (dir->attr.type != FileType::Dir) {
    res.status = Status::NotDir;
  } else if (!may(c, dir->attr, W | X)) {
    res.status = Status::Acces;
  } else if (dir->entries.count(a.link.name) != 0) {
    res.status = Status::Exist;
  }
  if (res.status != Status::Ok) return res;
  const nfs3::Time t = tick();
  dir->entries[a.link.name] = file->attr.fileid;
  ++file->attr.nlink;
  file->attr.ctime = t;
  touch_dir(*dir, t);
  res.file_attributes = file->attr;
  res.linkdir_wcc.after = dir->attr;
  return res;
}

std::vector<std::pair<std::string, std::uint64_t>> FakeOrigin::listing(const Node& dir) const {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  out.emplace_back(".", dir.attr.fileid);
  out.emplace_back("..", dir.parent);
  for (const auto& [name, id] : dir.entries) out.emplace_back(name, id);
  return out;
}

nfs3::ReaddirplusRes FakeOrigin::do_readdirplus(const Credentials& c, const nfs3::ReaddirplusArgs& a, bool plus) {
  nfs3::ReaddirplusRes res;
  const Node* dir = find(a.dir);
  if (dir == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.dir_attributes = dir->attr;
  if (dir->attr.type != FileType::Dir) {
    res.status = Status::NotDir;
    return res;
  }
  if (!may(c, dir->attr, R)) {
    res.status = Status::Acces;
    return res;
  }
  const auto all = listing(*dir);
  if (a.cookie > all.size()) {
    res.status = Status::BadCookie;
    return res;
  }
  // status, dir attributes, verifier, the end of the entry list, eof.
  std::uint32_t size = 4 + 4 + 84 + 8 + 4 + 4, dir_bytes = 0;
  std::size_t i = a.cookie;
  for (; i < all.size(); ++i) {
    const std::uint32_t info = 8 + xdr_string(all[i].first.size()) + 8;
    const std::uint32_t reply = 4 + info + (plus ? 4 + 84 + 4 + xdr_string(kHandleSize) : 0);
    if (size + reply > a.maxcount || dir_bytes + info > a.dircount) break;
    size += reply;
    dir_bytes += info;
    nfs3::DirEntryPlus e;
    e.fileid = all[i].second;
    e.name = all[i].first;
    e.cookie = i + 1;
    if (plus) {
      e.name_attributes = nodes_.at(all[i].second).attr;
      e.name_handle = handle(all[i].second);
    }
    res.entries.push_back(std::move(e));
  }
  res.eof = i == all.size();
  if (res.entries.empty() && !res.eof) {
    res.status = Status::TooSmall;
    res.eof = false;
  }
  return res;
}

nfs3::FsstatRes FakeOrigin::fsstat_of(const nfs3::FileHandle& fh) {
  nfs3::FsstatRes res;
  const Node* n = find(fh);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.obj_attributes = n->attr;
  res.tbytes = 4ull << 30;
  res.fbytes = res.abytes = free_bytes_;
  res.tfiles = 1'000'000;
  res.ffiles = res.afiles = 1'000'000 - nodes_.size();
  return res;
}

nfs3::FsinfoRes FakeOrigin::fsinfo_of(const nfs3::FileHandle& fh) {
  nfs3::FsinfoRes res;
  const Node* n = find(fh);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.obj_attributes = n->attr;
  res.rtmax = res.wtmax = 1u << 20;
  res.rtpref = res.wtpref = 1u << 16;
  res.rtmult = res.wtmult = 4096;
  res.dtpref = 32768;
  res.maxfilesize = ~0ull >> 1;
  res.time_delta = nfs3::Time{0, 1};
  res.properties = nfs3::fsf::Link | nfs3::fsf::Symlink | nfs3::fsf::Homogeneous | nfs3::fsf::CanSetTime;
  return res;
}

nfs3::PathconfRes FakeOrigin::pathconf_of(const nfs3::FileHandle& fh) {
  nfs3::PathconfRes res;
  const Node* n = find(fh);
  if (n == nullptr) {
    res.status = Status::Stale;
    return res;
  }
  res.obj_attributes = n->attr;
  res.linkmax = 32000;
  res.name_max = name_max_;
  res.no_trunc = true;
  res.chown_restricted = true;
  res.case_preserving = true;
  return res;
}

// ---- the Nfs3Program interface -----------------------------------------------------

Awaitable<void> FakeOrigin::null(const CallContext&) {
  {
    std::lock_guard lock(mu_);
    ++calls_[idx(Proc::Null)];
  }
  co_await gates_.pass(Proc::Null);
}

Awaitable<nfs3::GetattrRes> FakeOrigin::getattr(const CallContext& ctx, nfs3::GetattrArgs args) {
  note(ctx);
  return serve<nfs3::GetattrRes>(Proc::Getattr, [this, args] { return do_getattr(args); });
}

Awaitable<nfs3::SetattrRes> FakeOrigin::setattr(const CallContext& ctx, nfs3::SetattrArgs args) {
  note(ctx);
  return serve<nfs3::SetattrRes>(Proc::Setattr, [this, c = ctx.cred, args] { return do_setattr(c, args); });
}

Awaitable<nfs3::LookupRes> FakeOrigin::lookup(const CallContext& ctx, nfs3::LookupArgs args) {
  note(ctx);
  return serve<nfs3::LookupRes>(Proc::Lookup, [this, c = ctx.cred, args] { return do_lookup(c, args); });
}

Awaitable<nfs3::AccessRes> FakeOrigin::access(const CallContext& ctx, nfs3::AccessArgs args) {
  note(ctx);
  return serve<nfs3::AccessRes>(Proc::Access, [this, c = ctx.cred, args] { return do_access(c, args); });
}

Awaitable<nfs3::ReadlinkRes> FakeOrigin::readlink(const CallContext& ctx, nfs3::ReadlinkArgs args) {
  return serve<nfs3::ReadlinkRes>(Proc::Readlink, [this, c = ctx.cred, args] { return do_readlink(c, args); });
}

Awaitable<nfs3::ReadRes> FakeOrigin::read(const CallContext& ctx, nfs3::ReadArgs args) {
  return serve<nfs3::ReadRes>(Proc::Read, [this, c = ctx.cred, args] { return do_read(c, args); });
}

Awaitable<nfs3::WriteRes> FakeOrigin::write(const CallContext& ctx, nfs3::WriteArgs args) {
  return serve<nfs3::WriteRes>(Proc::Write,
                               [this, c = ctx.cred, args = std::move(args)] { return do_write(c, args); });
}

Awaitable<nfs3::CreateRes> FakeOrigin::create(const CallContext& ctx, nfs3::CreateArgs args) {
  return serve<nfs3::CreateRes>(Proc::Create, [this, c = ctx.cred, args] {
    if (args.mode == nfs3::CreateMode::Unchecked) {
      // An existing file is opened, not an error.
      const Node* dir = find(args.where.dir);
      if (dir != nullptr && dir->attr.type == FileType::Dir && may(c, dir->attr, W | X)) {
        if (auto it = dir->entries.find(args.where.name); it != dir->entries.end()) {
          nfs3::CreateRes res;
          res.obj = handle(it->second);
          res.obj_attributes = nodes_.at(it->second).attr;
          res.dir_wcc.before = wcc(dir->attr);
          res.dir_wcc.after = dir->attr;
          return res;
        }
      }
    }
    return make_child<nfs3::CreateRes>(c, args.where, FileType::Reg, args.obj_attributes.mode.value_or(0644),
                                       [](Node&) {});
  });
}

Awaitable<nfs3::MkdirRes> FakeOrigin::mkdir(const CallContext& ctx, nfs3::MkdirArgs args) {
  return serve<nfs3::MkdirRes>(Proc::Mkdir, [this, c = ctx.cred, args] {
    return make_child<nfs3::MkdirRes>(c, args.where, FileType::Dir, args.attributes.mode.value_or(0755),
                                      [](Node&) {});
  });
}

Awaitable<nfs3::SymlinkRes> FakeOrigin::symlink(const CallContext& ctx, nfs3::SymlinkArgs args) {
  return serve<nfs3::SymlinkRes>(Proc::Symlink, [this, c = ctx.cred, args] {
    return make_child<nfs3::SymlinkRes>(c, args.where, FileType::Lnk,
                                        args.symlink_attributes.mode.value_or(0777), [&](Node& n) {
                                          n.data = args.symlink_data;
                                          n.attr.size = n.attr.used = n.data.size();
                                        });
  });
}

Awaitable<nfs3::MknodRes> FakeOrigin::mknod(const CallContext& ctx, nfs3::MknodArgs args) {
  return serve<nfs3::MknodRes>(Proc::Mknod, [this, c = ctx.cred, args] {
    const bool dev = args.type == FileType::Chr || args.type == FileType::Blk;
    if (!dev && args.type != FileType::Sock && args.type != FileType::Fifo) {
      nfs3::MknodRes res;
      res.status = Status::BadType;
      return res;
    }
    const nfs3::Sattr& s = dev ? args.dev_attributes : args.pipe_attributes;
    return make_child<nfs3::MknodRes>(c, args.where, args.type, s.mode.value_or(0644), [&](Node& n) {
      if (dev) n.attr.rdev = args.spec;
    });
  });
}

Awaitable<nfs3::RemoveRes> FakeOrigin::remove(const CallContext& ctx, nfs3::RemoveArgs args) {
  return serve<nfs3::RemoveRes>(Proc::Remove, [this, c = ctx.cred, args] { return do_remove(c, args, false); });
}

Awaitable<nfs3::RmdirRes> FakeOrigin::rmdir(const CallContext& ctx, nfs3::RmdirArgs args) {
  return serve<nfs3::RmdirRes>(Proc::Rmdir, [this, c = ctx.cred, args] { return do_remove(c, args, true); });
}

Awaitable<nfs3::RenameRes> FakeOrigin::rename(const CallContext& ctx, nfs3::RenameArgs args) {
  return serve<nfs3::RenameRes>(Proc::Rename, [this, c = ctx.cred, args] { return do_rename(c, args); });
}

Awaitable<nfs3::LinkRes> FakeOrigin::link(const CallContext& ctx, nfs3::LinkArgs args) {
  return serve<nfs3::LinkRes>(Proc::Link, [this, c = ctx.cred, args] { return do_link(c, args); });
}

Awaitable<nfs3::ReaddirRes> FakeOrigin::readdir(const CallContext& ctx, nfs3::ReaddirArgs args) {
  return serve<nfs3::ReaddirRes>(Proc::Readdir, [this, c = ctx.cred, args] {
    nfs3::ReaddirplusArgs plus_args{args.dir, args.cookie, args.cookieverf, UINT32_MAX, args.count};
    nfs3::ReaddirplusRes plus = do_readdirplus(c, plus_args, false);
    nfs3::ReaddirRes res;
    res.status = plus.status;
    res.dir_attributes = plus.dir_attributes;
    res.cookieverf = plus.cookieverf;
    res.eof = plus.eof;
    for (auto& e : plus.entries) res.entries.push_back(nfs3::DirEntry{e.fileid, std::move(e.name), e.cookie});
    return res;
  });
}

Awaitable<nfs3::ReaddirplusRes> FakeOrigin::readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs args) {
  note(ctx);
  return serve<nfs3::ReaddirplusRes>(Proc::Readdirplus,
                                     [this, c = ctx.cred, args] { return do_readdirplus(c, args, true); });
}

Awaitable<nfs3::FsstatRes> FakeOrigin::fsstat(const CallContext&, nfs3::FsstatArgs args) {
  return serve<nfs3::FsstatRes>(Proc::Fsstat, [this, args] { return fsstat_of(args.fsroot); });
}

Awaitable<nfs3::FsinfoRes> FakeOrigin::fsinfo(const CallContext&, nfs3::FsinfoArgs args) {
  return serve<nfs3::FsinfoRes>(Proc::Fsinfo, [this, args] { return fsinfo_of(args.fsroot); });
}

Awaitable<nfs3::PathconfRes> FakeOrigin::pathconf(const CallContext&, nfs3::PathconfArgs args) {
  return serve<nfs3::PathconfRes>(Proc::Pathconf, [this, args] { return pathconf_of(args.object); });
}

Awaitable<nfs3::CommitRes> FakeOrigin::commit(const CallContext&, nfs3::CommitArgs args) {
  return serve<nfs3::CommitRes>(Proc::Commit, [this, args] {
    nfs3::CommitRes res;
    const Node* n = find(args.file);
    if (n == nullptr) {
      res.status = Status::Stale;
      return res;
    }
    res.file_wcc.before = wcc(n->attr);
    res.file_wcc.after = n->attr;
    return res;
  });
}

}  // namespace nfsgw::metacache::test
