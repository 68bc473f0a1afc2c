#include "gateway/translator/handle_translator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <type_traits>

#include "gateway/translator/export_policy.h"
#include "gateway/made_up.h"
#include "gateway/translator/name_rules.h"
#include "gateway/translator/reply_fit.h"

namespace nfsgw {

using nfs3::FileHandle;
using nfs3::Status;

struct HandleTranslator::Route {
  using Identity = std::pair<std::uint64_t, std::uint64_t>;  // (fsid, fileid)
  /// Its downstream and origin_root; `e.config` is the settings it was created
  /// with, not used for calls (the table holds the current ones).
  ExportRoute e;
  std::uint32_t id = 0;
  std::mutex mu;                        // guards root_storage and identity_storage
  std::unique_ptr<FileHandle> root_storage;
  std::atomic<const FileHandle*> root{nullptr};  // root_storage once known, never changed
  /// The root's fsid and fileid, from the first GETATTR of the root: whatever
  /// handle the origin gives for the root, these name it.
  std::unique_ptr<Identity> identity_storage;
  std::atomic<const Identity*> identity{nullptr};
};

namespace {

/// A status the translator answers itself (BADHANDLE, STALE, ACCES, ROFS, XDEV,
/// SERVERFAULT): never the origin's.
template <typename Res>
Res failure(Status s) {
  return made_up<Res>(s);
}

}  // namespace

/// One generation of the exports: each export's route and its settings.
struct HandleTranslator::Table {
  struct Entry {
    Route* route = nullptr;
    const config::ExportConfig* config = nullptr;
  };
  std::unordered_map<std::uint32_t, Entry> by_id;
};

HandleTranslator::HandleTranslator(cache::HandleCodec& codec,
                                   const std::vector<ExportRoute>& routes,
                                   std::uint32_t max_transfer)
    : codec_(codec), max_transfer_(max_transfer) {
  update(routes);
}

void HandleTranslator::update(const std::vector<ExportRoute>& routes) {
  std::lock_guard lock(update_mu_);
  auto table = std::make_unique<Table>();
  for (const auto& r : routes) {
    Route* route = nullptr;
    for (const auto& old : all_routes_)
      if (old->id == r.config->id && old->e.downstream == r.downstream) route = old.get();
    if (!route) {
      auto fresh = std::make_unique<Route>();
      fresh->e = r;
      fresh->id = r.config->id;
      route = all_routes_.emplace_back(std::move(fresh)).get();
    }
    table->by_id[r.config->id] = Table::Entry{route, r.config};
  }
  table_.store(table.get(), std::memory_order_release);
  tables_.push_back(std::move(table));
}

HandleTranslator::~HandleTranslator() = default;

const FileHandle* HandleTranslator::known_root(const Route& route) {
  return route.root.load(std::memory_order_acquire);
}

Awaitable<FileHandle> HandleTranslator::origin_root(Route& route) {
  if (const FileHandle* known = known_root(route)) co_return *known;
  FileHandle root = co_await route.e.origin_root();
  std::lock_guard lock(route.mu);
  if (!route.root_storage) {
    route.root_storage = std::make_unique<FileHandle>(root);
    route.root.store(route.root_storage.get(), std::memory_order_release);
  }
  co_return *route.root_storage;
}

/// Unwraps a handle; a failing handle store (a disk error, not a bad handle) is a
/// server fault for this call, not a crash.
std::optional<cache::HandleCodec::Decoded> HandleTranslator::unwrap(const CallContext& ctx,
                                                                    const FileHandle& handle,
                                                                    Status& failure) const {
  try {
    auto decoded = codec_.unwrap(handle);
    if (!decoded) failure = Status::BadHandle;
    return decoded;
  } catch (const std::exception& e) {
    spdlog::error("{}: handle store failed: {}", ctx.client_address, e.what());
    failure = Status::ServerFault;
    return std::nullopt;
  }
}

Status HandleTranslator::enter(const CallContext& ctx, FileHandle& handle, Scope& scope) {
  Status failure = Status::Ok;
  const auto decoded = unwrap(ctx, handle, failure);
  if (!decoded) {
    std::uint64_t dropped = 0;
    if (failure == Status::BadHandle && bad_handle_log_.allow(dropped)) {
      spdlog::warn("{}: refused a forged or damaged file handle (xid {:#x}){}", ctx.client_address, ctx.xid,
                   dropped == 0 ? std::string() : fmt::format("; {} more not logged", dropped));
    }
    return failure;
  }
  const Table& table = *table_.load(std::memory_order_acquire);
  const auto it = table.by_id.find(decoded->export_id);
  if (it == table.by_id.end()) return Status::Stale;  // the export was removed
  Route& route = *it->second.route;
  const config::ExportConfig& cfg = *it->second.config;
  if (const Status s = admit(ctx, cfg); s != Status::Ok) return s;

  scope.route = &route;
  scope.config = &cfg;
  scope.ctx = ctx;
  scope.ctx.export_id = cfg.id;
  scope.ctx.cred = squash(ctx.cred, cfg);
  scope.root_handle = decoded->kind == cache::HandleCodec::Kind::Root;
  scope.delta_pending = decoded->kind == cache::HandleCodec::Kind::Delta;
  if (!scope.root_handle) handle = scope.delta_pending ? decoded->delta : decoded->origin;
  // Known after the first call of the export; needed to keep ".." and the root's
  // handle inside the export whatever handle the call came with, and to resolve a
  // Delta handle (its origin handle is written against the root's).
  const FileHandle* root = known_root(route);
  if (!root) {
    scope.root_pending = true;
    return Status::Ok;
  }
  scope.origin_root = *root;
  return resolve_first(scope, handle);
}

Status HandleTranslator::resolve_first(Scope& scope, FileHandle& handle) {
  if (scope.root_handle) handle = scope.origin_root;
  if (scope.delta_pending) {
    scope.delta_pending = false;
    auto origin = cache::HandleCodec::resolve_delta(handle, scope.origin_root);
    // Genuine (its MAC held) but written against another root handle: the origin's
    // root changed since, so the handle is stale.
    if (!origin) return Status::Stale;
    handle = *origin;
  }
  scope.at_root = handle == scope.origin_root;
  return Status::Ok;
}

Awaitable<Status> HandleTranslator::finish_enter(Scope& scope, FileHandle& handle) {
  scope.origin_root = co_await origin_root(*scope.route);
  scope.root_pending = false;
  co_return resolve_first(scope, handle);
}

Awaitable<HandleTranslator::CheckedHandle> HandleTranslator::check_handle(const CallContext& ctx,
                                                                          FileHandle handle) {
  CheckedHandle out;
  CallContext plain = ctx;
  plain.proc_flags = 0;  // what the handle is used for is the caller's business
  Scope scope;
  out.status = enter(plain, handle, scope);
  if (out.status == Status::Ok && scope.root_pending) out.status = co_await finish_enter(scope, handle);
  if (out.status != Status::Ok) co_return out;
  out.export_id = scope.config->id;
  out.origin = handle;
  out.cred = scope.ctx.cred;
  co_return out;
}

Status HandleTranslator::enter_also(const Scope& scope, FileHandle& handle) {
  Status failure = Status::Ok;
  const auto decoded = unwrap(scope.ctx, handle, failure);
  if (!decoded) return failure;
  if (decoded->export_id != scope.route->id) return Status::XDev;
  switch (decoded->kind) {
    case cache::HandleCodec::Kind::Root:
      handle = scope.origin_root;
      return Status::Ok;
    case cache::HandleCodec::Kind::Delta:
      if (auto origin = cache::HandleCodec::resolve_delta(decoded->delta, scope.origin_root)) {
        handle = *origin;
        return Status::Ok;
      }
      return Status::Stale;
    default:
      handle = decoded->origin;
      return Status::Ok;
  }
}

FileHandle HandleTranslator::outward(const Scope& scope, const FileHandle& origin) {
  const std::uint32_t id = scope.route->id;
  if (origin == scope.origin_root) return codec_.root(id);
  return codec_.wrap(id, origin, &scope.origin_root);
}

namespace {
bool same_object(const nfs3::Fattr& a, const std::pair<std::uint64_t, std::uint64_t>& id) {
  return a.fsid == id.first && a.fileid == id.second;
}
}  // namespace

FileHandle HandleTranslator::outward(const Scope& scope, const FileHandle& origin,
                                     const nfs3::PostOpAttr& attrs) {
  // Another encoding of the root's handle still comes back as the gateway's root.
  if (attrs && !(origin == scope.origin_root)) {
    if (const auto id = root_identity(*scope.route); id && same_object(*attrs, *id))
      return codec_.root(scope.route->id);
  }
  return outward(scope, origin);
}

void HandleTranslator::learn_root(Route& route, const nfs3::Fattr& attr) {
  if (route.identity.load(std::memory_order_acquire)) return;
  std::lock_guard lock(route.mu);
  if (route.identity_storage) return;
  route.identity_storage = std::make_unique<Route::Identity>(attr.fsid, attr.fileid);
  route.identity.store(route.identity_storage.get(), std::memory_order_release);
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> HandleTranslator::root_identity(const Route& route) {
  if (const Route::Identity* id = route.identity.load(std::memory_order_acquire)) return *id;
  return std::nullopt;
}

Awaitable<std::pair<std::uint64_t, std::uint64_t>> HandleTranslator::ask_root_identity(const Scope& scope) {
  if (const auto id = root_identity(*scope.route)) co_return *id;
  CallContext ctx = scope.ctx;
  ctx.proc_flags = 0;
  nfs3::GetattrArgs ga{scope.origin_root};
  const nfs3::GetattrRes r = co_await scope.route->e.downstream->getattr(ctx, std::move(ga));
  // The root cannot be told apart: keep the call inside (the caller's choice).
  if (r.status != Status::Ok) throw std::runtime_error("GETATTR of the export root failed");
  learn_root(*scope.route, r.attributes);
  co_return Route::Identity{r.attributes.fsid, r.attributes.fileid};
}

Awaitable<bool> HandleTranslator::is_root(const Scope& scope, const FileHandle& dir,
                                          const nfs3::PostOpAttr& attrs) {
  const Route::Identity id = co_await ask_root_identity(scope);
  if (attrs) co_return same_object(*attrs, id);
  CallContext ctx = scope.ctx;
  ctx.proc_flags = 0;
  nfs3::GetattrArgs ga{dir};
  const nfs3::GetattrRes r = co_await scope.route->e.downstream->getattr(ctx, std::move(ga));
  if (r.status != Status::Ok) throw std::runtime_error("GETATTR of the directory failed");
  co_return same_object(r.attributes, id);
}

template <typename Res>
Awaitable<bool> HandleTranslator::keep_dotdot_inside(const Scope& scope, const FileHandle& dir, Res& res) {
  // The origin lists the parent of the export's folder as ".." of the root: with an
  // export of a subfolder that is a directory outside the export, whose fileid (and
  // in READDIRPLUS handle and attributes) must not reach the client.
  const auto dotdot = std::find_if(res.entries.begin(), res.entries.end(),
                                   [](const auto& e) { return e.name == ".."; });
  if (dotdot == res.entries.end()) co_return false;
  bool known_root = scope.at_root;
  if (!known_root) {
    try {
      const bool root = co_await is_root(scope, dir, res.dir_attributes);
      if (!root) co_return false;  // a parent inside the export
      known_root = true;
    } catch (const std::exception&) {
      // Cannot be told apart: kept inside, as LOOKUP ".." is.
    }
  }
  // The listed directory's own identity: the root's (or, when that could not be
  // told, its own, which is inside the export as well).
  std::optional<std::uint64_t> fileid;
  if (res.dir_attributes) {
    fileid = res.dir_attributes->fileid;
  } else {
    try {
      const Route::Identity id = co_await ask_root_identity(scope);
      fileid = id.second;
    } catch (const std::exception&) {
    }
  }
  if (!fileid) {
    res.entries.erase(dotdot);
    co_return false;
  }
  dotdot->fileid = *fileid;
  if constexpr (std::is_same_v<Res, nfs3::ReaddirplusRes>) {
    // The root's gateway handle and the attributes of this very reply; nothing
    // when the directory is not known to be the root (the client asks LOOKUP "..").
    dotdot->name_handle.reset();
    dotdot->name_attributes.reset();
    if (known_root) {
      dotdot->name_handle = codec_.root(scope.route->id);
      dotdot->name_attributes = res.dir_attributes;
    }
  }
  co_return true;
}

std::optional<bool> HandleTranslator::is_root_now(const Scope& scope, const FileHandle& dir) {
  const auto id = root_identity(*scope.route);
  if (!id) return std::nullopt;
  CallContext ctx = scope.ctx;
  ctx.proc_flags = 0;
  const auto r = scope.route->e.downstream->getattr_now(ctx, nfs3::GetattrArgs{dir});
  if (!r || r.res->status != Status::Ok) return std::nullopt;
  return same_object(r.res->attributes, *id);
}

void HandleTranslator::outward(const Scope& scope, nfs3::PostOpFh& fh) {
  if (fh) *fh = outward(scope, *fh);
}

template <typename Res, typename Args>
Awaitable<Res> HandleTranslator::forward(
    const CallContext& ctx, Args args, FileHandle Args::*handle,
    Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args)) {
  Scope scope;
  Status s = enter(ctx, args.*handle, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.*handle);
  if (s != Status::Ok) co_return failure<Res>(s);
  co_return co_await (scope.route->e.downstream->*method)(scope.ctx, std::move(args));
}

Awaitable<void> HandleTranslator::null(const CallContext&) { co_return; }

Awaitable<nfs3::GetattrRes> HandleTranslator::getattr(const CallContext& ctx,
                                                      nfs3::GetattrArgs a) {
  nfs3::GetattrArgs args = std::move(a);
  Scope scope;
  Status s = enter(ctx, args.object, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.object);
  if (s != Status::Ok) co_return failure<nfs3::GetattrRes>(s);
  nfs3::GetattrRes res = co_await scope.route->e.downstream->getattr(scope.ctx, std::move(args));
  if (scope.at_root && res.status == Status::Ok) learn_root(*scope.route, res.attributes);
  co_return res;
}

Awaitable<nfs3::SetattrRes> HandleTranslator::setattr(const CallContext& ctx,
                                                      nfs3::SetattrArgs a) {
  return forward(ctx, std::move(a), &nfs3::SetattrArgs::object, &Nfs3Program::setattr);
}

Awaitable<nfs3::LookupRes> HandleTranslator::lookup(const CallContext& ctx,
                                                    nfs3::LookupArgs a) {
  nfs3::LookupArgs args = std::move(a);
  Scope scope;
  Status s = enter(ctx, args.what.dir, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.what.dir);
  if (s == Status::Ok) s = check_name(NameUse::Lookup, args.what.name);
  if (s != Status::Ok) co_return failure<nfs3::LookupRes>(s);
  if (args.what.name == ".." && !scope.at_root) {
    // Another encoding of the root's handle, or a root whose bytes are not known to
    // be the root's: its fsid and fileid tell.
    bool root = true;  // kept inside when the root cannot be told apart
    const nfs3::PostOpAttr unknown;
    try {
      root = co_await is_root(scope, args.what.dir, unknown);
    } catch (const std::exception& e) {
      // Debug only: any client holding a stale handle gets here.
      spdlog::debug("{}: LOOKUP .. kept at the export root: {}", ctx.client_address, e.what());
    }
    scope.at_root = root;
  }
  stay_inside(scope, args);
  nfs3::LookupRes res = co_await scope.route->e.downstream->lookup(scope.ctx, std::move(args));
  if (res.status == Status::Ok) res.object = outward(scope, res.object, res.obj_attributes);
  co_return res;
}

void HandleTranslator::stay_inside(const Scope& scope, nfs3::LookupArgs& args) {
  // Clients may not climb out of an export: ".." of its root is the root itself.
  if (scope.at_root && args.what.name == "..") args.what.name = ".";
}

void HandleTranslator::mask_read_only(const Scope& scope, nfs3::AccessRes& res) {
  // On a read-only export nothing may be changed, whatever the origin allows.
  if (scope.config->access == config::Access::ReadOnly)
    res.access &= ~(nfs3::access::Modify | nfs3::access::Extend | nfs3::access::Delete);
}

// ---- answers without waiting (nfs3_program.h) -----------------------------------
// The same steps as the coroutines, for a layer below that can answer at once. An
// export whose root is not known yet waits for it: the coroutine's work.

template <typename Res, typename Args, typename Handle, typename Then>
Now<Res> HandleTranslator::answer_now(const CallContext& ctx, const Args& a, Handle handle_of, Then then) {
  Args args = a;
  Scope scope;
  const Status s = enter(ctx, handle_of(args), scope);
  if (scope.root_pending) return {};
  // A refusal of the translator's own rests on no record: it goes with a basis
  // nobody vouched for, and is never kept.
  if (s != Status::Ok) return {failure<Res>(s), {}};
  return then(scope, args);
}

Now<nfs3::GetattrRes> HandleTranslator::getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& a) {
  return answer_now<nfs3::GetattrRes>(
      ctx, a, [](nfs3::GetattrArgs& x) -> FileHandle& { return x.object; },
      [](Scope& scope, const nfs3::GetattrArgs& args) {
        auto now = scope.route->e.downstream->getattr_now(scope.ctx, args);
        if (now && scope.at_root && now.res->status == Status::Ok) learn_root(*scope.route, now.res->attributes);
        return now;
      });
}

