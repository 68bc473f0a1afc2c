// The only translation unit of nfsgw-bench that includes libnfs.
#include "tools/nfsgw-bench/nfs_connection.h"

#include <poll.h>

#include <cstring>
#include <memory>

// clang-format off
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
#include <nfsc/libnfs-raw-nlm.h>
// clang-format on

#include "tools/nfsgw-bench/call_stats.h"

namespace nfsgw::bench {

using Clock = std::chrono::steady_clock;

struct Connection::Pending {
  Connection* conn;
  Kind kind;
  ReplyFn fn;
  Clock::time_point start;
};

namespace {

// libnfs takes non-const pointers in its argument structs but only reads them
// while encoding, which happens inside the *_async call.
nfs_fh3 to_fh3(const FileHandle& fh) {
  nfs_fh3 out{};
  out.data.data_len = static_cast<u_int>(fh.size());
  out.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(fh.data()));
  return out;
}

FileHandle from_bytes(const char* data, u_int len) {
  if (data == nullptr || len == 0) return {};
  const auto* p = reinterpret_cast<const std::uint8_t*>(data);
  return FileHandle(p, p + len);
}

void copy_attr(const post_op_attr& a, Attr& out) {
  out.present = a.attributes_follow != 0;
  if (out.present) {
    out.type = static_cast<std::uint32_t>(a.post_op_attr_u.attributes.type);
    out.size = a.post_op_attr_u.attributes.size;
  }
}

void copy_fattr(const fattr3& a, Attr& out) {
  out.present = true;
  out.type = static_cast<std::uint32_t>(a.type);
  out.size = a.size;
}

void decode(Connection::Kind kind, void* data, Reply& r) {
  using K = Connection::Kind;
  if (data == nullptr && kind != K::Null) {
    r.transport_error = "empty reply";
    return;
  }
  switch (kind) {
    case K::Null:
      break;
    case K::NlmLock:
      r.status = static_cast<std::uint32_t>(static_cast<NLM4_LOCKres*>(data)->status);
      break;
    case K::NlmUnlock:
      r.status = static_cast<std::uint32_t>(static_cast<NLM4_UNLOCKres*>(data)->status);
      break;
    case K::Mnt: {
      auto* res = static_cast<mountres3*>(data);
      r.status = static_cast<std::uint32_t>(res->fhs_status);
      if (res->fhs_status == MNT3_OK) {
        const auto& fh = res->mountres3_u.mountinfo.fhandle;
        r.fh = from_bytes(fh.fhandle3_val, fh.fhandle3_len);
      }
      break;
    }
    case K::Getattr: {
      auto* res = static_cast<GETATTR3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status == NFS3_OK) copy_fattr(res->GETATTR3res_u.resok.obj_attributes, r.attr);
      break;
    }
    case K::Lookup: {
      auto* res = static_cast<LOOKUP3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status == NFS3_OK) {
        const auto& ok = res->LOOKUP3res_u.resok;
        r.fh = from_bytes(ok.object.data.data_val, ok.object.data.data_len);
        copy_attr(ok.obj_attributes, r.attr);
      }
      break;
    }
    case K::Access: {
      auto* res = static_cast<ACCESS3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      break;
    }
    case K::Read: {
      auto* res = static_cast<READ3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status == NFS3_OK) {
        r.count = res->READ3res_u.resok.count;
        r.eof = res->READ3res_u.resok.eof != 0;
      }
      break;
    }
    case K::Write: {
      auto* res = static_cast<WRITE3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status == NFS3_OK) {
        r.count = res->WRITE3res_u.resok.count;
        std::memcpy(r.verf.data(), res->WRITE3res_u.resok.verf, r.verf.size());
      }
      break;
    }
    case K::Commit: {
      auto* res = static_cast<COMMIT3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status == NFS3_OK) std::memcpy(r.verf.data(), res->COMMIT3res_u.resok.verf, r.verf.size());
      break;
    }
    case K::Setattr: {
      auto* res = static_cast<SETATTR3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      break;
    }
    case K::Create: {
      auto* res = static_cast<CREATE3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status == NFS3_OK && res->CREATE3res_u.resok.obj.handle_follows) {
        const auto& h = res->CREATE3res_u.resok.obj.post_op_fh3_u.handle;
        r.fh = from_bytes(h.data.data_val, h.data.data_len);
      }
      break;
    }
    case K::Mkdir: {
      auto* res = static_cast<MKDIR3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status == NFS3_OK && res->MKDIR3res_u.resok.obj.handle_follows) {
        const auto& h = res->MKDIR3res_u.resok.obj.post_op_fh3_u.handle;
        r.fh = from_bytes(h.data.data_val, h.data.data_len);
      }
      break;
    }
    case K::Remove: {
      auto* res = static_cast<REMOVE3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      break;
    }
    case K::Readdirplus: {
      auto* res = static_cast<READDIRPLUS3res*>(data);
      r.status = static_cast<std::uint32_t>(res->status);
      if (res->status != NFS3_OK) break;
      const auto& ok = res->READDIRPLUS3res_u.resok;
      std::memcpy(r.cookieverf.data(), ok.cookieverf, r.cookieverf.size());
      r.eof = ok.reply.eof != 0;
      // libnfs 4.0's decoder places list entries at addresses that are not
      // 8-byte aligned; copy each one out bytewise before touching fields.
      for (const entryplus3* raw = ok.reply.entries; raw != nullptr;) {
        entryplus3 copy;
        std::memcpy(&copy, static_cast<const void*>(raw), sizeof copy);
        const entryplus3* e = &copy;
        raw = copy.nextentry;
        DirEntry d;
        d.name = e->name ? e->name : "";
        d.cookie = e->cookie;
        d.has_handle = e->name_handle.handle_follows != 0;
        if (d.has_handle) {
          const auto& h = e->name_handle.post_op_fh3_u.handle;
          d.fh = from_bytes(h.data.data_val, h.data.data_len);
          d.has_handle = !d.fh.empty();
        }
        copy_attr(e->name_attributes, d.attr);
        r.entries.push_back(std::move(d));
      }
      break;
    }
  }
}

