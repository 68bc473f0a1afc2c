// Plain-struct wrappers over libnfs's high-level sync calls that tests compare
// between the origin and the gateway (stat, listing, whole-file read/write).
// libnfs types stay out of this header.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

struct nfs_context;

namespace integ {

struct Attrs {
  int rc = 0;  // 0, or libnfs's negative errno
  std::uint64_t ino = 0, mode = 0, nlink = 0, uid = 0, gid = 0, size = 0, rdev = 0;
  std::uint64_t mtime = 0, mtime_nsec = 0, ctime = 0, ctime_nsec = 0;
};
std::ostream& operator<<(std::ostream& os, const Attrs& a);

/// lstat (the link itself for symlinks).
Attrs lstat_of(nfs_context* nfs, const std::string& path);

struct DirEntry {
  std::string name;
  std::uint64_t inode = 0, size = 0;
  std::uint32_t type = 0, mode = 0;
  bool operator==(const DirEntry&) const = default;
  bool operator<(const DirEntry& o) const { return name < o.name; }
};
std::ostream& operator<<(std::ostream& os, const DirEntry& e);

/// All entries of a directory (through READDIRPLUS, paged by libnfs), sorted by name.
/// `rc` gets 0 or the negative errno of opendir.
std::vector<DirEntry> list_dir(nfs_context* nfs, const std::string& path, int* rc);

/// Creates/truncates `path` (mode 0644) and writes `data`; 0 or negative errno.
int write_file(nfs_context* nfs, const std::string& path, const std::string& data);
/// Reads a whole file; `rc` gets 0 or negative errno.
std::string read_file(nfs_context* nfs, const std::string& path, int* rc);

}  // namespace integ
