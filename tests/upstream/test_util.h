// Small comparisons between NFS attributes and the local filesystem's stat().
#pragma once

#include <sys/stat.h>

#include <string>

#include <gtest/gtest.h>

#include "protocol/nfs3_types.h"

namespace nfsgw::upstream::test {

inline struct stat lstat_or_fail(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

inline nfs3::FileType type_of(mode_t m) {
  if (S_ISDIR(m)) return nfs3::FileType::Dir;
  if (S_ISLNK(m)) return nfs3::FileType::Lnk;
  if (S_ISFIFO(m)) return nfs3::FileType::Fifo;
  if (S_ISCHR(m)) return nfs3::FileType::Chr;
  if (S_ISBLK(m)) return nfs3::FileType::Blk;
  if (S_ISSOCK(m)) return nfs3::FileType::Sock;
  return nfs3::FileType::Reg;
}

/// Every fattr3 field that the VFS origin takes straight from stat().
inline void expect_matches_stat(const nfs3::Fattr& a, const std::string& path) {
  const struct stat st = lstat_or_fail(path);
  EXPECT_EQ(a.type, type_of(st.st_mode)) << path;
  EXPECT_EQ(a.mode, st.st_mode & 07777) << path;
  EXPECT_EQ(a.nlink, st.st_nlink) << path;
  EXPECT_EQ(a.uid, st.st_uid) << path;
  EXPECT_EQ(a.gid, st.st_gid) << path;
  EXPECT_EQ(a.size, static_cast<std::uint64_t>(st.st_size)) << path;
  EXPECT_EQ(a.used, static_cast<std::uint64_t>(st.st_blocks) * 512) << path;
  EXPECT_EQ(a.fileid, st.st_ino) << path;
  EXPECT_EQ(a.mtime.seconds, static_cast<std::uint32_t>(st.st_mtim.tv_sec)) << path;
  EXPECT_EQ(a.mtime.nseconds, static_cast<std::uint32_t>(st.st_mtim.tv_nsec)) << path;
  EXPECT_EQ(a.ctime.seconds, static_cast<std::uint32_t>(st.st_ctim.tv_sec)) << path;
  EXPECT_EQ(a.ctime.nseconds, static_cast<std::uint32_t>(st.st_ctim.tv_nsec)) << path;
}

}  // namespace nfsgw::upstream::test
