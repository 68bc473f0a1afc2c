#include "tests/support/raw_nfs.h"
#include "tests/support/raw_nfs_values.h"

// clang-format off
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
// clang-format on
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>
#include <stdexcept>

namespace integ {
namespace {

/// Per-call state shared with the libnfs callback; the callback copies what we
/// keep because libnfs frees the decoded result when it returns.
template <typename Out>
struct Pending {
  bool done = false;
  Out out;
};

void record_transport(RawStatus& out, rpc_context* rpc, int status, void* data) {
  out.transport_ok = status == RPC_STATUS_SUCCESS;
  if (!out.transport_ok) {
    out.error = status == RPC_STATUS_ERROR && data ? static_cast<const char*>(data)
                                                   : "rpc status " + std::to_string(status);
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const RawFattr& a) {
  char mode[16];
  std::snprintf(mode, sizeof mode, "%04o", a.mode);
  return os << "type " << a.type << " mode " << mode << " nlink " << a.nlink << " uid " << a.uid << " gid " << a.gid
            << " size " << a.size << " fileid " << a.fileid << " mtime " << a.mtime_sec << "." << a.mtime_nsec
            << " ctime " << a.ctime_sec << "." << a.ctime_nsec;
}

RawNfsConnection::RawNfsConnection() {
  rpc_ = rpc_init_context();
  if (!rpc_) throw std::runtime_error("rpc_init_context failed");
}

RawNfsConnection::~RawNfsConnection() {
  if (rpc_) rpc_destroy_context(rpc_);
}

std::string RawNfsConnection::error() const {
  const char* e = rpc_get_error(rpc_);
  return e && *e ? e : abandoned_error_;
}

void RawNfsConnection::abandon() {
  const char* e = rpc_get_error(rpc_);
  abandoned_error_ = e && *e ? e : "connection dropped";
  rpc_destroy_context(rpc_);
  rpc_ = rpc_init_context();
  if (!rpc_) throw std::runtime_error("rpc_init_context failed");
}

template <typename Pred>
bool RawNfsConnection::drive_until(Pred finished) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  // A call left queued when this returns would later be called back into its
  // caller's finished stack frame: on any failure the context goes, with its calls.
  while (!finished()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      abandon();
      return false;
    }
    pollfd pfd{rpc_get_fd(rpc_), static_cast<short>(rpc_which_events(rpc_)), 0};
    int n = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left.count(), 100)));
    if (n < 0 || rpc_service(rpc_, n > 0 ? pfd.revents : 0) < 0) {
      const bool ok = finished();
      abandon();
      return ok;
    }
  }
  return true;
}

bool RawNfsConnection::drive(const bool& done) {
  return drive_until([&done] { return done; });
}

void RawNfsConnection::set_credentials(std::uint32_t uid, std::uint32_t gid, const std::vector<std::uint32_t>& groups) {
  std::vector<std::uint32_t> g = groups;  // libnfs encodes them at once; it does not keep the pointer
  rpc_set_auth(rpc_, libnfs_authunix_create("nfsgw-integ", uid, gid, static_cast<std::uint32_t>(g.size()),
                                            g.empty() ? nullptr : g.data()));
}

bool RawNfsConnection::connect(std::uint16_t port, std::uint32_t program, std::uint32_t version) {
  Pending<RawStatus> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawStatus>*>(priv);
    record_transport(st->out, rpc, status, data);
    st->done = true;
  };
  if (rpc_connect_port_async(rpc_, "127.0.0.1", port, program, version, cb, &p) != 0) return false;
  return drive(p.done) && p.out.transport_ok;
}