Now<nfs3::LookupRes> HandleTranslator::lookup_now(const CallContext& ctx, const nfs3::LookupArgs& a) {
  return answer_now<nfs3::LookupRes>(
      ctx, a, [](nfs3::LookupArgs& x) -> FileHandle& { return x.what.dir; },
      [this](Scope& scope, nfs3::LookupArgs& args) -> Now<nfs3::LookupRes> {
        if (const Status s = check_name(NameUse::Lookup, args.what.name); s != Status::Ok)
          return {failure<nfs3::LookupRes>(s), {}};
        const bool dotdot = args.what.name == "..";
        if (dotdot && !scope.at_root) {
          const std::optional<bool> root = is_root_now(scope, args.what.dir);
          if (!root) return {};  // the coroutine finds out
          scope.at_root = *root;
        }
        stay_inside(scope, args);
        auto now = scope.route->e.downstream->lookup_now(scope.ctx, args);
        if (now && now.res->status == Status::Ok) now.res->object = outward(scope, now.res->object, now.res->obj_attributes);
        // Whether the folder is the root is the translator's own knowledge, not a
        // record's: such an answer is not kept (cache/answer_basis.h).
        if (dotdot) now.basis.refuse();
        return now;
      });
}

Now<nfs3::AccessRes> HandleTranslator::access_now(const CallContext& ctx, const nfs3::AccessArgs& a) {
  return answer_now<nfs3::AccessRes>(
      ctx, a, [](nfs3::AccessArgs& x) -> FileHandle& { return x.object; },
      [](Scope& scope, const nfs3::AccessArgs& args) {
        auto now = scope.route->e.downstream->access_now(scope.ctx, args);
        if (now) mask_read_only(scope, *now.res);
        return now;
      });
}

