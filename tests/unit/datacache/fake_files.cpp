#include "tests/unit/datacache/fake_files.h"

#include <algorithm>
#include <stdexcept>
#include <utility>


namespace nfsgw::datacache::test {

using nfs3::FileType;
using nfs3::Proc;
using nfs3::Status;

namespace {
std::size_t at(Proc p) { return static_cast<std::size_t>(p); }
}  // namespace

// ---- files ---------------------------------------------------------------------------

nfs3::FileHandle FakeFiles::add(FileType type, std::string data, std::uint32_t mode) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = next_fileid_++;
  Node n;
  n.attr.type = type;
  n.attr.mode = mode;
  n.attr.nlink = 1;
  n.attr.fsid = 0x5eed;
  n.attr.fileid = id;
  n.attr.atime = n.attr.mtime = n.attr.ctime = tick();
  n.attr.size = n.attr.used = data.size();
  n.data = std::move(data);
  nodes_.emplace(id, std::move(n));
  nfs3::FileHandle fh;
  fh.len = 12;
  std::copy_n(reinterpret_cast<const std::uint8_t*>(&id), sizeof id, fh.bytes.begin() + 4);
  fh.bytes[0] = 0xfa;
  return fh;
}

nfs3::FileHandle FakeFiles::add_file(std::string data, std::uint32_t mode) {
  return add(FileType::Reg, std::move(data), mode);
}
nfs3::FileHandle FakeFiles::add_dir() { return add(FileType::Dir, {}, 0755); }

FakeFiles::Node* FakeFiles::find(const nfs3::FileHandle& fh) {
  if (fh.len != 12) return nullptr;
  std::uint64_t id = 0;
  std::copy_n(fh.bytes.begin() + 4, sizeof id, reinterpret_cast<std::uint8_t*>(&id));
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second;
}
const FakeFiles::Node* FakeFiles::find(const nfs3::FileHandle& fh) const {
  return const_cast<FakeFiles*>(this)->find(fh);
}

void FakeFiles::changed(Node& n, std::size_t size) {
  ++changes_;
  n.data.resize(size);
  n.attr.size = n.attr.used = size;
  n.attr.mtime = n.attr.ctime = tick();
}

void FakeFiles::set_data(const nfs3::FileHandle& fh, std::string data) {
  std::lock_guard lock(mu_);
  Node* n = find(fh);
  if (n == nullptr) throw std::invalid_argument("FakeFiles::set_data: no such file");
  n->data = std::move(data);
  changed(*n, n->data.size());
}

void FakeFiles::restart(const nfs3::FileHandle& fh, std::string data) {
  std::lock_guard lock(mu_);
  Node* n = find(fh);
  if (n == nullptr) throw std::invalid_argument("FakeFiles::restart: no such file");
  n->data = std::move(data);
  ++verf_[0];
  ++changes_;
}

void FakeFiles::set_owner(const nfs3::FileHandle& fh, std::uint32_t uid) {
  std::lock_guard lock(mu_);
  Node* n = find(fh);
  if (n == nullptr) throw std::invalid_argument("FakeFiles::set_owner: no such file");
  n->attr.uid = uid;
  ++changes_;
}

nfs3::WriteVerf FakeFiles::verifier() const {
  std::lock_guard lock(mu_);
  return verf_;
}

std::string FakeFiles::data(const nfs3::FileHandle& fh) const {
  std::lock_guard lock(mu_);
  const Node* n = find(fh);
  if (n == nullptr) throw std::invalid_argument("FakeFiles::data: no such file");
  return n->data;
}

nfs3::Fattr FakeFiles::attributes(const nfs3::FileHandle& fh) const {
  std::lock_guard lock(mu_);
  const Node* n = find(fh);
  if (n == nullptr) throw std::invalid_argument("FakeFiles::attributes: no such file");
  return n->attr;
}

// ---- behaviour ---------------------------------------------------------------------