RawMount RawNfsConnection::mnt(const std::string& export_path) {
  Pending<RawMount> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawMount>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<mountres3*>(data);
      st->out.status = res->fhs_status;
      if (res->fhs_status == MNT3_OK) {
        auto& fh = res->mountres3_u.mountinfo.fhandle;
        st->out.root.assign(fh.fhandle3_val, fh.fhandle3_val + fh.fhandle3_len);
      }
    }
    st->done = true;
  };
  std::string name = export_path;
  if (rpc_mount3_mnt_async(rpc_, cb, name.data(), &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawMount{}, p.out.error = "MNT timed out or connection failed: " + error();
  return p.out;
}

RawAttr RawNfsConnection::getattr(const Handle& fh) {
  Pending<RawAttr> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawAttr>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<GETATTR3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& a = res->GETATTR3res_u.resok.obj_attributes;
        st->out.type = a.type;
        st->out.fileid = a.fileid;
        st->out.size = a.size;
        st->out.attr = to_fattr(a);
      }
    }
    st->done = true;
  };
  GETATTR3args args{};
  args.object = as_fh3(fh);
  if (rpc_nfs3_getattr_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawAttr{}, p.out.error = "GETATTR timed out or connection failed: " + error();
  return p.out;
}

RawLookup RawNfsConnection::lookup(const Handle& dir, const std::string& name) {
  Pending<RawLookup> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawLookup>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<LOOKUP3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& ok = res->LOOKUP3res_u.resok;
        st->out.handle.assign(ok.object.data.data_val, ok.object.data.data_val + ok.object.data.data_len);
        st->out.attr = to_fattr(ok.obj_attributes);
        if (st->out.attr) st->out.fileid = st->out.attr->fileid;
        st->out.dir_attr = to_fattr(ok.dir_attributes);
      } else {
        st->out.dir_attr = to_fattr(res->LOOKUP3res_u.resfail.dir_attributes);
      }
    }
    st->done = true;
  };
  std::string n = name;
  LOOKUP3args args{};
  args.what.dir = as_fh3(dir);
  args.what.name = n.data();
  if (rpc_nfs3_lookup_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawLookup{}, p.out.error = "LOOKUP timed out or connection failed: " + error();
  return p.out;
}

RawRead RawNfsConnection::read(const Handle& fh, std::uint64_t offset, std::uint32_t count) {
  Pending<RawRead> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawRead>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<READ3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& ok = res->READ3res_u.resok;
        st->out.data.assign(ok.data.data_val, ok.data.data_val + ok.data.data_len);
        st->out.eof = ok.eof != 0;
        st->out.attr = to_fattr(ok.file_attributes);
      }
    }
    st->done = true;
  };
  READ3args args{};
  args.file = as_fh3(fh);
  args.offset = offset;
  args.count = count;
  if (rpc_nfs3_read_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawRead{}, p.out.error = "READ timed out or connection failed: " + error();
  return p.out;
}

RawReaddir RawNfsConnection::readdir_all(const Handle& dir, std::uint32_t count) {
  struct Page {
    RawStatus st;
    std::vector<RawDirEntry> entries;
    std::optional<RawFattr> dir_attr;
    std::uint64_t last_cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {};
    bool eof = false;
  };
  RawReaddir out;
  std::uint64_t cookie = 0;
  char verf[NFS3_COOKIEVERFSIZE] = {};
  for (;;) {
    Pending<Page> p;
    auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
      auto* st = static_cast<Pending<Page>*>(priv);
      record_transport(st->out.st, rpc, status, data);
      if (st->out.st.transport_ok) {
        auto* res = static_cast<READDIR3res*>(data);
        st->out.st.status = res->status;
        if (res->status == NFS3_OK) {
          const auto& ok = res->READDIR3res_u.resok;
          std::memcpy(st->out.verf, ok.cookieverf, NFS3_COOKIEVERFSIZE);
          st->out.dir_attr = to_fattr(ok.dir_attributes);
          // libnfs 4.0 places list entries only 4-byte aligned: copy each one out
          // before reading its 8-byte fields (UBSan flags the direct access).
          for (const entry3* p = ok.reply.entries; p;) {
            entry3 e;
            std::memcpy(&e, static_cast<const void*>(p), sizeof e);
            st->out.entries.push_back({e.name, e.fileid});
            st->out.last_cookie = e.cookie;
            p = e.nextentry;
          }
          st->out.eof = ok.reply.eof != 0;
        }
      }
      st->done = true;
    };
    READDIR3args args{};
    args.dir = as_fh3(dir);
    args.cookie = cookie;
    std::memcpy(args.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    args.count = count;
    if (rpc_nfs3_readdir_async(rpc_, cb, &args, &p) != 0) {
      out.error = error();
      return out;
    }
    if (!drive(p.done)) {
      out.transport_ok = false;
      out.error = "READDIR timed out or connection failed: " + error();
      return out;
    }
    ++out.pages;
    static_cast<RawStatus&>(out) = p.out.st;
    out.dir_attr = p.out.dir_attr;
    if (!p.out.st.transport_ok || p.out.st.status != NFS3_OK) return out;
    out.entries.insert(out.entries.end(), p.out.entries.begin(), p.out.entries.end());
    if (p.out.eof) return out;
    if (p.out.entries.empty() || out.pages > 100000) {
      out.error = "READDIR made no progress";
      out.transport_ok = false;
      return out;
    }
    cookie = p.out.last_cookie;
    std::memcpy(verf, p.out.verf, NFS3_COOKIEVERFSIZE);
  }
}

