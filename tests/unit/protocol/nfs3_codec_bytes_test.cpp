// Hand-computed, byte-exact encodings derived from RFC 1813's XDR definitions,
// and rejection of out-of-range enums and over-long lengths.
#include <gtest/gtest.h>

#include <initializer_list>

#include "protocol/mount3_types.h"
#include "protocol/nfs3_codec.h"

namespace nfsgw::nfs3 {
namespace {

using Bytes = std::vector<std::uint8_t>;

/// Big-endian 32-bit words, as they appear on the wire.
Bytes words(std::initializer_list<std::uint32_t> ws) {
  Bytes b;
  for (std::uint32_t w : ws) {
    b.push_back(static_cast<std::uint8_t>(w >> 24));
    b.push_back(static_cast<std::uint8_t>(w >> 16));
    b.push_back(static_cast<std::uint8_t>(w >> 8));
    b.push_back(static_cast<std::uint8_t>(w));
  }
  return b;
}

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const Bytes& p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}

template <class T>
Bytes enc(const T& v) {
  Bytes out;
  xdr::Writer w(out);
  encode(w, v);
  return out;
}

template <class T>
T dec(const Bytes& b) {
  xdr::Reader r(b);
  T v{};
  decode(r, v);
  EXPECT_EQ(r.remaining(), 0u);
  return v;
}

template <class T>
void expect_refused(const Bytes& b) {
  xdr::Reader r(b);
  T v{};
  EXPECT_THROW(decode(r, v), xdr::DecodeError);
}

FileHandle handle(std::initializer_list<std::uint8_t> b) { return FileHandle(std::vector<std::uint8_t>(b)); }

// fattr3 with type DIR, mode 0755, nlink 2, uid 0, gid 0, size 4096, used 8192,
// rdev {0,0}, fsid 0x11, fileid 0x22, atime {1,2}, mtime {3,4}, ctime {5,6}.
Fattr dir_attr() {
  Fattr a;
  a.type = FileType::Dir;
  a.mode = 0755;
  a.nlink = 2;
  a.size = 4096;
  a.used = 8192;
  a.fsid = 0x11;
  a.fileid = 0x22;
  a.atime = {1, 2};
  a.mtime = {3, 4};
  a.ctime = {5, 6};
  return a;
}
const Bytes kDirAttrWire = words({2, 0x1ED, 2, 0, 0, 0, 4096, 0, 8192, 0, 0, 0, 0x11, 0, 0x22, 1, 2, 3, 4, 5, 6});

TEST(Nfs3Bytes, FattrIs84Bytes) {
  EXPECT_EQ(kDirAttrWire.size(), 84u);
  EXPECT_EQ(enc(dir_attr()), kDirAttrWire);
  EXPECT_EQ(dec<Fattr>(kDirAttrWire), dir_attr());
}

TEST(Nfs3Bytes, GetattrArgs) {
  GetattrArgs a{handle({1, 2, 3, 4, 5})};
  Bytes want = {0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0};
  EXPECT_EQ(enc(a), want);
  EXPECT_EQ(dec<GetattrArgs>(want).object, a.object);
}

TEST(Nfs3Bytes, LookupResFailWithoutAndWithDirAttributes) {
  LookupRes r;
  r.status = Status::NoEnt;
  EXPECT_EQ(enc(r), words({2, 0}));
  r.dir_attributes = dir_attr();
  EXPECT_EQ(enc(r), cat({words({2, 1}), kDirAttrWire}));
  LookupRes back = dec<LookupRes>(cat({words({2, 1}), kDirAttrWire}));
  EXPECT_EQ(back.status, Status::NoEnt);
  EXPECT_EQ(back.dir_attributes, dir_attr());
  EXPECT_TRUE(back.object.empty());
}

TEST(Nfs3Bytes, LookupResOk) {
  LookupRes r;
  r.object = handle({9, 8, 7, 6});
  r.obj_attributes = dir_attr();
  EXPECT_EQ(enc(r), cat({words({0, 4, 0x09080706, 1}), kDirAttrWire, words({0})}));
}

TEST(Nfs3Bytes, SetattrArgsWithEveryUnionArm) {
  SetattrArgs a;
  a.object = handle({0xAA, 0xBB, 0xCC, 0xDD});
  a.new_attributes.mode = 0644;
  a.new_attributes.size = 0;
  a.new_attributes.atime.how = TimeHow::ServerTime;
  a.new_attributes.mtime = {TimeHow::ClientTime, {7, 8}};
  a.guard = Time{9, 10};
  Bytes want = words({4, 0xAABBCCDD,
                      1, 0x1A4,   // mode
                      0,          // uid
                      0,          // gid
                      1, 0, 0,    // size = 0
                      1,          // atime SET_TO_SERVER_TIME
                      2, 7, 8,    // mtime SET_TO_CLIENT_TIME
                      1, 9, 10}); // guard
  EXPECT_EQ(enc(a), want);
  SetattrArgs back = dec<SetattrArgs>(want);
  EXPECT_EQ(back.new_attributes, a.new_attributes);
  EXPECT_EQ(back.guard, a.guard);
}

TEST(Nfs3Bytes, WriteArgs) {
  WriteArgs a{handle({0x7F}), 0x100000000ull, 3, StableHow::FileSync, {'x', 'y', 'z'}};
  EXPECT_EQ(enc(a), words({1, 0x7F000000, 1, 0, 3, 2, 3, 0x78797A00}));
}

TEST(Nfs3Bytes, CreateArgsExclusiveCarriesVerifierOnly) {
  CreateArgs a;
  a.where = {FileHandle{}, "f"};
  a.mode = CreateMode::Exclusive;
  a.verf = {1, 2, 3, 4, 5, 6, 7, 8};
  a.obj_attributes.mode = 0777;  // not on the wire for EXCLUSIVE
  EXPECT_EQ(enc(a), words({0, 1, 0x66000000, 2, 0x01020304, 0x05060708}));
}

TEST(Nfs3Bytes, ReaddirResOkOneEntry) {
  ReaddirRes r;
  r.cookieverf = {1, 2, 3, 4, 5, 6, 7, 8};
  r.entries.push_back({5, "ab", 9});
  r.eof = true;
  Bytes want = words({0, 0, 0x01020304, 0x05060708,
                      1, 0, 5, 2, 0x61620000, 0, 9,
                      0, 1});
  EXPECT_EQ(enc(r), want);
  ReaddirRes back = dec<ReaddirRes>(want);
  ASSERT_EQ(back.entries.size(), 1u);
  EXPECT_EQ(back.entries[0].name, "ab");
  EXPECT_EQ(back.entries[0].cookie, 9u);
  EXPECT_TRUE(back.eof);
}

TEST(Nfs3Bytes, GetattrResFailIsStatusOnly) {
  GetattrRes r;
  r.status = Status::Jukebox;
  r.attributes = dir_attr();
  EXPECT_EQ(enc(r), words({10008}));
}

TEST(Nfs3Bytes, Mount3Results) {
  mount3::MntRes m{mount3::Status::Ok, handle({1, 2, 3, 4}), {1}};
  EXPECT_EQ(enc(m), words({0, 4, 0x01020304, 1, 1}));
  mount3::ExportRes e{{"/e", {"g"}}};
  EXPECT_EQ(enc(e), words({1, 2, 0x2F650000, 1, 1, 0x67000000, 0, 0}));
  mount3::DumpRes d;
  EXPECT_EQ(enc(d), words({0}));
}

// ---- refusals -----------------------------------------------------------------

TEST(Nfs3Refuse, FileTypeOutOfRange) {
  for (std::uint32_t t : {0u, 8u, 0xFFFFFFFFu}) {
    Bytes b = kDirAttrWire;
    b[3] = static_cast<std::uint8_t>(t);
    b[0] = static_cast<std::uint8_t>(t >> 24);
    expect_refused<Fattr>(b);
  }
  expect_refused<MknodArgs>(words({0, 1, 0x61000000, 9}));
}

TEST(Nfs3Refuse, StatusOutOfRange) {
  for (std::uint32_t s : {3u, 4u, 10000u, 10009u, 0xFFFFFFFFu}) {
    expect_refused<GetattrRes>(words({s}));
    expect_refused<RemoveRes>(words({s, 0, 0}));
  }
  // A valid, rarely used status still decodes.
  EXPECT_EQ(dec<GetattrRes>(words({10002})).status, Status::NotSync);
}

TEST(Nfs3Refuse, StableHowOutOfRange) {
  expect_refused<WriteArgs>(words({0, 0, 0, 0, 3, 0}));
  EXPECT_EQ(dec<WriteArgs>(words({0, 0, 0, 0, 2, 0})).stable, StableHow::FileSync);
}

TEST(Nfs3Refuse, CreateModeOutOfRange) {
  expect_refused<CreateArgs>(words({0, 1, 0x61000000, 3, 0, 0}));
}

TEST(Nfs3Refuse, TimeHowOutOfRange) {
  // sattr3: mode, uid, gid, size unset, atime how = 3.
  expect_refused<Sattr>(words({0, 0, 0, 0, 3, 0}));
  EXPECT_EQ(dec<Sattr>(words({0, 0, 0, 0, 1, 0})).atime.how, TimeHow::ServerTime);
}

TEST(Nfs3Refuse, InvalidBoolDiscriminants) {
  expect_refused<Sattr>(words({2, 0, 0, 0, 0, 0}));               // set_mode3
  expect_refused<WccData>(words({0, 2}));                          // post_op_attr
  expect_refused<ReaddirRes>(words({0, 0, 0, 0, 5}));              // value follows
  expect_refused<PathconfRes>(words({0, 0, 1, 1, 1, 1, 1, 7}));    // case_preserving
}

TEST(Nfs3Refuse, LengthsAboveBounds) {
  expect_refused<FileHandle>(cat({words({65}), Bytes(68, 0)}));
  EXPECT_EQ(dec<FileHandle>(cat({words({64}), Bytes(64, 1)})).len, 64);
  // Names above 255 bytes decode (the origin answers NAMETOOLONG); above the memory
  // bound they are garbage.
  expect_refused<LookupArgs>(cat({words({0, kMaxNameLen + 1}), Bytes(kMaxNameLen + 4, 'a')}));
  EXPECT_EQ(dec<LookupArgs>(cat({words({0, 300}), Bytes(300, 'a')})).what.name.size(), 300u);
  EXPECT_EQ(dec<LookupArgs>(cat({words({0, kMaxNameLen}), Bytes(kMaxNameLen, 'a')})).what.name.size(),
            kMaxNameLen);
  expect_refused<SymlinkArgs>(cat({words({0, 1, 0x61000000, 0, 0, 0, 0, 0, 0, 4097}), Bytes(4100, 'p')}));
  expect_refused<WriteArgs>(words({0, 0, 0, 0, 0, static_cast<std::uint32_t>(kMaxData + 1)}));
  expect_refused<mount3::MntArgs>(cat({words({1025}), Bytes(1028, '/')}));
}

TEST(Mount3Refuse, StatusOutOfRange) {
  expect_refused<mount3::MntRes>(words({3}));
  EXPECT_EQ(dec<mount3::MntRes>(words({13})).status, mount3::Status::Acces);
}

}  // namespace
}  // namespace nfsgw::nfs3
