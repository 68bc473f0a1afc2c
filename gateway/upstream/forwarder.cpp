#include "gateway/upstream/forwarder.h"

#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <utility>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include <spdlog/spdlog.h>

#include "gateway/made_up.h"
#include "gateway/rpc/nfs3_procedure_info.h"
#include "gateway/upstream/libnfs_convert.h"
#include "gateway/upstream/origin_mount.h"
#include "gateway/upstream/upstream_await.h"
#include "gateway/upstream/upstream_pool.h"

namespace nfsgw::upstream {

namespace {

constexpr std::uint32_t kNfsProgram = 100003;
constexpr std::uint32_t kNfsVersion = 3;

/// Copies libnfs's result into Res; an unrepresentable reply becomes SERVERFAULT,
/// marked as nfsgw's own (gateway_status): the origin said something else.
template <typename LibRes, typename Res>
auto reply_into(const char* what) {
  return [what](void* data, Res& out) {
    if (data == nullptr || !convert::from_libnfs(*static_cast<const LibRes*>(data), out)) {
      spdlog::warn("upstream: unusable {} reply from the origin", what);
      out = made_up<Res>(nfs3::Status::ServerFault);
    }
  };
}

using nfs3::Proc;

/// libnfs sends names and paths as C strings: an embedded NUL would silently
/// truncate them into a different name, so such calls are refused here.
bool c_strings_safe(std::initializer_list<std::string_view> strings) {
  for (std::string_view s : strings) {
    if (s.find('\0') != std::string_view::npos) return false;
  }
  return true;
}

/// What differs between the procedures, in one table, one row each: libnfs's
/// argument and result structs (LIB##args, LIB##res), its send function
/// (rpc_nfs3_<method>_async), the bytes the call sends beyond its small arguments
/// (a WRITE's data, counted by the connection) and the strings libnfs sends as C
/// strings. Everything else (idempotency and name) comes from the procedure table
/// shared with the dispatcher (gateway/rpc/nfs3_procedure_info.h). A procedure of
/// NFSGW_NFS3_PROCEDURES without a row does not compile.
template <Proc P>
struct LibnfsCall;

#define NFSGW_LIBNFS_CALL(P, LIB, method, payload_bytes, ...)                            \
  template <>                                                                           \
  struct LibnfsCall<Proc::P> {                                                          \
    using LibArgs = ::LIB##args;                                                        \
    using LibRes = ::LIB##res;                                                          \
    static int send(struct rpc_context* rpc, RpcCallback cb, LibArgs* a, void* p) {    \
      return rpc_nfs3_##method##_async(rpc, cb, a, p);                                  \
    }                                                                                   \
    static std::size_t payload([[maybe_unused]] const nfs3::P##Args& a) {              \
      return payload_bytes;                                                             \
    }                                                                                   \
    static bool sendable([[maybe_unused]] const nfs3::P##Args& a) {                    \
      return c_strings_safe({__VA_ARGS__});                                             \
    }                                                                                   \
  };

// clang-format off
//               procedure    libnfs       method       payload        C strings
NFSGW_LIBNFS_CALL(Getattr,     GETATTR3,     getattr,     0)
NFSGW_LIBNFS_CALL(Setattr,     SETATTR3,     setattr,     0)
NFSGW_LIBNFS_CALL(Lookup,      LOOKUP3,      lookup,      0,             a.what.name)
NFSGW_LIBNFS_CALL(Access,      ACCESS3,      access,      0)
NFSGW_LIBNFS_CALL(Readlink,    READLINK3,    readlink,    0)
NFSGW_LIBNFS_CALL(Read,        READ3,        read,        0)
NFSGW_LIBNFS_CALL(Write,       WRITE3,       write,       a.data.size())
NFSGW_LIBNFS_CALL(Create,      CREATE3,      create,      0,             a.where.name)
NFSGW_LIBNFS_CALL(Mkdir,       MKDIR3,       mkdir,       0,             a.where.name)
NFSGW_LIBNFS_CALL(Symlink,     SYMLINK3,     symlink,     0,             a.where.name, a.symlink_data)
NFSGW_LIBNFS_CALL(Mknod,       MKNOD3,       mknod,       0,             a.where.name)
NFSGW_LIBNFS_CALL(Remove,      REMOVE3,      remove,      0,             a.object.name)
NFSGW_LIBNFS_CALL(Rmdir,       RMDIR3,       rmdir,       0,             a.object.name)
NFSGW_LIBNFS_CALL(Rename,      RENAME3,      rename,      0,             a.from.name, a.to.name)
NFSGW_LIBNFS_CALL(Link,        LINK3,        link,        0,             a.link.name)
NFSGW_LIBNFS_CALL(Readdir,     READDIR3,     readdir,     0)
NFSGW_LIBNFS_CALL(Readdirplus, READDIRPLUS3, readdirplus, 0)
NFSGW_LIBNFS_CALL(Fsstat,      FSSTAT3,      fsstat,      0)
NFSGW_LIBNFS_CALL(Fsinfo,      FSINFO3,      fsinfo,      0)
NFSGW_LIBNFS_CALL(Pathconf,    PATHCONF3,    pathconf,    0)
NFSGW_LIBNFS_CALL(Commit,      COMMIT3,      commit,      0)
// clang-format on
#undef NFSGW_LIBNFS_CALL

/// Forwards any procedure of the table: refuses with INVAL (nfsgw's own) what
/// libnfs cannot send, converts the arguments into libnfs's struct, which points
/// into `args` (both live in this frame until the reply: libnfs copies them, and
/// encodes the AUTH of `ctx.cred`, when the connection queues the call on its
/// strand), and copies libnfs's result out inside its callback (libnfs frees it
/// right after).
template <Proc P, typename Res, typename Args>
Awaitable<Res> forward(UpstreamPool& pool, const CallContext& ctx, Args args) {
  using Call = LibnfsCall<P>;
  if (!Call::sendable(args)) co_return made_up<Res>(nfs3::Status::Inval);
  typename Call::LibArgs a;
  convert::to_libnfs(args, a);
  // Idempotent by the procedure table, with its per-call rule (a guarded SETATTR
  // is not).
  CallSpec spec{rpc::nfs3_call_idempotent(P, args), rpc::nfs3_procedure(P).name, &ctx.cred,
                ctx.caller_gone};
  spec.payload = Call::payload(args);
  co_return co_await await_call<Res>(
      pool, spec,
      [la = &a](struct rpc_context* rpc, RpcCallback cb, void* p) { return Call::send(rpc, cb, la, p); },
      reply_into<typename Call::LibRes, Res>(spec.what));
}

struct NullRes {
  nfs3::Status status = nfs3::Status::Ok;
  bool gateway_status = false;  // as in protocol/nfs3_types.h; set by AwaitedCall::on_fail
};

}  // namespace

Forwarder::Forwarder(boost::asio::io_context& io, const config::ExportConfig& export_config)
    : pool_(std::make_shared<UpstreamPool>(
          io,
          Endpoint{export_config.origin.host, export_config.origin.nfs_port, kNfsProgram,
                   kNfsVersion},
          export_config.upstream_connections, UpstreamOptions{export_config.origin_timeout})),
      mount_(std::make_shared<OriginMount>(io, export_config.origin,
                                           UpstreamOptions{export_config.origin_timeout})) {}

Forwarder::~Forwarder() { stop(); }

void Forwarder::start() {
  pool_->start();
  mount_->start();
}

void Forwarder::stop() {
  mount_->stop();
  pool_->stop();
}

Awaitable<nfs3::FileHandle> Forwarder::root_handle() { return mount_->root_handle(); }

std::size_t Forwarder::connections_up() const { return pool_->connections_up(); }

Awaitable<void> Forwarder::null(const CallContext& ctx) {
  const CallSpec spec{rpc::nfs3_idempotent(Proc::Null), rpc::nfs3_procedure(Proc::Null).name,
                       &ctx.cred, ctx.caller_gone};
  co_await await_call<NullRes>(
      *pool_, spec,
      [](struct rpc_context* rpc, RpcCallback cb, void* p) { return rpc_nfs3_null_async(rpc, cb, p); },
      [](void*, NullRes&) {});
}

#define NFSGW_FORWARDER_DEFINE(method, P, Res, Args)                                      \
  Awaitable<nfs3::Res> Forwarder::method(const CallContext& ctx, nfs3::Args args) {        \
    return forward<Proc::P, nfs3::Res>(*pool_, ctx, std::move(args));                     \
  }
NFSGW_NFS3_PROCEDURES(NFSGW_FORWARDER_DEFINE)
#undef NFSGW_FORWARDER_DEFINE

}  // namespace nfsgw::upstream