void FakeFiles::set_rtmax(std::uint32_t rtmax) {
  std::lock_guard lock(mu_);
  rtmax_ = rtmax;
}
void FakeFiles::set_short_reads(bool on) {
  std::lock_guard lock(mu_);
  short_reads_ = on;
}
void FakeFiles::refuse_read(std::uint32_t uid) {
  std::lock_guard lock(mu_);
  refused_.insert(uid);
  ++changes_;
}
void FakeFiles::refuse_modify(std::uint32_t uid) {
  std::lock_guard lock(mu_);
  refused_modify_.insert(uid);
  ++changes_;
}
void FakeFiles::answer_unstable(bool on) {
  std::lock_guard lock(mu_);
  answer_unstable_ = on;
}
nfs3::StableHow FakeFiles::last_write_stable() const {
  std::lock_guard lock(mu_);
  return last_write_stable_;
}
std::vector<Proc> FakeFiles::sequence() const {
  std::lock_guard lock(mu_);
  return sequence_;
}
void FakeFiles::fail(Proc p, std::size_t times, Status status, bool gateway_status) {
  std::lock_guard lock(mu_);
  failures_[at(p)] = {times, status, gateway_status};
}
void FakeFiles::newer_read_attrs(std::size_t times) {
  std::lock_guard lock(mu_);
  newer_read_attrs_ = times;
}
void FakeFiles::omit_wcc(bool on) {
  std::lock_guard lock(mu_);
  omit_wcc_ = on;
}
std::size_t FakeFiles::calls(Proc p) const {
  std::lock_guard lock(mu_);
  return calls_[at(p)];
}
std::uint64_t FakeFiles::bytes_read() const {
  std::lock_guard lock(mu_);
  return bytes_read_;
}
void FakeFiles::reset_calls() {
  std::lock_guard lock(mu_);
  calls_.fill(0);
  bytes_read_ = 0;
  sequence_.clear();
}

// ---- serving -----------------------------------------------------------------------

template <typename Res, typename Compute>
Awaitable<Res> FakeFiles::serve(Proc p, Compute compute) {
  Res res;
  {
    std::lock_guard lock(mu_);
    ++calls_[at(p)];
    sequence_.push_back(p);
    Failure& f = failures_[at(p)];
    if (f.times > 0) {
      --f.times;
      res.status = f.status;
      res.gateway_status = f.gateway_status;
    } else {
      res = compute();
    }
  }
  co_await gates_.pass(p);
  co_return res;
}

template <typename Res>
Awaitable<Res> FakeFiles::unsupported(Proc p) {
  auto compute = [] {
    Res r;
    r.status = Status::NotSupp;
    return r;
  };
  co_return co_await serve<Res>(p, compute);
}

nfs3::WccData FakeFiles::wcc(const nfs3::Fattr& before, const nfs3::Fattr& after) const {
  nfs3::WccData w;
  if (!omit_wcc_) w.before = nfs3::WccAttr{before.size, before.mtime, before.ctime};
  w.after = after;
  return w;
}

nfs3::AccessRes FakeFiles::do_access(const Credentials& c, const nfs3::AccessArgs& a) {
  nfs3::AccessRes res;
  const Node* n = node_or_stale(a.object, res);
  if (n == nullptr) return res;
  res.obj_attributes = n->attr;
  res.access = a.access;
  if (refused_.count(c.uid)) res.access &= ~nfs3::access::Read;
  if (refused_modify_.count(c.uid)) res.access &= ~(nfs3::access::Modify | nfs3::access::Extend);
  return res;
}

nfs3::ReadRes FakeFiles::do_read(const Credentials& c, const nfs3::ReadArgs& a) {
  nfs3::ReadRes res;
  const Node* n = node_or_stale(a.file, res);
  if (n == nullptr) return res;
  res.file_attributes = n->attr;
  if (newer_read_attrs_ > 0) {
    --newer_read_attrs_;
    res.file_attributes->ctime.seconds += 1;
  }
  if (n->attr.type != FileType::Reg) {
    res.status = Status::IsDir;
  } else if (refused_.count(c.uid)) {
    res.status = Status::Acces;
  } else {
    std::uint64_t count = std::min(a.count, rtmax_);  // as servers do
    if (short_reads_ && count > 1) count /= 2;
    const std::uint64_t from = std::min<std::uint64_t>(a.offset, n->data.size());
    const std::uint64_t len = std::min<std::uint64_t>(count, n->data.size() - from);
    res.data.assign(n->data.begin() + static_cast<std::ptrdiff_t>(from),
                    n->data.begin() + static_cast<std::ptrdiff_t>(from + len));
    res.count = static_cast<std::uint32_t>(len);
    res.eof = from + len == n->data.size();
    bytes_read_ += len;
  }
  return res;
}