sattr3 mode_only(std::uint32_t mode) {
  sattr3 a{};
  a.mode.set_it = 1;
  a.mode.set_mode3_u.mode = mode;
  return a;
}

}  // namespace

Connection::Connection(std::uint32_t uid, std::uint32_t gid) {
  rpc_ = rpc_init_context();
  if (rpc_ == nullptr) {
    failed_ = true;
    error_ = "rpc_init_context failed";
    return;
  }
  // libnfs encodes the context's AUTH into each call when it is queued; every
  // call of this connection carries the same AUTH_SYS identity.
  rpc_set_auth(rpc_, libnfs_authunix_create("nfsgw-bench", uid, gid, 0, nullptr));
}

Connection::~Connection() {
  // Destroying the context cancels queued calls through their callbacks;
  // closing_ makes those callbacks free their state without running
  // continuations that may point into objects already gone.
  closing_ = true;
  if (rpc_ != nullptr) rpc_destroy_context(rpc_);
}

bool Connection::start_connect(const std::string& host, std::uint16_t port, Program program) {
  if (rpc_ == nullptr) return false;
  int prog = program == Program::Mount ? MOUNT_PROGRAM : program == Program::Nlm ? NLM_PROGRAM : NFS_PROGRAM;
  int vers = program == Program::Mount ? MOUNT_V3 : program == Program::Nlm ? NLM_V4 : NFS_V3;
  int rc = port != 0
               ? rpc_connect_port_async(rpc_, host.c_str(), port, prog, vers, &Connection::on_connect, this)
               : rpc_connect_program_async(rpc_, host.c_str(), prog, vers, &Connection::on_connect, this);
  if (rc != 0) {
    failed_ = true;
    const char* e = rpc_get_error(rpc_);
    error_ = e ? e : "connect failed";
    return false;
  }
  return true;
}

void Connection::on_connect(rpc_context* rpc, int status, void* data, void* priv) {
  auto* self = static_cast<Connection*>(priv);
  if (self->closing_) return;
  if (status == RPC_STATUS_SUCCESS) {
    self->connected_ = true;
  } else {
    self->failed_ = true;
    self->error_ = data != nullptr && status == RPC_STATUS_ERROR ? static_cast<const char*>(data)
                                                                 : "connect cancelled";
  }
}

int Connection::fd() const { return rpc_ ? rpc_get_fd(rpc_) : -1; }

short Connection::events() const { return rpc_ ? static_cast<short>(rpc_which_events(rpc_)) : 0; }

bool Connection::service(short revents) {
  if (rpc_ == nullptr || failed_) return false;
  if (rpc_service(rpc_, revents) < 0) {
    failed_ = true;
    const char* e = rpc_get_error(rpc_);
    error_ = e ? e : "connection lost";
    return false;
  }
  return true;
}