Awaitable<nfs3::AccessRes> HandleTranslator::access(const CallContext& ctx,
                                                    nfs3::AccessArgs a) {
  nfs3::AccessArgs args = std::move(a);
  Scope scope;
  Status s = enter(ctx, args.object, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.object);
  if (s != Status::Ok) co_return failure<nfs3::AccessRes>(s);
  nfs3::AccessRes res = co_await scope.route->e.downstream->access(scope.ctx, std::move(args));
  mask_read_only(scope, res);
  co_return res;
}

Awaitable<nfs3::ReadlinkRes> HandleTranslator::readlink(const CallContext& ctx,
                                                        nfs3::ReadlinkArgs a) {
  return forward(ctx, std::move(a), &nfs3::ReadlinkArgs::symlink, &Nfs3Program::readlink);
}

Now<nfs3::ReadRes> HandleTranslator::read_now(const CallContext& ctx, const nfs3::ReadArgs& a) {
  return answer_now<nfs3::ReadRes>(
      ctx, a, [](nfs3::ReadArgs& x) -> FileHandle& { return x.file; },
      [this](Scope& scope, nfs3::ReadArgs& args) {
        clamp_read(args);
        return scope.route->e.downstream->read_now(scope.ctx, args);
      });
}

void HandleTranslator::clamp_read(nfs3::ReadArgs& args) const {
  // No more than FSINFO's rtmax: a larger READ is answered short, as RFC 1813 allows.
  if (max_transfer_ > 0) args.count = std::min(args.count, max_transfer_);
}