nfs3::WriteRes FakeFiles::do_write(const nfs3::WriteArgs& a) {
  nfs3::WriteRes res;
  Node* n = node_or_stale(a.file, res);
  if (n == nullptr) return res;
  const nfs3::Fattr before = n->attr;
  const std::size_t end = a.offset + a.data.size();
  changed(*n, std::max(n->data.size(), end));
  std::copy(a.data.begin(), a.data.end(), n->data.begin() + static_cast<std::ptrdiff_t>(a.offset));
  res.file_wcc = wcc(before, n->attr);
  res.count = static_cast<std::uint32_t>(a.data.size());
  res.committed = answer_unstable_ ? nfs3::StableHow::Unstable : a.stable;
  last_write_stable_ = a.stable;
  res.verf = verf_;
  return res;
}

nfs3::SetattrRes FakeFiles::do_setattr(const nfs3::SetattrArgs& a) {
  nfs3::SetattrRes res;
  Node* n = node_or_stale(a.object, res);
  if (n == nullptr) return res;
  const nfs3::Fattr before = n->attr;
  if (a.new_attributes.mode) n->attr.mode = *a.new_attributes.mode;
  changed(*n, a.new_attributes.size ? *a.new_attributes.size : n->data.size());
  if (!a.new_attributes.size) n->attr.mtime = before.mtime;  // only ctime moves
  auto set_time = [&](const nfs3::SetTime& t, nfs3::Time& to) {
    if (t.how == nfs3::TimeHow::ClientTime) to = t.time;
    if (t.how == nfs3::TimeHow::ServerTime) to = n->attr.ctime;
  };
  set_time(a.new_attributes.atime, n->attr.atime);
  set_time(a.new_attributes.mtime, n->attr.mtime);
  res.obj_wcc = wcc(before, n->attr);
  return res;
}

// ---- the procedures ------------------------------------------------------------------

Awaitable<void> FakeFiles::null(const CallContext&) {
  std::lock_guard lock(mu_);
  ++calls_[at(Proc::Null)];
  co_return;
}

Awaitable<nfs3::GetattrRes> FakeFiles::getattr(const CallContext&, nfs3::GetattrArgs args) {
  auto compute = [&] {
    nfs3::GetattrRes r;
    if (const Node* n = find(args.object)) {
      r.attributes = n->attr;
    } else {
      r.status = Status::Stale;
    }
    return r;
  };
  co_return co_await serve<nfs3::GetattrRes>(Proc::Getattr, compute);
}

Now<nfs3::GetattrRes> FakeFiles::getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) {
  if (!answer_steps_) return {};
  std::lock_guard lock(mu_);
  const Node* n = find(args.object);
  if (n == nullptr) return {};
  auto now = Now<nfs3::GetattrRes>::for_call(ctx);
  now.res.emplace().attributes = n->attr;
  now.basis.count(step_answers_);
  now.basis.rests_on({&changes_, changes_.load()});
  now.basis.vouch();
  return now;
}

Now<nfs3::AccessRes> FakeFiles::access_now(const CallContext& ctx, const nfs3::AccessArgs& args) {
  if (!answer_steps_) return {};
  std::lock_guard lock(mu_);
  if (find(args.object) == nullptr) return {};
  auto now = Now<nfs3::AccessRes>::for_call(ctx);
  now.res = do_access(ctx.cred, args);
  now.basis.count(step_answers_);
  now.basis.rests_on({&changes_, changes_.load()});
  now.basis.vouch();
  return now;
}

Awaitable<nfs3::SetattrRes> FakeFiles::setattr(const CallContext&, nfs3::SetattrArgs args) {
  auto compute = [&] { return do_setattr(args); };
  co_return co_await serve<nfs3::SetattrRes>(Proc::Setattr, compute);
}

Awaitable<nfs3::AccessRes> FakeFiles::access(const CallContext& ctx, nfs3::AccessArgs args) {
  auto compute = [&] { return do_access(ctx.cred, args); };
  co_return co_await serve<nfs3::AccessRes>(Proc::Access, compute);
}

Awaitable<nfs3::ReadRes> FakeFiles::read(const CallContext& ctx, nfs3::ReadArgs args) {
  auto compute = [&] { return do_read(ctx.cred, args); };
  co_return co_await serve<nfs3::ReadRes>(Proc::Read, compute);
}

Awaitable<nfs3::WriteRes> FakeFiles::write(const CallContext&, nfs3::WriteArgs args) {
  auto compute = [&] { return do_write(args); };
  co_return co_await serve<nfs3::WriteRes>(Proc::Write, compute);
}

Awaitable<nfs3::FsinfoRes> FakeFiles::fsinfo(const CallContext&, nfs3::FsinfoArgs) {
  auto compute = [&] {
    nfs3::FsinfoRes r;
    r.rtmax = r.rtpref = rtmax_;
    r.wtmax = r.wtpref = 1u << 20;
    return r;
  };
  co_return co_await serve<nfs3::FsinfoRes>(Proc::Fsinfo, compute);
}