RawPathconf RawNfsConnection::pathconf(const Handle& fh) {
  Pending<RawPathconf> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawPathconf>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<PATHCONF3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& ok = res->PATHCONF3res_u.resok;
        st->out.linkmax = ok.linkmax;
        st->out.name_max = ok.name_max;
        st->out.no_trunc = ok.no_trunc;
        st->out.chown_restricted = ok.chown_restricted;
        st->out.case_insensitive = ok.case_insensitive;
        st->out.case_preserving = ok.case_preserving;
        st->out.attr = to_fattr(ok.obj_attributes);
      }
    }
    st->done = true;
  };
  PATHCONF3args args{};
  args.object = as_fh3(fh);
  if (rpc_nfs3_pathconf_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawPathconf{}, p.out.error = "PATHCONF timed out or connection failed: " + error();
  return p.out;
}

RawFsinfo RawNfsConnection::fsinfo(const Handle& root) {
  Pending<RawFsinfo> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawFsinfo>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<FSINFO3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& ok = res->FSINFO3res_u.resok;
        st->out.rtmax = ok.rtmax;
        st->out.rtpref = ok.rtpref;
        st->out.wtmax = ok.wtmax;
        st->out.wtpref = ok.wtpref;
        st->out.dtpref = ok.dtpref;
        st->out.maxfilesize = ok.maxfilesize;
        st->out.properties = ok.properties;
        st->out.attr = to_fattr(ok.obj_attributes);
      }
    }
    st->done = true;
  };
  FSINFO3args args{};
  args.fsroot = as_fh3(root);
  if (rpc_nfs3_fsinfo_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawFsinfo{}, p.out.error = "FSINFO timed out or connection failed: " + error();
  return p.out;
}

RawFsstat RawNfsConnection::fsstat(const Handle& fh) {
  Pending<RawFsstat> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawFsstat>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<FSSTAT3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& ok = res->FSSTAT3res_u.resok;
        st->out.tbytes = ok.tbytes;
        st->out.fbytes = ok.fbytes;
        st->out.abytes = ok.abytes;
        st->out.tfiles = ok.tfiles;
        st->out.ffiles = ok.ffiles;
        st->out.afiles = ok.afiles;
        st->out.attr = to_fattr(ok.obj_attributes);
      }
    }
    st->done = true;
  };
  FSSTAT3args args{};
  args.fsroot = as_fh3(fh);
  if (rpc_nfs3_fsstat_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawFsstat{}, p.out.error = "FSSTAT timed out or connection failed: " + error();
  return p.out;
}