Awaitable<nfs3::ReadRes> HandleTranslator::read(const CallContext& ctx, nfs3::ReadArgs a) {
  clamp_read(a);
  return forward(ctx, std::move(a), &nfs3::ReadArgs::file, &Nfs3Program::read);
}

Awaitable<nfs3::WriteRes> HandleTranslator::write(const CallContext& ctx,
                                                  nfs3::WriteArgs a) {
  return forward(ctx, std::move(a), &nfs3::WriteArgs::file, &Nfs3Program::write);
}

template <typename Args>
Awaitable<nfs3::CreateRes> HandleTranslator::make_object(
    const CallContext& ctx, Args args,
    Awaitable<nfs3::CreateRes> (Nfs3Program::*method)(const CallContext&, Args)) {
  Scope scope;
  Status s = enter(ctx, args.where.dir, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.where.dir);
  if (s == Status::Ok) s = check_name(NameUse::Create, args.where.name);
  if (s != Status::Ok) co_return failure<nfs3::CreateRes>(s);
  nfs3::CreateRes res = co_await (scope.route->e.downstream->*method)(scope.ctx, std::move(args));
  outward(scope, res.obj);
  co_return res;
}

template <typename Args>
Awaitable<nfs3::RemoveRes> HandleTranslator::unlink_name(
    const CallContext& ctx, Args args,
    Awaitable<nfs3::RemoveRes> (Nfs3Program::*method)(const CallContext&, Args)) {
  Scope scope;
  Status s = enter(ctx, args.object.dir, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.object.dir);
  if (s == Status::Ok) s = check_name(NameUse::Remove, args.object.name);
  if (s != Status::Ok) co_return failure<nfs3::RemoveRes>(s);
  co_return co_await (scope.route->e.downstream->*method)(scope.ctx, std::move(args));
}

