// Conversions between libnfs's raw NFSv3 structures and the test clients' own
// values (Handle, RawFattr), for the clients built on libnfs's raw API
// (tests/support/raw_nfs.cpp, tests/difftest/nfs3_client.cpp). Includes libnfs's
// raw headers: never include it beside libtirpc's rpc/rpc.h.
#pragma once

// clang-format off
#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>
// clang-format on

#include <optional>
#include <string>

#include "tests/support/raw_nfs.h"

namespace integ {

/// A handle for a call's arguments: it points into `h`, which must outlive the call.
inline nfs_fh3 as_fh3(const Handle& h) {
  nfs_fh3 fh{};
  fh.data.data_len = static_cast<u_int>(h.size());
  fh.data.data_val = const_cast<char*>(reinterpret_cast<const char*>(h.data()));
  return fh;
}

inline Handle to_handle(const nfs_fh3& fh) { return Handle(fh.data.data_val, fh.data.data_val + fh.data.data_len); }

/// Empty when the server sent no handle.
inline Handle to_handle(const post_op_fh3& fh) {
  return fh.handle_follows ? to_handle(fh.post_op_fh3_u.handle) : Handle{};
}

inline RawFattr to_fattr(const fattr3& a) {
  RawFattr f;
  f.type = a.type;
  f.mode = a.mode;
  f.nlink = a.nlink;
  f.uid = a.uid;
  f.gid = a.gid;
  f.size = a.size;
  f.fileid = a.fileid;
  f.mtime_sec = a.mtime.seconds;
  f.mtime_nsec = a.mtime.nseconds;
  f.ctime_sec = a.ctime.seconds;
  f.ctime_nsec = a.ctime.nseconds;
  return f;
}

inline std::optional<RawFattr> to_fattr(const post_op_attr& a) {
  if (!a.attributes_follow) return std::nullopt;
  return to_fattr(a.post_op_attr_u.attributes);
}

/// Directory and name for a call's arguments: `name` must outlive the call
/// (libnfs encodes it before the call returns).
inline diropargs3 as_dirop(const Handle& dir, std::string& name) {
  diropargs3 d{};
  d.dir = as_fh3(dir);
  d.name = name.data();
  return d;
}

}  // namespace integ