RawSetattrResult RawNfsConnection::setattr(const Handle& fh, const RawSetattr& set) {
  Pending<RawSetattrResult> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawSetattrResult>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<SETATTR3res*>(data);
      st->out.status = res->status;
      const wcc_data& wcc =
          res->status == NFS3_OK ? res->SETATTR3res_u.resok.obj_wcc : res->SETATTR3res_u.resfail.obj_wcc;
      st->out.after = to_fattr(wcc.after);
    }
    st->done = true;
  };
  SETATTR3args args{};
  args.object = as_fh3(fh);
  if (set.mode) {
    args.new_attributes.mode.set_it = 1;
    args.new_attributes.mode.set_mode3_u.mode = *set.mode;
  }
  if (set.uid) {
    args.new_attributes.uid.set_it = 1;
    args.new_attributes.uid.set_uid3_u.uid = *set.uid;
  }
  if (set.gid) {
    args.new_attributes.gid.set_it = 1;
    args.new_attributes.gid.set_gid3_u.gid = *set.gid;
  }
  if (rpc_nfs3_setattr_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawSetattrResult{}, p.out.error = "SETATTR timed out or connection failed: " + error();
  return p.out;
}

RawAccess RawNfsConnection::access(const Handle& fh, std::uint32_t bits) {
  Pending<RawAccess> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawAccess>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<ACCESS3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        st->out.granted = res->ACCESS3res_u.resok.access;
        st->out.attr = to_fattr(res->ACCESS3res_u.resok.obj_attributes);
      }
    }
    st->done = true;
  };
  ACCESS3args args{};
  args.object = as_fh3(fh);
  args.access = bits;
  if (rpc_nfs3_access_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawAccess{}, p.out.error = "ACCESS timed out or connection failed: " + error();
  return p.out;
}

RawReadlink RawNfsConnection::readlink(const Handle& link) {
  Pending<RawReadlink> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawReadlink>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<READLINK3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        if (res->READLINK3res_u.resok.data) st->out.target = res->READLINK3res_u.resok.data;
        st->out.attr = to_fattr(res->READLINK3res_u.resok.symlink_attributes);
      }
    }
    st->done = true;
  };
  READLINK3args args{};
  args.symlink = as_fh3(link);
  if (rpc_nfs3_readlink_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawReadlink{}, p.out.error = "READLINK timed out or connection failed: " + error();
  return p.out;
}

RawReaddirPlus RawNfsConnection::readdirplus_all(const Handle& dir, std::uint32_t dircount, std::uint32_t maxcount) {
  struct Page {
    RawStatus st;
    std::vector<RawPlusEntry> entries;
    std::optional<RawFattr> dir_attr;
    std::uint64_t last_cookie = 0;
    char verf[NFS3_COOKIEVERFSIZE] = {};
    bool eof = false;
  };
  RawReaddirPlus out;
  std::uint64_t cookie = 0;
  char verf[NFS3_COOKIEVERFSIZE] = {};
  for (;;) {
    Pending<Page> p;
    auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
      auto* st = static_cast<Pending<Page>*>(priv);
      record_transport(st->out.st, rpc, status, data);
      if (st->out.st.transport_ok) {
        auto* res = static_cast<READDIRPLUS3res*>(data);
        st->out.st.status = res->status;
        if (res->status == NFS3_OK) {
          const auto& ok = res->READDIRPLUS3res_u.resok;
          std::memcpy(st->out.verf, ok.cookieverf, NFS3_COOKIEVERFSIZE);
          st->out.dir_attr = to_fattr(ok.dir_attributes);
          // As in readdir_all: libnfs's list entries may be misaligned, copy first.
          for (const entryplus3* p = ok.reply.entries; p;) {
            entryplus3 e;
            std::memcpy(&e, static_cast<const void*>(p), sizeof e);
            RawPlusEntry out;
            out.name = e.name;
            out.fileid = e.fileid;
            if (e.name_handle.handle_follows) out.handle = to_handle(e.name_handle.post_op_fh3_u.handle);
            out.attr = to_fattr(e.name_attributes);
            st->out.entries.push_back(std::move(out));
            st->out.last_cookie = e.cookie;
            p = e.nextentry;
          }
          st->out.eof = ok.reply.eof != 0;
        } else {
          st->out.dir_attr = to_fattr(res->READDIRPLUS3res_u.resfail.dir_attributes);
        }
      }
      st->done = true;
    };
    READDIRPLUS3args args{};
    args.dir = as_fh3(dir);
    args.cookie = cookie;
    std::memcpy(args.cookieverf, verf, NFS3_COOKIEVERFSIZE);
    args.dircount = dircount;
    args.maxcount = maxcount;
    if (rpc_nfs3_readdirplus_async(rpc_, cb, &args, &p) != 0) {
      out.error = error();
      return out;
    }
    if (!drive(p.done)) {
      out.transport_ok = false;
      out.error = "READDIRPLUS timed out or connection failed: " + error();
      return out;
    }
    ++out.pages;
    static_cast<RawStatus&>(out) = p.out.st;
    out.dir_attr = p.out.dir_attr;
    if (!p.out.st.transport_ok || p.out.st.status != NFS3_OK) return out;
    for (auto& e : p.out.entries) out.entries.push_back(std::move(e));
    if (p.out.eof) return out;
    if (p.out.entries.empty() || out.pages > 100000) {
      out.error = "READDIRPLUS made no progress";
      out.transport_ok = false;
      return out;
    }
    cookie = p.out.last_cookie;
    std::memcpy(verf, p.out.verf, NFS3_COOKIEVERFSIZE);
  }
}