Awaitable<nfs3::CreateRes> HandleTranslator::create(const CallContext& ctx,
                                                    nfs3::CreateArgs a) {
  return make_object(ctx, std::move(a), &Nfs3Program::create);
}

Awaitable<nfs3::MkdirRes> HandleTranslator::mkdir(const CallContext& ctx,
                                                  nfs3::MkdirArgs a) {
  return make_object(ctx, std::move(a), &Nfs3Program::mkdir);
}

Awaitable<nfs3::SymlinkRes> HandleTranslator::symlink(const CallContext& ctx,
                                                      nfs3::SymlinkArgs a) {
  return make_object(ctx, std::move(a), &Nfs3Program::symlink);
}

Awaitable<nfs3::MknodRes> HandleTranslator::mknod(const CallContext& ctx,
                                                  nfs3::MknodArgs a) {
  return make_object(ctx, std::move(a), &Nfs3Program::mknod);
}

Awaitable<nfs3::RemoveRes> HandleTranslator::remove(const CallContext& ctx,
                                                    nfs3::RemoveArgs a) {
  return unlink_name(ctx, std::move(a), &Nfs3Program::remove);
}

Awaitable<nfs3::RmdirRes> HandleTranslator::rmdir(const CallContext& ctx,
                                                  nfs3::RmdirArgs a) {
  return unlink_name(ctx, std::move(a), &Nfs3Program::rmdir);
}

