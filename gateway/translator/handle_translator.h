// The outermost NFSv3 layer: clients' gateway handles in, origin handles out.
//
// For every call it verifies the gateway handle (forged or altered -> BADHANDLE,
// never sent upstream), finds the export, applies the export's policy (clients,
// read-only, squash), swaps the handle for the origin's and calls that export's
// downstream program; handles in the results are wrapped again on the way back.
// ".." at an export root stays at the root: the root is known by its fsid and
// fileid, so another encoding of its handle from the origin changes nothing. The
// same holds for the ".." entry of a listing of the root (READDIR, READDIRPLUS,
// from the cache or the origin alike): it carries the root's own fileid (and
// gateway handle and attributes), since the origin's parent of an export of a
// subfolder lies outside the export and nothing about it may be shown.
// Names are checked (gateway/translator/name_rules.h) and READDIR/READDIRPLUS replies cut to
// the client's count (gateway/translator/reply_fit.h) here, and FSINFO's transfer sizes are
// clamped to what nfsgw itself accepts.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/handle_codec.h"
#include "config/config.h"
#include "gateway/translator/log_limit.h"
#include "gateway/nfs3_program.h"

namespace nfsgw {

/// One export as the translator sees it.
struct ExportRoute {
  /// The export's settings; must outlive the translator (see update()).
  const config::ExportConfig* config = nullptr;
  /// The export's stack of layers; works with origin handles.
  Nfs3Program* downstream = nullptr;
  /// The origin's root handle of the export (waits until the origin has answered MNT).
  std::function<Awaitable<nfs3::FileHandle>()> origin_root;
};

class HandleTranslator final : public Nfs3Program {
 public:
  /// `max_transfer`: the largest READ/WRITE payload nfsgw accepts (its largest
  /// record less headers: nfs3::max_transfer_for_record). FSINFO's rtmax, wtmax,
  /// their preferred sizes and dtpref never exceed it, and READs ask for no more.
  HandleTranslator(cache::HandleCodec& codec, const std::vector<ExportRoute>& routes,
                   std::uint32_t max_transfer);
  ~HandleTranslator() override;

  /// A configuration reload: from now on the exports are `routes`. An export
  /// already served (same id and same `downstream`) keeps its state (its root
  /// handle) and takes its new settings (clients, access, squash) from `config`;
  /// others are added; an export left out answers STALE to its handles. Calls in
  /// flight finish with the settings they entered with. The translator keeps every
  /// earlier table and route alive (reloads are rare); the caller keeps every
  /// `config` and `downstream` alive as long as the translator. Not concurrent
  /// with itself (the caller serialises reloads); concurrent with calls.
  void update(const std::vector<ExportRoute>& routes);

  /// A file handle that came with a call of another program (NLM, issue 21),
  /// checked exactly as an NFS call's first handle is: its MAC, its export, the
  /// client against the export's `clients`. `status` is Ok (then `export_id`,
  /// `origin`, the origin's handle of the file, and `cred`, the caller's after the
  /// export's squash, are set), BadHandle (forged or damaged), Stale (an export
  /// removed, or an origin root that changed), Acces (the export refuses the
  /// client) or ServerFault (the handle store failed). No call reaches the origin,
  /// except the export's MNT when its root handle is not known yet.
  struct CheckedHandle {
    nfs3::Status status = nfs3::Status::BadHandle;
    std::uint32_t export_id = 0;
    nfs3::FileHandle origin;
    Credentials cred;
  };
  Awaitable<CheckedHandle> check_handle(const CallContext& ctx, nfs3::FileHandle handle);