Connection::Pending* Connection::make_pending(Kind kind, ReplyFn fn) {
  return new Pending{this, kind, std::move(fn), Clock::now()};
}

bool Connection::queued(int rc, Pending* p) {
  if (rc != 0) {
    delete p;
    return false;
  }
  ++inflight_;
  return true;
}

void Connection::on_reply(rpc_context* rpc, int status, void* data, void* priv) {
  std::unique_ptr<Pending> p(static_cast<Pending*>(priv));
  Connection* self = p->conn;
  --self->inflight_;
  if (self->closing_) return;
  Reply r;
  if (status == RPC_STATUS_SUCCESS) {
    decode(p->kind, data, r);
  } else if (status == RPC_STATUS_ERROR) {
    r.transport_error = data != nullptr ? static_cast<const char*>(data) : "rpc error";
  } else if (status == RPC_STATUS_TIMEOUT) {
    r.transport_error = "rpc timeout";
  } else {
    r.transport_error = "rpc cancelled";
  }
  if (self->stats_ != nullptr) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - p->start).count();
    const bool nlm = p->kind == Kind::NlmLock || p->kind == Kind::NlmUnlock;
    self->stats_->record_call(static_cast<std::uint64_t>(ns), r.status, r.transport_error,
                              nlm ? CallStats::Statuses::Nlm4 : CallStats::Statuses::Nfs3);
  }
  p->fn(r);
}

bool Connection::mnt(const std::string& path, ReplyFn fn) {
  std::string copy = path;
  Pending* p = make_pending(Kind::Mnt, std::move(fn));
  return queued(rpc_mount3_mnt_async(rpc_, &Connection::on_reply, copy.data(), p), p);
}

bool Connection::null(ReplyFn fn) {
  Pending* p = make_pending(Kind::Null, std::move(fn));
  return queued(rpc_nfs3_null_async(rpc_, &Connection::on_reply, p), p);
}

