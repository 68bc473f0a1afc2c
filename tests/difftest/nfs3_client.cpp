#include "tests/difftest/nfs3_client.h"
#include "tests/support/raw_nfs_values.h"

// clang-format off
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
// clang-format on
#include <poll.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace difftest {
namespace {

// Conversions of libnfs's structures: tests/support/raw_nfs_values.h.
using integ::as_dirop;
using integ::as_fh3;
using integ::to_fattr;
using integ::to_handle;

void set_mode(sattr3& s, std::uint32_t mode) {
  s.mode.set_it = 1;
  s.mode.set_mode3_u.mode = mode;
}

}  // namespace

struct Nfs3Client::Slot {
  bool done = false;
  Reply out;
  void (*decode)(void*, Reply&, void*) = nullptr;
  void* extra = nullptr;  // what decode fills besides the reply (a listing's page state)
};

Nfs3Client::Nfs3Client() {
  rpc_ = rpc_init_context();
  if (!rpc_) throw std::runtime_error("rpc_init_context failed");
}

Nfs3Client::~Nfs3Client() {
  if (rpc_) rpc_destroy_context(rpc_);
}

std::string Nfs3Client::error() const { return last_error_; }

void Nfs3Client::reset() {
  const char* e = rpc_get_error(rpc_);
  if (e && *e) last_error_ = e;
  rpc_destroy_context(rpc_);
  rpc_ = rpc_init_context();
  if (!rpc_) throw std::runtime_error("rpc_init_context failed");
}

bool Nfs3Client::drive(const bool& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      last_error_ = "no reply within " + std::to_string(timeout_ms) + " ms";
      reset();
      return false;
    }
    pollfd pfd{rpc_get_fd(rpc_), static_cast<short>(rpc_which_events(rpc_)), 0};
    const int n = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left, 100)));
    if (n < 0 || rpc_service(rpc_, n > 0 ? pfd.revents : 0) < 0) {
      const bool ok = done;
      reset();
      return ok;
    }
  }
  return true;
}

bool Nfs3Client::connect(std::uint16_t port) {
  port_ = port;
  reset();
  bool done = false;
  int result = -1;
  struct Wait {
    bool* done;
    int* result;
  } w{&done, &result};
  auto cb = [](rpc_context*, int status, void*, void* priv) {
    auto* w = static_cast<Wait*>(priv);
    *w->result = status;
    *w->done = true;
  };
  if (rpc_connect_port_async(rpc_, "127.0.0.1", port, NFS_PROGRAM, NFS_V3, cb, &w) != 0) {
    last_error_ = rpc_get_error(rpc_);
    return false;
  }
  if (!drive(done) || result != RPC_STATUS_SUCCESS) return false;
  set_credentials(uid_, gid_, groups_);
  return true;
}

void Nfs3Client::set_credentials(std::uint32_t uid, std::uint32_t gid, const std::vector<std::uint32_t>& groups) {
  uid_ = uid;
  gid_ = gid;
  groups_ = groups;
  std::vector<std::uint32_t> g = groups;
  rpc_set_auth(rpc_, libnfs_authunix_create("nfsgw-difftest", uid, gid, static_cast<std::uint32_t>(g.size()),
                                            g.empty() ? nullptr : g.data()));
}

template <typename Send>
Reply Nfs3Client::call(const char* what, Decode decode, Send send, void* extra) {
  Slot slot;
  slot.decode = decode;
  slot.extra = extra;
  auto cb = [](rpc_context*, int status, void* data, void* priv) {
    auto* s = static_cast<Slot*>(priv);
    s->out.transport_ok = status == RPC_STATUS_SUCCESS;
    if (s->out.transport_ok) {
      s->decode(data, s->out, s->extra);
    } else {
      s->out.error = status == RPC_STATUS_ERROR && data ? static_cast<const char*>(data)
                                                        : "rpc status " + std::to_string(status);
    }
    s->done = true;
  };
  if (send(rpc_, static_cast<rpc_cb>(cb), &slot) != 0) {
    slot.out.error = std::string(what) + " not sent: " + rpc_get_error(rpc_);
    reset();
    return slot.out;
  }
  if (!drive(slot.done)) {
    slot.out = Reply{};
    slot.out.error = std::string(what) + ": " + last_error_;
  }
  return std::move(slot.out);
}