RawCreate RawNfsConnection::create(const Handle& dir, const std::string& name, std::uint32_t mode) {
  Pending<RawCreate> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawCreate>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<CREATE3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& ok = res->CREATE3res_u.resok;
        if (ok.obj.handle_follows) st->out.handle = to_handle(ok.obj.post_op_fh3_u.handle);
        st->out.attr = to_fattr(ok.obj_attributes);
      }
    }
    st->done = true;
  };
  std::string n = name;
  CREATE3args args{};
  args.where = as_dirop(dir, n);
  args.how.mode = GUARDED;
  args.how.createhow3_u.obj_attributes.mode.set_it = 1;
  args.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = mode;
  if (rpc_nfs3_create_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawCreate{}, p.out.error = "CREATE timed out or connection failed: " + error();
  return p.out;
}

RawStatus RawNfsConnection::remove(const Handle& dir, const std::string& name) {
  Pending<RawStatus> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawStatus>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) st->out.status = static_cast<REMOVE3res*>(data)->status;
    st->done = true;
  };
  std::string n = name;
  REMOVE3args args{};
  args.object = as_dirop(dir, n);
  if (rpc_nfs3_remove_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawStatus{}, p.out.error = "REMOVE timed out or connection failed: " + error();
  return p.out;
}

RawStatus RawNfsConnection::rename(const Handle& from_dir, const std::string& from, const Handle& to_dir,
                                   const std::string& to) {
  Pending<RawStatus> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawStatus>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) st->out.status = static_cast<RENAME3res*>(data)->status;
    st->done = true;
  };
  std::string f = from, t = to;
  RENAME3args args{};
  args.from = as_dirop(from_dir, f);
  args.to = as_dirop(to_dir, t);
  if (rpc_nfs3_rename_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawStatus{}, p.out.error = "RENAME timed out or connection failed: " + error();
  return p.out;
}