  Awaitable<void> null(const CallContext& ctx) override;
  Awaitable<nfs3::GetattrRes> getattr(const CallContext&, nfs3::GetattrArgs) override;
  Awaitable<nfs3::SetattrRes> setattr(const CallContext&, nfs3::SetattrArgs) override;
  Awaitable<nfs3::LookupRes> lookup(const CallContext&, nfs3::LookupArgs) override;
  Awaitable<nfs3::AccessRes> access(const CallContext&, nfs3::AccessArgs) override;
  Awaitable<nfs3::ReadlinkRes> readlink(const CallContext&, nfs3::ReadlinkArgs) override;
  Now<nfs3::ReadRes> read_now(const CallContext& ctx, const nfs3::ReadArgs& args) override;
  Awaitable<nfs3::ReadRes> read(const CallContext&, nfs3::ReadArgs) override;
  Awaitable<nfs3::WriteRes> write(const CallContext&, nfs3::WriteArgs) override;
  Awaitable<nfs3::CreateRes> create(const CallContext&, nfs3::CreateArgs) override;
  Awaitable<nfs3::MkdirRes> mkdir(const CallContext&, nfs3::MkdirArgs) override;
  Awaitable<nfs3::SymlinkRes> symlink(const CallContext&, nfs3::SymlinkArgs) override;
  Awaitable<nfs3::MknodRes> mknod(const CallContext&, nfs3::MknodArgs) override;
  Awaitable<nfs3::RemoveRes> remove(const CallContext&, nfs3::RemoveArgs) override;
  Awaitable<nfs3::RmdirRes> rmdir(const CallContext&, nfs3::RmdirArgs) override;
  Awaitable<nfs3::RenameRes> rename(const CallContext&, nfs3::RenameArgs) override;
  Awaitable<nfs3::LinkRes> link(const CallContext&, nfs3::LinkArgs) override;
  Awaitable<nfs3::ReaddirRes> readdir(const CallContext&, nfs3::ReaddirArgs) override;
  Awaitable<nfs3::ReaddirplusRes> readdirplus(const CallContext&,
                                              nfs3::ReaddirplusArgs) override;
  Awaitable<nfs3::FsstatRes> fsstat(const CallContext&, nfs3::FsstatArgs) override;
  Awaitable<nfs3::FsinfoRes> fsinfo(const CallContext&, nfs3::FsinfoArgs) override;
  Awaitable<nfs3::PathconfRes> pathconf(const CallContext&, nfs3::PathconfArgs) override;
  Awaitable<nfs3::CommitRes> commit(const CallContext&, nfs3::CommitArgs) override;

  Now<nfs3::GetattrRes> getattr_now(const CallContext& ctx, const nfs3::GetattrArgs& args) override;
  Now<nfs3::LookupRes> lookup_now(const CallContext& ctx, const nfs3::LookupArgs& args) override;
  Now<nfs3::AccessRes> access_now(const CallContext& ctx, const nfs3::AccessArgs& args) override;

 private:
  struct Route;
  struct Table;
  /// A call admitted into one export: its route and the credentials to send upstream.
  struct Scope {
    Route* route = nullptr;
    /// The export's settings when the call entered (a reload may publish others).
    const config::ExportConfig* config = nullptr;
    CallContext ctx;
    nfs3::FileHandle origin_root;  // the origin's handle of the export root
    bool at_root = false;          // the first handle is the export root
    /// The origin's root handle was not known when the call entered (the export's
    /// first calls): finish_enter must run before the handle is used.
    bool root_pending = false;
    bool root_handle = false;  // the first handle is the gateway's root handle
    /// The first handle is a Delta handle whose payload `handle` holds until the
    /// origin's root handle is known (finish_enter resolves it).
    bool delta_pending = false;
  };

  std::optional<cache::HandleCodec::Decoded> unwrap(const CallContext& ctx,
                                                    const nfs3::FileHandle& handle,
                                                    nfs3::Status& failure) const;
  /// Verifies `handle` (replaced in place by the origin's), admits the call and
  /// fills `scope`. Returns Ok or the status to answer with. Synchronous (a cached
  /// answer costs no coroutine frame here) except on an export's first calls, when
  /// the origin's root handle is not known yet: then it leaves `scope.root_pending`
  /// set and the caller completes the call's entry with finish_enter:
  ///   Status s = enter(ctx, h, scope);
  ///   if (scope.root_pending) s = co_await finish_enter(scope, h);
  nfs3::Status enter(const CallContext& ctx, nfs3::FileHandle& handle, Scope& scope);
  Awaitable<nfs3::Status> finish_enter(Scope& scope, nfs3::FileHandle& handle);
  /// With the origin's root handle known: the first handle's root or Delta form
  /// becomes the origin's handle (STALE for a Delta handle of another root).
  static nfs3::Status resolve_first(Scope& scope, nfs3::FileHandle& handle);
  /// A second handle of the same call (RENAME, LINK): same export or XDEV.
  nfs3::Status enter_also(const Scope& scope, nfs3::FileHandle& handle);
  /// The gateway handle for an origin handle of this export.
  nfs3::FileHandle outward(const Scope& scope, const nfs3::FileHandle& origin);
  void outward(const Scope& scope, nfs3::PostOpFh& fh);
  /// The origin handle of `route`'s root, remembered after the first answer.
  static const nfs3::FileHandle* known_root(const Route& route);
  static Awaitable<nfs3::FileHandle> origin_root(Route& route);

