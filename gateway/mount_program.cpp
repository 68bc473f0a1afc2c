#include "gateway/mount_program.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace nfsgw {
namespace {

constexpr std::uint32_t kAuthSys = 1;
constexpr std::uint32_t kAuthNone = 0;

/// "/export/" and "/export" name the same export.
std::string normalize(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    const std::size_t j = path.find('/', i);
    const std::size_t end = j == std::string::npos ? path.size() : j;
    if (end > i) out.push_back(path.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

mount3::Status mount_status(nfs3::Status s) {
  switch (s) {
    case nfs3::Status::NoEnt: return mount3::Status::NoEnt;
    case nfs3::Status::Acces: return mount3::Status::Acces;
    case nfs3::Status::Perm: return mount3::Status::Perm;
    case nfs3::Status::NotDir: return mount3::Status::NotDir;
    case nfs3::Status::NameTooLong: return mount3::Status::NameTooLong;
    case nfs3::Status::Inval: return mount3::Status::Inval;
    default: return mount3::Status::ServerFault;
  }
}

}  // namespace

MountProgram::MountProgram(const std::vector<config::ExportConfig>& exports,
                           cache::HandleCodec& handles, Nfs3Program& nfs, std::size_t max_mounts)
    : exports_(&exports), handles_(handles), nfs_(nfs), max_mounts_(std::max<std::size_t>(1, max_mounts)) {}

void MountProgram::update(const std::vector<config::ExportConfig>& exports) {
  exports_.store(&exports, std::memory_order_release);
}

const config::ExportConfig* MountProgram::find(const std::vector<config::ExportConfig>& exports,
                                               const std::string& dirpath, std::vector<std::string>& rest) const {
  const std::vector<std::string> want = components(dirpath);
  const config::ExportConfig* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& e : exports) {
    const std::vector<std::string> have = components(e.path);
    if (have.size() > want.size() || (best && have.size() <= best_len)) continue;
    if (std::equal(have.begin(), have.end(), want.begin())) {
      best = &e;
      best_len = have.size();
    }
  }
  if (best) rest.assign(want.begin() + static_cast<std::ptrdiff_t>(best_len), want.end());
  return best;
}

Awaitable<mount3::MntRes> MountProgram::mnt(const CallContext& ctx, const mount3::MntArgs& args) {
  const std::string& client = ctx.client_address;
  mount3::MntRes res;
  std::vector<std::string> rest;
  const config::ExportConfig* e = find(current(), args.dirpath, rest);
  if (!e) {
    spdlog::info("MNT {} from {}: no such export", args.dirpath, client);
    res.status = mount3::Status::NoEnt;
    co_return res;
  }
  if (!e->allows(client)) {
    spdlog::warn("MNT {} from {}: client not allowed by export clients", args.dirpath, client);
    res.status = mount3::Status::Acces;
    co_return res;
  }
  nfs3::FileHandle fh = handles_.root(e->id);
  // A folder below the export: walk to it with the caller's credentials, so the
  // origin's permissions apply as they would to the same walk over NFS.
  for (const auto& name : rest) {
    if (name == ".." || name == ".") {
      res.status = mount3::Status::Inval;
      co_return res;
    }
    CallContext lookup_ctx = ctx;
    lookup_ctx.proc_flags = 0;
    nfs3::LookupArgs la;
    la.what.dir = fh;
    la.what.name = name;
    const nfs3::LookupRes lr = co_await nfs_.lookup(lookup_ctx, std::move(la));
    if (lr.status != nfs3::Status::Ok) {
      spdlog::info("MNT {} from {}: {} at '{}'", args.dirpath, client,
                   nfs3::status_name(lr.status), name);
      res.status = mount_status(lr.status);
      co_return res;
    }
    if (lr.obj_attributes && lr.obj_attributes->type != nfs3::FileType::Dir) {
      res.status = mount3::Status::NotDir;
      co_return res;
    }
    fh = lr.object;
  }
  res.fhandle = fh;
  res.auth_flavors = {kAuthSys, kAuthNone};
  {
    std::lock_guard lock(mu_);
    const std::string dir = normalize(args.dirpath);
    // The newest last: a mount made again moves to the end, the oldest goes first.
    std::erase_if(mounts_, [&](const Mount& m) { return m.entry.hostname == client && m.entry.directory == dir; });
    mounts_.push_back(Mount{{client, dir}, e->id});
    while (mounts_.size() > max_mounts_) mounts_.pop_front();
  }
  spdlog::info("MNT {} from {}", args.dirpath, client);
  co_return res;
}

mount3::DumpRes MountProgram::dump(const std::string& client) {
  mount3::DumpRes res;
  const auto& exports = current();
  std::lock_guard lock(mu_);
  for (const auto& m : mounts_) {
    // A removed export's mounts are not listed; its settings now, not at MNT.
    const auto e = std::find_if(exports.begin(), exports.end(),
                                [&](const config::ExportConfig& x) { return x.id == m.export_id; });
    if (e != exports.end() && e->allows(client)) res.push_back(m.entry);
  }
  return res;
}

void MountProgram::umnt(const std::string& client, const mount3::UmntArgs& args) {
  const std::string dir = normalize(args.dirpath);
  std::lock_guard lock(mu_);
  std::erase_if(mounts_, [&](const Mount& m) {
    return m.entry.hostname == client && normalize(m.entry.directory) == dir;
  });
}

void MountProgram::umntall(const std::string& client) {
  std::lock_guard lock(mu_);
  std::erase_if(mounts_, [&](const Mount& m) { return m.entry.hostname == client; });
}

mount3::ExportRes MountProgram::exports(const std::string& client) const {
  mount3::ExportRes res;
  for (const auto& e : current()) {
    if (!e.allows(client)) continue;  // no one learns of exports they may not mount
    mount3::ExportEntry entry{e.path, {}};
    for (const auto& c : e.clients) entry.groups.push_back(c.text);
    res.push_back(std::move(entry));
  }
  return res;
}

}  // namespace nfsgw