Awaitable<nfs3::CommitRes> FakeFiles::commit(const CallContext&, nfs3::CommitArgs args) {
  auto compute = [&] {
    nfs3::CommitRes r;
    if (const Node* n = find(args.file)) {
      r.file_wcc = wcc(n->attr, n->attr);
      r.verf = verf_;
    } else {
      r.status = Status::Stale;
    }
    return r;
  };
  co_return co_await serve<nfs3::CommitRes>(Proc::Commit, compute);
}

Awaitable<nfs3::LookupRes> FakeFiles::lookup(const CallContext&, nfs3::LookupArgs) {
  return unsupported<nfs3::LookupRes>(Proc::Lookup);
}
Awaitable<nfs3::ReadlinkRes> FakeFiles::readlink(const CallContext&, nfs3::ReadlinkArgs) {
  return unsupported<nfs3::ReadlinkRes>(Proc::Readlink);
}
Awaitable<nfs3::CreateRes> FakeFiles::create(const CallContext&, nfs3::CreateArgs) {
  return unsupported<nfs3::CreateRes>(Proc::Create);
}
Awaitable<nfs3::MkdirRes> FakeFiles::mkdir(const CallContext&, nfs3::MkdirArgs) {
  return unsupported<nfs3::MkdirRes>(Proc::Mkdir);
}
Awaitable<nfs3::SymlinkRes> FakeFiles::symlink(const CallContext&, nfs3::SymlinkArgs) {
  return unsupported<nfs3::SymlinkRes>(Proc::Symlink);
}
Awaitable<nfs3::MknodRes> FakeFiles::mknod(const CallContext&, nfs3::MknodArgs) {
  return unsupported<nfs3::MknodRes>(Proc::Mknod);
}
void FakeFiles::unlink_on_remove(const nfs3::FileHandle& fh) {
  std::lock_guard lock(mu_);
  unlink_on_remove_ = fh;
}

Awaitable<nfs3::RemoveRes> FakeFiles::remove(const CallContext&, nfs3::RemoveArgs) {
  auto compute = [&] {
    nfs3::RemoveRes r;
    if (!unlink_on_remove_) {
      r.status = Status::NotSupp;
      return r;
    }
    const nfs3::FileHandle fh = *std::exchange(unlink_on_remove_, std::nullopt);
    if (Node* n = node_or_stale(fh, r)) {
      if (--n->attr.nlink == 0) nodes_.erase(n->attr.fileid);
      else n->attr.ctime = tick();
    }
    return r;
  };
  co_return co_await serve<nfs3::RemoveRes>(Proc::Remove, compute);
}
Awaitable<nfs3::RmdirRes> FakeFiles::rmdir(const CallContext&, nfs3::RmdirArgs) {
  return unsupported<nfs3::RmdirRes>(Proc::Rmdir);
}
Awaitable<nfs3::RenameRes> FakeFiles::rename(const CallContext&, nfs3::RenameArgs) {
  return unsupported<nfs3::RenameRes>(Proc::Rename);
}
Awaitable<nfs3::LinkRes> FakeFiles::link(const CallContext&, nfs3::LinkArgs args) {
  auto compute = [&] {
    nfs3::LinkRes r;
    if (Node* n = node_or_stale(args.file, r)) {
      ++n->attr.nlink;
      n->attr.ctime = tick();
      r.file_attributes = n->attr;
    }
    return r;
  };
  co_return co_await serve<nfs3::LinkRes>(Proc::Link, compute);
}
Awaitable<nfs3::ReaddirRes> FakeFiles::readdir(const CallContext&, nfs3::ReaddirArgs) {
  return unsupported<nfs3::ReaddirRes>(Proc::Readdir);
}
Awaitable<nfs3::ReaddirplusRes> FakeFiles::readdirplus(const CallContext&, nfs3::ReaddirplusArgs) {
  return unsupported<nfs3::ReaddirplusRes>(Proc::Readdirplus);
}
Awaitable<nfs3::FsstatRes> FakeFiles::fsstat(const CallContext&, nfs3::FsstatArgs) {
  return unsupported<nfs3::FsstatRes>(Proc::Fsstat);
}
Awaitable<nfs3::PathconfRes> FakeFiles::pathconf(const CallContext&, nfs3::PathconfArgs) {
  return unsupported<nfs3::PathconfRes>(Proc::Pathconf);
}

}  // namespace nfsgw::datacache::test