Awaitable<nfs3::RenameRes> HandleTranslator::rename(const CallContext& ctx,
                                                    nfs3::RenameArgs a) {
  nfs3::RenameArgs args = std::move(a);
  Scope scope;
  Status s = enter(ctx, args.from.dir, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.from.dir);
  if (s == Status::Ok) s = enter_also(scope, args.to.dir);
  if (s == Status::Ok) s = check_name(NameUse::Rename, args.from.name);
  if (s == Status::Ok) s = check_name(NameUse::Rename, args.to.name);
  if (s != Status::Ok) co_return failure<nfs3::RenameRes>(s);
  co_return co_await scope.route->e.downstream->rename(scope.ctx, std::move(args));
}

Awaitable<nfs3::LinkRes> HandleTranslator::link(const CallContext& ctx, nfs3::LinkArgs a) {
  nfs3::LinkArgs args = std::move(a);
  Scope scope;
  Status s = enter(ctx, args.file, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.file);
  if (s == Status::Ok) s = enter_also(scope, args.link.dir);
  if (s == Status::Ok) s = check_name(NameUse::Create, args.link.name);
  if (s != Status::Ok) co_return failure<nfs3::LinkRes>(s);
  co_return co_await scope.route->e.downstream->link(scope.ctx, std::move(args));
}

