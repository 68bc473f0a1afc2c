#include "tests/support/raw_nfs.h"

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

namespace integ {
namespace {

/// Per-call state shared with the libnfs callback; the callback copies what we
/// keep because libnfs frees the decoded result when it returns.
template <typename Out>
struct Pending {
  bool done = false;
  Out out;
};

nfs_fh3 as_fh3(const Handle& h) {
  nfs_fh3 fh{};
  fh.data.data_len = static_cast<u_int>(h.size());
  fh.data.data_val = const_cast<char*>(reinterpret_cast<const char*>(h.data()));
  return fh;
}

void record_transport(RawStatus& out, rpc_context* rpc, int status, void* data) {
  out.transport_ok = status == RPC_STATUS_SUCCESS;
  if (!out.transport_ok) {
    out.error = status == RPC_STATUS_ERROR && data ? static_cast<const char*>(data)
                                                   : "rpc status " + std::to_string(status);
  }
}

}  // namespace

RawNfsConnection::RawNfsConnection() {
  rpc_ = rpc_init_context();
  if (!rpc_) throw std::runtime_error("rpc_init_context failed");
}

RawNfsConnection::~RawNfsConnection() {
  if (rpc_) rpc_destroy_context(rpc_);
}

std::string RawNfsConnection::error() const {
  const char* e = rpc_get_error(rpc_);
  return e ? e : "";
}

bool RawNfsConnection::drive(const bool& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{rpc_get_fd(rpc_), static_cast<short>(rpc_which_events(rpc_)), 0};
    int n = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left.count(), 100)));
    if (n < 0) return false;
    if (rpc_service(rpc_, n > 0 ? pfd.revents : 0) < 0) return done;
  }
  return true;
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
        if (ok.obj_attributes.attributes_follow) st->out.fileid = ok.obj_attributes.post_op_attr_u.attributes.fileid;
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