  /// LOOKUP's ".." at the export root becomes "." (coroutine and *_now alike).
  static void stay_inside(const Scope& scope, nfs3::LookupArgs& args);
  /// Whether `dir` (an origin handle of the scope's export, whose bytes differ
  /// from the root's) is the export root all the same: the same fsid and fileid as
  /// the root. `attrs`, when given, are dir's attributes already known. Asks the
  /// layer below for GETATTRs (of the root once per export, and of `dir`).
  Awaitable<bool> is_root(const Scope& scope, const nfs3::FileHandle& dir, const nfs3::PostOpAttr& attrs);
  /// The same without waiting: nullopt when an answer would need to wait.
  std::optional<bool> is_root_now(const Scope& scope, const nfs3::FileHandle& dir);
  /// The root's (fsid, fileid): known, or asked of the layer below with one
  /// GETATTR of the root (throws when it fails).
  Awaitable<std::pair<std::uint64_t, std::uint64_t>> ask_root_identity(const Scope& scope);
  /// Makes the ".." entry of a listing of `dir` (READDIR or READDIRPLUS, with
  /// origin handles) the export root itself when `dir` is the root or cannot be
  /// told apart from it; left out when no identity inside the export can be given.
  /// Returns whether it did: then its handle is already the gateway's.
  template <typename Res>
  Awaitable<bool> keep_dotdot_inside(const Scope& scope, const nfs3::FileHandle& dir, Res& res);
  /// Remembers the root's identity from a GETATTR answer of the root.
  static void learn_root(Route& route, const nfs3::Fattr& attr);
  /// The root's (fsid, fileid) once known.
  static std::optional<std::pair<std::uint64_t, std::uint64_t>> root_identity(const Route& route);
  /// The gateway's root handle for an object with the root's identity.
  nfs3::FileHandle outward(const Scope& scope, const nfs3::FileHandle& origin, const nfs3::PostOpAttr& attrs);
  /// READ's count cut to the export's largest transfer (coroutine and *_now alike).
  void clamp_read(nfs3::ReadArgs& args) const;
  /// ACCESS on a read-only export grants no change bits (coroutine and *_now alike).
  static void mask_read_only(const Scope& scope, nfs3::AccessRes& res);
  /// The *_now functions: enter() without waiting, then `then(scope, args)`; no
  /// answer while the export's root is unknown, the failure when entry fails.
  template <typename Res, typename Args, typename Handle, typename Then>
  Now<Res> answer_now(const CallContext& ctx, const Args& a, Handle handle_of, Then then);

  /// The common case: one handle, forwarded as it is.
  template <typename Res, typename Args>
  Awaitable<Res> forward(const CallContext& ctx, Args args, nfs3::FileHandle Args::*handle,
                         Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args));

  /// CREATE, MKDIR, SYMLINK, MKNOD: a directory handle in, a new object's handle out.
  template <typename Args>
  Awaitable<nfs3::CreateRes> make_object(
      const CallContext& ctx, Args args,
      Awaitable<nfs3::CreateRes> (Nfs3Program::*method)(const CallContext&, Args));
  /// READDIR, READDIRPLUS: ".." kept inside the export, handles made the
  /// gateway's, the reply cut to the client's `reply_limit` (count, maxcount).
  template <typename Res, typename Args>
  Awaitable<Res> list_dir(const CallContext& ctx, Args args, std::uint32_t Args::*reply_limit,
                          Awaitable<Res> (Nfs3Program::*method)(const CallContext&, Args));
  /// REMOVE, RMDIR: a directory handle and a name.
  template <typename Args>
  Awaitable<nfs3::RemoveRes> unlink_name(
      const CallContext& ctx, Args args,
      Awaitable<nfs3::RemoveRes> (Nfs3Program::*method)(const CallContext&, Args));

  cache::HandleCodec& codec_;
  LogLimit bad_handle_log_{10, std::chrono::seconds(10)};  // forged handles: 10 lines per 10 s
  std::uint32_t max_transfer_;
  /// The exports served now, by id: read with one acquire load per call.
  std::atomic<const Table*> table_{nullptr};
  std::mutex update_mu_;                        // guards the two below (writers only)
  std::vector<std::unique_ptr<Route>> all_routes_;  // every route ever served
  std::vector<std::unique_ptr<const Table>> tables_;  // every table ever published
};

}  // namespace nfsgw