Reply Nfs3Client::getattr(const Handle& h) {
  GETATTR3args a{};
  a.object = as_fh3(h);
  return call("GETATTR", [](void* d, Reply& r, void*) {
    auto* res = static_cast<GETATTR3res*>(d);
    r.status = res->status;
    if (res->status == NFS3_OK) r.attr = to_fattr(res->GETATTR3res_u.resok.obj_attributes);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_getattr_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::lookup(const Handle& dir, const std::string& name) {
  std::string n = name;
  LOOKUP3args a{};
  a.what = as_dirop(dir, n);
  return call("LOOKUP", [](void* d, Reply& r, void*) {
    auto* res = static_cast<LOOKUP3res*>(d);
    r.status = res->status;
    if (res->status == NFS3_OK) {
      const auto& ok = res->LOOKUP3res_u.resok;
      r.handle = to_handle(ok.object);
      r.attr = to_fattr(ok.obj_attributes);
      r.dir_attr = to_fattr(ok.dir_attributes);
    } else {
      r.dir_attr = to_fattr(res->LOOKUP3res_u.resfail.dir_attributes);
    }
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_lookup_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::access(const Handle& h, std::uint32_t bits) {
  ACCESS3args a{};
  a.object = as_fh3(h);
  a.access = bits;
  return call("ACCESS", [](void* d, Reply& r, void*) {
    auto* res = static_cast<ACCESS3res*>(d);
    r.status = res->status;
    if (res->status == NFS3_OK) {
      r.attr = to_fattr(res->ACCESS3res_u.resok.obj_attributes);
      r.access = res->ACCESS3res_u.resok.access;
    } else {
      r.attr = to_fattr(res->ACCESS3res_u.resfail.obj_attributes);
    }
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_access_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::readlink(const Handle& h) {
  READLINK3args a{};
  a.symlink = as_fh3(h);
  return call("READLINK", [](void* d, Reply& r, void*) {
    auto* res = static_cast<READLINK3res*>(d);
    r.status = res->status;
    if (res->status == NFS3_OK) {
      r.attr = to_fattr(res->READLINK3res_u.resok.symlink_attributes);
      if (res->READLINK3res_u.resok.data) r.data = res->READLINK3res_u.resok.data;
    } else {
      r.attr = to_fattr(res->READLINK3res_u.resfail.symlink_attributes);
    }
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_readlink_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::read(const Handle& h, std::uint64_t offset, std::uint32_t count) {
  READ3args a{};
  a.file = as_fh3(h);
  a.offset = offset;
  a.count = count;
  return call("READ", [](void* d, Reply& r, void*) {
    auto* res = static_cast<READ3res*>(d);
    r.status = res->status;
    if (res->status == NFS3_OK) {
      const auto& ok = res->READ3res_u.resok;
      r.attr = to_fattr(ok.file_attributes);
      r.data.assign(ok.data.data_val, ok.data.data_len);
      r.eof = ok.eof != 0;
    } else {
      r.attr = to_fattr(res->READ3res_u.resfail.file_attributes);
    }
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_read_async(rpc, cb, &a, p); });
}

namespace {
// One page of a listing: its entries, where to go on, and whether it was the last.
struct PageState {
  std::uint64_t cookie = 0;
  char verf[NFS3_COOKIEVERFSIZE] = {};
  bool eof = false;
};
constexpr int kMaxPages = 1000;

// What READDIR and READDIRPLUS differ in: their result's arms and their entries.
const READDIR3resok& ok_of(const READDIR3res& r) { return r.READDIR3res_u.resok; }
const READDIRPLUS3resok& ok_of(const READDIRPLUS3res& r) { return r.READDIRPLUS3res_u.resok; }
const post_op_attr& fail_dir_attr(const READDIR3res& r) { return r.READDIR3res_u.resfail.dir_attributes; }
const post_op_attr& fail_dir_attr(const READDIRPLUS3res& r) { return r.READDIRPLUS3res_u.resfail.dir_attributes; }
Entry to_entry(const entry3& e) { return {e.name, e.fileid, {}, std::nullopt}; }
Entry to_entry(const entryplus3& e) {
  return {e.name, e.fileid, to_handle(e.name_handle), to_fattr(e.name_attributes)};
}

/// Decodes one page of a listing into the reply, and where to go on into `extra`
/// (a PageState).
template <typename Res>
void decode_page(void* d, Reply& r, void* extra) {
  const auto& res = *static_cast<const Res*>(d);
  r.status = res.status;
  if (res.status != NFS3_OK) {
    r.dir_attr = to_fattr(fail_dir_attr(res));
    return;
  }
  const auto& ok = ok_of(res);
  r.dir_attr = to_fattr(ok.dir_attributes);
  auto& next = *static_cast<PageState*>(extra);
  std::memcpy(next.verf, ok.cookieverf, NFS3_COOKIEVERFSIZE);
  // libnfs places list entries only 4-byte aligned: copy each before reading it.
  using E = std::remove_cv_t<std::remove_pointer_t<decltype(ok.reply.entries)>>;
  for (const E* p = ok.reply.entries; p;) {
    E e;
    std::memcpy(&e, static_cast<const void*>(p), sizeof e);
    r.entries.push_back(to_entry(e));
    next.cookie = e.cookie;
    p = e.nextentry;
  }
  next.eof = ok.reply.eof != 0;
}
}  // namespace

template <typename Res, typename Args, typename Send>
Reply Nfs3Client::listing(const char* what, const Handle& dir, Args args, Send send) {
  Reply all;
  PageState at;
  for (int page = 0; page < kMaxPages; ++page) {
    Args a = args;
    a.dir = as_fh3(dir);
    a.cookie = at.cookie;
    std::memcpy(a.cookieverf, at.verf, NFS3_COOKIEVERFSIZE);
    PageState next;
    Reply r = call(what, &decode_page<Res>, [&](rpc_context* rpc, rpc_cb cb, void* p) { return send(rpc, cb, &a, p); },
                   &next);
    if (!r.transport_ok || r.status != kOk) {
      r.entries.insert(r.entries.begin(), all.entries.begin(), all.entries.end());
      return r;
    }
    at = next;
    all.transport_ok = true;
    all.status = kOk;
    all.dir_attr = r.dir_attr;
    for (auto& e : r.entries) all.entries.push_back(std::move(e));
    if (at.eof) return all;
    if (r.entries.empty()) break;
  }
  all.transport_ok = false;
  all.error = std::string(what) + " made no progress";
  return all;
}

Reply Nfs3Client::readdir(const Handle& dir) {
  READDIR3args a{};
  a.count = 8192;
  return listing<READDIR3res>("READDIR", dir, a, rpc_nfs3_readdir_async);
}

Reply Nfs3Client::readdirplus(const Handle& dir) {
  READDIRPLUS3args a{};
  a.dircount = 8192;
  a.maxcount = 65536;
  return listing<READDIRPLUS3res>("READDIRPLUS", dir, a, rpc_nfs3_readdirplus_async);
}

namespace {
/// CREATE, MKDIR and SYMLINK reply alike: the new object, its attributes, the dir's.
template <typename Res>
void decode_made(Reply& r, const Res& res, const auto& ok, const auto& fail) {
  r.status = res.status;
  if (res.status == NFS3_OK) {
    r.handle = to_handle(ok.obj);
    r.attr = to_fattr(ok.obj_attributes);
    r.dir_attr = to_fattr(ok.dir_wcc.after);
  } else {
    r.dir_attr = to_fattr(fail.dir_wcc.after);
  }
}

/// REMOVE and RMDIR reply alike: the directory's attributes after.
void decode_unlinked(Reply& r, nfsstat3 status, const wcc_data& ok, const wcc_data& fail) {
  r.status = status;
  r.dir_attr = to_fattr(status == NFS3_OK ? ok.after : fail.after);
}
}  // namespace

Reply Nfs3Client::create(const Handle& dir, const std::string& name, std::uint32_t mode) {
  std::string n = name;
  CREATE3args a{};
  a.where = as_dirop(dir, n);
  a.how.mode = GUARDED;
  set_mode(a.how.createhow3_u.obj_attributes, mode);
  return call("CREATE", [](void* d, Reply& r, void*) {
    auto* res = static_cast<CREATE3res*>(d);
    decode_made(r, *res, res->CREATE3res_u.resok, res->CREATE3res_u.resfail);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_create_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::mkdir(const Handle& dir, const std::string& name, std::uint32_t mode) {
  std::string n = name;
  MKDIR3args a{};
  a.where = as_dirop(dir, n);
  set_mode(a.attributes, mode);
  return call("MKDIR", [](void* d, Reply& r, void*) {
    auto* res = static_cast<MKDIR3res*>(d);
    decode_made(r, *res, res->MKDIR3res_u.resok, res->MKDIR3res_u.resfail);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_mkdir_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::symlink(const Handle& dir, const std::string& name, const std::string& target) {
  std::string n = name, t = target;
  SYMLINK3args a{};
  a.where = as_dirop(dir, n);
  a.symlink.symlink_data = t.data();
  return call("SYMLINK", [](void* d, Reply& r, void*) {
    auto* res = static_cast<SYMLINK3res*>(d);
    decode_made(r, *res, res->SYMLINK3res_u.resok, res->SYMLINK3res_u.resfail);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_symlink_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::remove(const Handle& dir, const std::string& name) {
  std::string n = name;
  REMOVE3args a{};
  a.object = as_dirop(dir, n);
  return call("REMOVE", [](void* d, Reply& r, void*) {
    auto* res = static_cast<REMOVE3res*>(d);
    decode_unlinked(r, res->status, res->REMOVE3res_u.resok.dir_wcc, res->REMOVE3res_u.resfail.dir_wcc);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_remove_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::rmdir(const Handle& dir, const std::string& name) {
  std::string n = name;
  RMDIR3args a{};
  a.object = as_dirop(dir, n);
  return call("RMDIR", [](void* d, Reply& r, void*) {
    auto* res = static_cast<RMDIR3res*>(d);
    decode_unlinked(r, res->status, res->RMDIR3res_u.resok.dir_wcc, res->RMDIR3res_u.resfail.dir_wcc);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_rmdir_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::rename(const Handle& from_dir, const std::string& from, const Handle& to_dir,
                         const std::string& to) {
  std::string f = from, t = to;
  RENAME3args a{};
  a.from = as_dirop(from_dir, f);
  a.to = as_dirop(to_dir, t);
  return call("RENAME", [](void* d, Reply& r, void*) {
    auto* res = static_cast<RENAME3res*>(d);
    r.status = res->status;
    const auto& w = res->status == NFS3_OK ? res->RENAME3res_u.resok.fromdir_wcc : res->RENAME3res_u.resfail.fromdir_wcc;
    const auto& w2 = res->status == NFS3_OK ? res->RENAME3res_u.resok.todir_wcc : res->RENAME3res_u.resfail.todir_wcc;
    r.dir_attr = to_fattr(w.after);
    r.dir2_attr = to_fattr(w2.after);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_rename_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::link(const Handle& file, const Handle& dir, const std::string& name) {
  std::string n = name;
  LINK3args a{};
  a.file = as_fh3(file);
  a.link = as_dirop(dir, n);
  return call("LINK", [](void* d, Reply& r, void*) {
    auto* res = static_cast<LINK3res*>(d);
    r.status = res->status;
    const auto& file_attr = res->status == NFS3_OK ? res->LINK3res_u.resok.file_attributes
                                                   : res->LINK3res_u.resfail.file_attributes;
    const auto& w = res->status == NFS3_OK ? res->LINK3res_u.resok.linkdir_wcc : res->LINK3res_u.resfail.linkdir_wcc;
    r.attr = to_fattr(file_attr);
    r.dir_attr = to_fattr(w.after);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_link_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::setattr(const Handle& h, const SetAttrs& what) {
  SETATTR3args a{};
  a.object = as_fh3(h);
  if (what.mode) set_mode(a.new_attributes, *what.mode);
  if (what.size) {
    a.new_attributes.size.set_it = 1;
    a.new_attributes.size.set_size3_u.size = *what.size;
  }
  return call("SETATTR", [](void* d, Reply& r, void*) {
    auto* res = static_cast<SETATTR3res*>(d);
    r.status = res->status;
    r.attr = to_fattr(res->status == NFS3_OK ? res->SETATTR3res_u.resok.obj_wcc.after
                                            : res->SETATTR3res_u.resfail.obj_wcc.after);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_setattr_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::write(const Handle& h, std::uint64_t offset, const std::string& data, bool file_sync) {
  std::string bytes = data;
  WRITE3args a{};
  a.file = as_fh3(h);
  a.offset = offset;
  a.count = static_cast<count3>(bytes.size());
  a.stable = file_sync ? FILE_SYNC : UNSTABLE;
  a.data.data_len = static_cast<u_int>(bytes.size());
  a.data.data_val = bytes.data();
  return call("WRITE", [](void* d, Reply& r, void*) {
    auto* res = static_cast<WRITE3res*>(d);
    r.status = res->status;
    r.attr = to_fattr(res->status == NFS3_OK ? res->WRITE3res_u.resok.file_wcc.after
                                            : res->WRITE3res_u.resfail.file_wcc.after);
    if (res->status == NFS3_OK) {
      std::memcpy(&r.verf, res->WRITE3res_u.resok.verf, sizeof r.verf);
      r.committed = res->WRITE3res_u.resok.committed;
    }
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_write_async(rpc, cb, &a, p); });
}

Reply Nfs3Client::commit(const Handle& h) {
  COMMIT3args a{};
  a.file = as_fh3(h);
  a.offset = 0;
  a.count = 0;
  return call("COMMIT", [](void* d, Reply& r, void*) {
    auto* res = static_cast<COMMIT3res*>(d);
    r.status = res->status;
    r.attr = to_fattr(res->status == NFS3_OK ? res->COMMIT3res_u.resok.file_wcc.after
                                            : res->COMMIT3res_u.resfail.file_wcc.after);
    if (res->status == NFS3_OK) std::memcpy(&r.verf, res->COMMIT3res_u.resok.verf, sizeof r.verf);
  }, [&](rpc_context* rpc, rpc_cb cb, void* p) { return rpc_nfs3_commit_async(rpc, cb, &a, p); });
}

Handle mount(std::uint16_t port, const std::string& path, std::string* error) {
  integ::RawMount m = integ::mount_root(port, path);
  if (!m.transport_ok || m.status != 0) {
    if (error) *error = m.transport_ok ? "MNT status " + std::to_string(m.status) : m.error;
    return {};
  }
  return m.root;
}

const char* status_name(std::uint32_t status) {
  switch (status) {
    case kOk: return "OK";
    case kPerm: return "PERM";
    case kNoent: return "NOENT";
    case 5: return "IO";
    case kAcces: return "ACCES";
    case kExist: return "EXIST";
    case 18: return "XDEV";
    case kNotdir: return "NOTDIR";
    case kIsdir: return "ISDIR";
    case kInval: return "INVAL";
    case 27: return "FBIG";
    case 28: return "NOSPC";
    case kRofs: return "ROFS";
    case 31: return "MLINK";
    case 63: return "NAMETOOLONG";
    case kNotempty: return "NOTEMPTY";
    case kStale: return "STALE";
    case 10001: return "BADHANDLE";
    case 10004: return "NOTSUPP";
    case 10006: return "SERVERFAULT";
    case 10007: return "BADTYPE";
    case kJukebox: return "JUKEBOX";
    default: return "?";
  }
}

}  // namespace difftest