bool Connection::getattr(const FileHandle& fh, ReplyFn fn) {
  GETATTR3args args{};
  args.object = to_fh3(fh);
  Pending* p = make_pending(Kind::Getattr, std::move(fn));
  return queued(rpc_nfs3_getattr_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::lookup(const FileHandle& dir, const std::string& name, ReplyFn fn) {
  std::string copy = name;
  LOOKUP3args args{};
  args.what.dir = to_fh3(dir);
  args.what.name = copy.data();
  Pending* p = make_pending(Kind::Lookup, std::move(fn));
  return queued(rpc_nfs3_lookup_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::access(const FileHandle& fh, std::uint32_t mask, ReplyFn fn) {
  ACCESS3args args{};
  args.object = to_fh3(fh);
  args.access = mask;
  Pending* p = make_pending(Kind::Access, std::move(fn));
  return queued(rpc_nfs3_access_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::read(const FileHandle& fh, std::uint64_t offset, std::uint32_t count, ReplyFn fn) {
  READ3args args{};
  args.file = to_fh3(fh);
  args.offset = offset;
  args.count = count;
  Pending* p = make_pending(Kind::Read, std::move(fn));
  return queued(rpc_nfs3_read_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::write(const FileHandle& fh, std::uint64_t offset, const std::uint8_t* data,
                       std::uint32_t count, bool file_sync, ReplyFn fn) {
  WRITE3args args{};
  args.file = to_fh3(fh);
  args.offset = offset;
  args.count = count;
  args.stable = file_sync ? FILE_SYNC : UNSTABLE;
  args.data.data_len = count;
  args.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(data));
  Pending* p = make_pending(Kind::Write, std::move(fn));
  return queued(rpc_nfs3_write_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::commit(const FileHandle& fh, ReplyFn fn) {
  COMMIT3args args{};
  args.file = to_fh3(fh);
  args.offset = 0;
  args.count = 0;
  Pending* p = make_pending(Kind::Commit, std::move(fn));
  return queued(rpc_nfs3_commit_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::setattr(const FileHandle& fh, std::uint32_t mode, std::uint32_t mtime_s, ReplyFn fn) {
  SETATTR3args args{};
  args.object = to_fh3(fh);
  args.new_attributes = mode_only(mode);
  if (mtime_s != 0) {
    args.new_attributes.atime.set_it = SET_TO_CLIENT_TIME;
    args.new_attributes.atime.set_atime_u.atime.seconds = mtime_s;
    args.new_attributes.mtime.set_it = SET_TO_CLIENT_TIME;
    args.new_attributes.mtime.set_mtime_u.mtime.seconds = mtime_s;
  }
  Pending* p = make_pending(Kind::Setattr, std::move(fn));
  return queued(rpc_nfs3_setattr_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::create(const FileHandle& dir, const std::string& name, std::uint32_t mode,
                        ReplyFn fn) {
  std::string copy = name;
  CREATE3args args{};
  args.where.dir = to_fh3(dir);
  args.where.name = copy.data();
  args.how.mode = UNCHECKED;
  args.how.createhow3_u.obj_attributes = mode_only(mode);
  args.how.createhow3_u.obj_attributes.size.set_it = 1;
  args.how.createhow3_u.obj_attributes.size.set_size3_u.size = 0;
  Pending* p = make_pending(Kind::Create, std::move(fn));
  return queued(rpc_nfs3_create_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::mkdir(const FileHandle& dir, const std::string& name, std::uint32_t mode,
                       ReplyFn fn) {
  std::string copy = name;
  MKDIR3args args{};
  args.where.dir = to_fh3(dir);
  args.where.name = copy.data();
  args.attributes = mode_only(mode);
  Pending* p = make_pending(Kind::Mkdir, std::move(fn));
  return queued(rpc_nfs3_mkdir_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::remove(const FileHandle& dir, const std::string& name, ReplyFn fn) {
  std::string copy = name;
  REMOVE3args args{};
  args.object.dir = to_fh3(dir);
  args.object.name = copy.data();
  Pending* p = make_pending(Kind::Remove, std::move(fn));
  return queued(rpc_nfs3_remove_async(rpc_, &Connection::on_reply, &args, p), p);
}

namespace {

/// libnfs's nlm4_lock for `l`: pointers into `l` and `caller` (read while the
/// call is queued: libnfs encodes it then).
nlm4_lock to_nlm4(const NlmLock& l, std::string& caller) {
  nlm4_lock out{};
  out.caller_name = caller.data();
  out.fh.data.data_len = static_cast<u_int>(l.fh.size());
  out.fh.data.data_val = reinterpret_cast<char*>(const_cast<std::uint8_t*>(l.fh.data()));
  out.oh = const_cast<char*>(l.owner.c_str());
  out.svid = l.svid;
  out.l_offset = l.offset;
  out.l_len = l.length;
  return out;
}

}  // namespace

bool Connection::nlm_lock(const NlmLock& l, ReplyFn fn) {
  std::string caller = "127.0.0.1";  // an address: every statd can monitor it
  char cookie[] = "nb";
  NLM4_LOCKargs args{};
  args.cookie.data.data_len = 2;
  args.cookie.data.data_val = cookie;
  args.block = 0;
  args.exclusive = 1;
  args.lock = to_nlm4(l, caller);
  args.reclaim = 0;
  args.state = 1;
  Pending* p = make_pending(Kind::NlmLock, std::move(fn));
  return queued(rpc_nlm4_lock_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::nlm_unlock(const NlmLock& l, ReplyFn fn) {
  std::string caller = "127.0.0.1";  // an address: every statd can monitor it
  char cookie[] = "nb";
  NLM4_UNLOCKargs args{};
  args.cookie.data.data_len = 2;
  args.cookie.data.data_val = cookie;
  args.lock = to_nlm4(l, caller);
  Pending* p = make_pending(Kind::NlmUnlock, std::move(fn));
  return queued(rpc_nlm4_unlock_async(rpc_, &Connection::on_reply, &args, p), p);
}

bool Connection::readdirplus(const FileHandle& dir, std::uint64_t cookie,
                             const std::array<std::uint8_t, 8>& verf, std::uint32_t dircount,
                             std::uint32_t maxcount, ReplyFn fn) {
  READDIRPLUS3args args{};
  args.dir = to_fh3(dir);
  args.cookie = cookie;
  std::memcpy(args.cookieverf, verf.data(), verf.size());
  args.dircount = dircount;
  args.maxcount = maxcount;
  Pending* p = make_pending(Kind::Readdirplus, std::move(fn));
  return queued(rpc_nfs3_readdirplus_async(rpc_, &Connection::on_reply, &args, p), p);
}

}  // namespace nfsgw::bench