RawWrite RawNfsConnection::write(const Handle& fh, std::uint64_t offset, const std::string& data,
                                 std::uint32_t stable) {
  Pending<RawWrite> p;
  auto cb = [](rpc_context* rpc, int status, void* res_data, void* priv) {
    auto* st = static_cast<Pending<RawWrite>*>(priv);
    record_transport(st->out, rpc, status, res_data);
    if (st->out.transport_ok) {
      auto* res = static_cast<WRITE3res*>(res_data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        const auto& ok = res->WRITE3res_u.resok;
        st->out.count = ok.count;
        st->out.committed = ok.committed;
        std::memcpy(&st->out.verf, ok.verf, sizeof st->out.verf);
      }
    }
    st->done = true;
  };
  std::string bytes = data;
  WRITE3args args{};
  args.file = as_fh3(fh);
  args.offset = offset;
  args.count = static_cast<count3>(bytes.size());
  args.stable = static_cast<stable_how>(stable);
  args.data.data_len = static_cast<u_int>(bytes.size());
  args.data.data_val = bytes.data();
  if (rpc_nfs3_write_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawWrite{}, p.out.error = "WRITE timed out or connection failed: " + error();
  return p.out;
}

RawCommit RawNfsConnection::commit(const Handle& fh, std::uint64_t offset, std::uint32_t count) {
  Pending<RawCommit> p;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Pending<RawCommit>*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<COMMIT3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) std::memcpy(&st->out.verf, res->COMMIT3res_u.resok.verf, sizeof st->out.verf);
    }
    st->done = true;
  };
  COMMIT3args args{};
  args.file = as_fh3(fh);
  args.offset = offset;
  args.count = count;
  if (rpc_nfs3_commit_async(rpc_, cb, &args, &p) != 0) {
    p.out.error = error();
    return p.out;
  }
  if (!drive(p.done)) p.out = RawCommit{}, p.out.error = "COMMIT timed out or connection failed: " + error();
  return p.out;
}

std::vector<RawAttr> RawNfsConnection::getattr_pipelined(const std::vector<Handle>& handles, unsigned window) {
  struct Slot {
    bool done = false;
    RawAttr out;
    std::size_t* finished = nullptr;
  };
  std::vector<Slot> slots(handles.size());
  std::size_t sent = 0, finished = 0;
  auto cb = [](rpc_context* rpc, int status, void* data, void* priv) {
    auto* st = static_cast<Slot*>(priv);
    record_transport(st->out, rpc, status, data);
    if (st->out.transport_ok) {
      auto* res = static_cast<GETATTR3res*>(data);
      st->out.status = res->status;
      if (res->status == NFS3_OK) {
        st->out.attr = to_fattr(res->GETATTR3res_u.resok.obj_attributes);
        st->out.type = st->out.attr.type;
        st->out.fileid = st->out.attr.fileid;
        st->out.size = st->out.attr.size;
      }
    }
    st->done = true;
    ++*st->finished;
  };
  if (window == 0) window = 1;
  bool failed = false;
  while (finished < handles.size() && !failed) {
    while (sent < handles.size() && sent - finished < window) {
      Slot& slot = slots[sent];
      slot.finished = &finished;
      GETATTR3args args{};
      args.object = as_fh3(handles[sent]);
      if (rpc_nfs3_getattr_async(rpc_, cb, &args, &slot) != 0) {
        failed = true;
        break;
      }
      ++sent;
    }
    if (failed) break;
    const std::size_t before = finished;
    if (!drive_until([&] { return finished > before; })) failed = true;
  }
  if (failed) {
    // Calls still queued reference `slots`: a fresh context drops them (they are
    // called back with RPC_STATUS_CANCEL now, while `slots` is alive).
    const std::string why = error();
    rpc_destroy_context(rpc_);
    rpc_ = rpc_init_context();
    if (!rpc_) throw std::runtime_error("rpc_init_context failed");
    for (auto& slot : slots) {
      if (!slot.done || !slot.out.transport_ok) {
        slot.out.transport_ok = false;
        slot.out.error = "GETATTR not answered (pipelined): " + why;
      }
    }
  }
  std::vector<RawAttr> out;
  out.reserve(slots.size());
  for (auto& slot : slots) out.push_back(std::move(slot.out));
  return out;
}

RawMount mount_root(std::uint16_t port, const std::string& export_path) {
  RawNfsConnection c;
  if (!c.connect(port, MOUNT_PROGRAM, MOUNT_V3)) {
    RawMount m;
    m.error = "connect to MOUNT on port " + std::to_string(port) + ": " + c.error();
    return m;
  }
  return c.mnt(export_path);
}

}  // namespace integ
