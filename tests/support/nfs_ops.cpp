#include "tests/support/nfs_ops.h"

#include <fcntl.h>
#include <nfsc/libnfs.h>

#include <algorithm>

namespace integ {

std::ostream& operator<<(std::ostream& os, const Attrs& a) {
  return os << "{rc=" << a.rc << " ino=" << a.ino << " mode=0" << std::oct << a.mode << std::dec
            << " nlink=" << a.nlink << " uid=" << a.uid << " gid=" << a.gid << " size=" << a.size
            << " rdev=" << a.rdev << " mtime=" << a.mtime << "." << a.mtime_nsec << " ctime=" << a.ctime << "."
            << a.ctime_nsec << "}";
}

std::ostream& operator<<(std::ostream& os, const DirEntry& e) {
  return os << "{" << e.name << " ino=" << e.inode << " size=" << e.size << " type=" << e.type << " mode=0"
            << std::oct << e.mode << std::dec << "}";
}

Attrs lstat_of(nfs_context* nfs, const std::string& path) {
  nfs_stat_64 st{};
  Attrs a;
  a.rc = nfs_lstat64(nfs, path.c_str(), &st);
  if (a.rc != 0) return a;
  a.ino = st.nfs_ino;
  a.mode = st.nfs_mode;
  a.nlink = st.nfs_nlink;
  a.uid = st.nfs_uid;
  a.gid = st.nfs_gid;
  a.size = st.nfs_size;
  a.rdev = st.nfs_rdev;
  a.mtime = st.nfs_mtime;
  a.mtime_nsec = st.nfs_mtime_nsec;
  a.ctime = st.nfs_ctime;
  a.ctime_nsec = st.nfs_ctime_nsec;
  return a;
}

std::vector<DirEntry> list_dir(nfs_context* nfs, const std::string& path, int* rc) {
  std::vector<DirEntry> out;
  nfsdir* dir = nullptr;
  *rc = nfs_opendir(nfs, path.c_str(), &dir);
  if (*rc != 0) return out;
  while (nfsdirent* e = nfs_readdir(nfs, dir)) {
    out.push_back({e->name, e->inode, e->size, e->type, e->mode});
  }
  nfs_closedir(nfs, dir);
  std::sort(out.begin(), out.end());
  return out;
}

int write_file(nfs_context* nfs, const std::string& path, const std::string& data) {
  nfsfh* fh = nullptr;
  int rc = nfs_open2(nfs, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644, &fh);
  if (rc != 0) return rc;
  std::size_t off = 0;
  while (off < data.size()) {
    int n = nfs_pwrite(nfs, fh, off, data.size() - off, data.data() + off);
    if (n <= 0) {
      nfs_close(nfs, fh);
      return n < 0 ? n : -5;
    }
    off += static_cast<std::size_t>(n);
  }
  return nfs_close(nfs, fh);
}

std::string read_file(nfs_context* nfs, const std::string& path, int* rc) {
  nfsfh* fh = nullptr;
  std::string out;
  *rc = nfs_open(nfs, path.c_str(), O_RDONLY, &fh);
  if (*rc != 0) return out;
  char buf[65536];
  for (;;) {
    int n = nfs_pread(nfs, fh, out.size(), sizeof buf, buf);
    if (n < 0) {
      *rc = n;
      break;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  nfs_close(nfs, fh);
  return out;
}

}  // namespace integ