template <typename Res, typename Args>
Awaitable<Res> HandleTranslator::list_dir(const CallContext& ctx, Args args, std::uint32_t Args::*reply_limit,
                                          Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args)) {
  Scope scope;
  Status s = enter(ctx, args.dir, scope);
  if (scope.root_pending) s = co_await finish_enter(scope, args.dir);
  if (s != Status::Ok) co_return failure<Res>(s);
  const FileHandle dir = args.dir;
  const std::uint32_t limit = args.*reply_limit;
  Res res = co_await (scope.route->e.downstream->*method)(scope.ctx, std::move(args));
  if (res.status != Status::Ok) co_return res;
  const bool inside = co_await keep_dotdot_inside(scope, dir, res);
  if constexpr (std::is_same_v<Res, nfs3::ReaddirplusRes>) {
    for (auto& entry : res.entries) {
      if (inside && entry.name == "..") continue;  // already the gateway's
      if (entry.name_handle) *entry.name_handle = outward(scope, *entry.name_handle, entry.name_attributes);
    }
  }
  // The client's limit, whoever filled the page (gateway handles are longer than
  // the origin's: a READDIRPLUS page may no longer fit).
  fit_reply(res, limit);
  co_return res;
}

Awaitable<nfs3::ReaddirRes> HandleTranslator::readdir(const CallContext& ctx, nfs3::ReaddirArgs a) {
  return list_dir(ctx, std::move(a), &nfs3::ReaddirArgs::count, &Nfs3Program::readdir);
}

Awaitable<nfs3::ReaddirplusRes> HandleTranslator::readdirplus(const CallContext& ctx, nfs3::ReaddirplusArgs a) {
  return list_dir(ctx, std::move(a), &nfs3::ReaddirplusArgs::maxcount, &Nfs3Program::readdirplus);
}

Awaitable<nfs3::FsstatRes> HandleTranslator::fsstat(const CallContext& ctx,
                                                    nfs3::FsstatArgs a) {
  return forward(ctx, std::move(a), &nfs3::FsstatArgs::fsroot, &Nfs3Program::fsstat);
}

Awaitable<nfs3::FsinfoRes> HandleTranslator::fsinfo(const CallContext& ctx,
                                                    nfs3::FsinfoArgs a) {
  nfs3::FsinfoRes res = co_await forward(ctx, std::move(a), &nfs3::FsinfoArgs::fsroot, &Nfs3Program::fsinfo);
  if (res.status == Status::Ok && max_transfer_ > 0) {
    // Clients size their READs, WRITEs and READDIRs by these: never more than nfsgw
    // itself accepts in one record, whatever the origin could take.
    const auto clamp = [this](std::uint32_t& v) { v = std::min(v, max_transfer_); };
    clamp(res.rtmax);
    clamp(res.rtpref);
    clamp(res.wtmax);
    clamp(res.wtpref);
    clamp(res.dtpref);
  }
  co_return res;
}

Awaitable<nfs3::PathconfRes> HandleTranslator::pathconf(const CallContext& ctx,
                                                        nfs3::PathconfArgs a) {
  return forward(ctx, std::move(a), &nfs3::PathconfArgs::object, &Nfs3Program::pathconf);
}

Awaitable<nfs3::CommitRes> HandleTranslator::commit(const CallContext& ctx,
                                                    nfs3::CommitArgs a) {
  return forward(ctx, std::move(a), &nfs3::CommitArgs::file, &Nfs3Program::commit);
}

}  // namespace nfsgw
