// NFSv3 encodings compared byte for byte with libnfs's generated XDR routines,
// an implementation of RFC 1813 written independently of ours.
#include <gtest/gtest.h>

#include "protocol/nfs3_codec.h"
#include "tests/unit/protocol/libnfs_reference.h"

namespace nfsgw::nfs3 {
namespace {

namespace ref = nfsgw::test::libnfs_ref;
using Bytes = std::vector<std::uint8_t>;

template <class T>
Bytes ours(const T& v) {
  Bytes out;
  xdr::Writer w(out);
  encode(w, v);
  return out;
}

template <class T>
void expect_same_as_libnfs(const T& v) {
  Bytes want = ref::encode(v);
  ASSERT_FALSE(want.empty()) << "libnfs refused to encode the value";
  EXPECT_EQ(ours(v), want);
}

FileHandle fh(std::uint8_t seed, std::size_t len) {
  std::vector<std::uint8_t> b(len);
  for (std::size_t i = 0; i < len; ++i) b[i] = static_cast<std::uint8_t>(seed * 3 + i);
  return FileHandle(b);
}

Fattr attr(std::uint32_t k) {
  Fattr a;
  a.type = FileType::Reg;
  a.mode = 0100644 + k;
  a.nlink = 1 + k;
  a.uid = 65534 - k;
  a.gid = 100 + k;
  a.size = 0x00000012345678ABull * (k + 1);
  a.used = 0x10000ull + k;
  a.rdev = {k, k + 1};
  a.fsid = 0xF5F5F5F5F5F5F5F5ull - k;
  a.fileid = 0x0123456789ABCDEFull + k;
  a.atime = {100 + k, 200 + k};
  a.mtime = {300 + k, 400 + k};
  a.ctime = {500 + k, 600 + k};
  return a;
}

WccData wcc(std::uint32_t k) { return {WccAttr{1000 + k, {1 + k, 2 + k}, {3 + k, 4 + k}}, attr(k)}; }

Sattr sattr(bool rich) {
  Sattr s;
  if (rich) {
    s.mode = 0700;
    s.uid = 12;
    s.gid = 34;
    s.size = 0xABCDEF;
    s.atime = {TimeHow::ClientTime, {55, 66}};
    s.mtime = {TimeHow::ServerTime, {}};
  } else {
    s.uid = 9;
    s.mtime = {TimeHow::ClientTime, {77, 88}};
  }
  return s;
}

TEST(LibnfsReference, Getattr) {
  expect_same_as_libnfs(GetattrRes{Status::Ok, attr(1)});
  expect_same_as_libnfs(GetattrRes{Status::Stale, {}});
}

TEST(LibnfsReference, Setattr) {
  expect_same_as_libnfs(SetattrArgs{fh(1, 20), sattr(true), Time{7, 8}});
  expect_same_as_libnfs(SetattrArgs{fh(2, 3), sattr(false), std::nullopt});
}

TEST(LibnfsReference, Lookup) {
  expect_same_as_libnfs(LookupRes{Status::Ok, fh(3, 33), attr(2), std::nullopt});
  expect_same_as_libnfs(LookupRes{Status::NoEnt, {}, std::nullopt, attr(3)});
}

TEST(LibnfsReference, ReadAndWrite) {
  expect_same_as_libnfs(ReadRes{Status::Ok, attr(4), 5, true, {9, 8, 7, 6, 5}});
  expect_same_as_libnfs(ReadRes{Status::Io, std::nullopt, 0, false, {}});
  expect_same_as_libnfs(WriteArgs{fh(4, 10), 1ull << 33, 6, StableHow::Unstable, {1, 2, 3, 4, 5, 6}});
  expect_same_as_libnfs(WriteRes{Status::Ok, wcc(5), 6, StableHow::DataSync, {8, 7, 6, 5, 4, 3, 2, 1}});
  expect_same_as_libnfs(WriteRes{Status::DQuot, wcc(6), 0, StableHow::Unstable, {}});
}

TEST(LibnfsReference, CreateFamily) {
  CreateArgs g{{fh(5, 16), "file-g"}, CreateMode::Guarded, sattr(true), {}};
  expect_same_as_libnfs(g);
  CreateArgs e{{fh(6, 16), "file-e"}, CreateMode::Exclusive, {}, {1, 3, 5, 7, 9, 11, 13, 15}};
  expect_same_as_libnfs(e);
  expect_same_as_libnfs(CreateRes{Status::Ok, fh(7, 40), attr(7), wcc(8)});
  expect_same_as_libnfs(CreateRes{Status::Exist, std::nullopt, std::nullopt, wcc(9)});
  expect_same_as_libnfs(SymlinkArgs{{fh(8, 8), "sym"}, sattr(false), "/a/b/c/d"});
  expect_same_as_libnfs(MknodArgs{{fh(9, 8), "blk"}, FileType::Blk, sattr(true), {8, 1}, {}});
  expect_same_as_libnfs(MknodArgs{{fh(10, 8), "sock"}, FileType::Sock, {}, {}, sattr(false)});
  expect_same_as_libnfs(MknodArgs{{fh(11, 8), "dir"}, FileType::Dir, {}, {}, {}});
}

TEST(LibnfsReference, Directories) {
  expect_same_as_libnfs(ReaddirArgs{fh(12, 64), 99, {1, 2, 3, 4, 5, 6, 7, 8}, 8192});
  ReaddirplusRes r{Status::Ok, attr(10), {9, 9, 9, 9, 1, 1, 1, 1}, {}, true};
  r.entries.push_back({1, ".", 1, attr(11), fh(13, 24)});
  r.entries.push_back({2, "..", 2, std::nullopt, fh(14, 24)});
  r.entries.push_back({3, "long-name.txt", 3, attr(12), std::nullopt});
  expect_same_as_libnfs(r);
  expect_same_as_libnfs(ReaddirplusRes{Status::BadCookie, attr(13), {}, {}, false});
}

TEST(LibnfsReference, FilesystemInfo) {
  FsinfoRes f{Status::Ok, attr(14), 1 << 20, 1 << 16, 4096, 1 << 20, 1 << 16, 4096, 4096,
              ~0ull >> 1, {0, 1000}, 0x1B};
  expect_same_as_libnfs(f);
  FsinfoRes ff{};
  ff.status = Status::ServerFault;
  ff.obj_attributes = attr(15);
  expect_same_as_libnfs(ff);
  expect_same_as_libnfs(PathconfRes{Status::Ok, attr(16), 1000, 255, true, true, false, true});
  expect_same_as_libnfs(CommitRes{Status::Ok, wcc(17), {0xDE, 0xAD, 0xBE, 0xEF, 0, 1, 2, 3}});
  expect_same_as_libnfs(CommitRes{Status::Io, wcc(18), {}});
}

}  // namespace
}  // namespace nfsgw::nfs3
