// Sample values for every codec type (see codec_cases.h). Values are chosen so
// that every field differs from its default and multi-byte fields use all bytes,
// which makes swapped or dropped fields visible after a round trip.
#include "tests/unit/protocol/codec_cases.h"

#include "protocol/mount3_types.h"
#include "protocol/nfs3_codec.h"
#include "protocol/xdr.h"
#include "tests/unit/protocol/codec_equality.h"

namespace nfsgw::test {

namespace {

FileHandle fh(std::uint8_t seed, std::size_t len) {
  std::vector<std::uint8_t> b(len);
  for (std::size_t i = 0; i < len; ++i) b[i] = static_cast<std::uint8_t>(seed + 7 * i);
  return FileHandle(b);
}

Fattr fattr(std::uint32_t k) {
  Fattr a;
  a.type = k % 2 ? FileType::Dir : FileType::Lnk;
  a.mode = 0755 + k;
  a.nlink = 3 + k;
  a.uid = 1000 + k;
  a.gid = 2000 + k;
  a.size = 0x0102030405060708ull + k;
  a.used = 0x1112131415161718ull + k;
  a.rdev = {8 + k, 17 + k};
  a.fsid = 0x2122232425262728ull + k;
  a.fileid = 0x3132333435363738ull + k;
  a.atime = {1700000000 + k, 111 + k};
  a.mtime = {1700000100 + k, 222 + k};
  a.ctime = {1700000200 + k, 333 + k};
  return a;
}

WccData wcc(std::uint32_t k) {
  WccData w;
  w.before = WccAttr{0xA1A2A3A4A5A6A7A8ull + k, {10 + k, 20 + k}, {30 + k, 40 + k}};
  w.after = fattr(k);
  return w;
}

Sattr sattr_all() {
  Sattr s;
  s.mode = 0640;
  s.uid = 501;
  s.gid = 20;
  s.size = 0x0000000100000002ull;
  s.atime = {TimeHow::ClientTime, {1600000000, 999999999}};
  s.mtime = {TimeHow::ServerTime, {}};
  return s;
}

Sattr sattr_some() {
  Sattr s;
  s.gid = 77;
  s.mtime = {TimeHow::ClientTime, {12345, 678}};
  return s;
}

DirOpArgs dirop(std::uint8_t seed, std::string name) { return {fh(seed, 28), std::move(name)}; }

CookieVerf verf8(std::uint8_t seed) {
  CookieVerf v;
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(seed + i * 31);
  return v;
}

template <class T>
Bytes encode_value(const T& v) {
  Bytes out;
  xdr::Writer w(out);
  encode(w, v);
  return out;
}

template <class T>
void add(std::vector<CodecCase>& cases, std::string name, T value) {
  CodecCase c;
  c.name = std::move(name);
  c.encoded = encode_value(value);
  c.decode = [](std::span<const std::uint8_t> in) {
    xdr::Reader r(in);
    T v{};
    decode(r, v);
    return r.position();
  };
  c.decodes_to_original = [value](std::span<const std::uint8_t> in) {
    xdr::Reader r(in);
    T v{};
    decode(r, v);
    return r.remaining() == 0 && same(v, value);
  };
  c.reencode = [](std::span<const std::uint8_t> in) {
    xdr::Reader r(in);
    T v{};
    decode(r, v);
    return encode_value(v);
  };
  cases.push_back(std::move(c));
}

std::vector<CodecCase> build() {
  std::vector<CodecCase> c;
  // Building blocks.
  add(c, "FileHandle", fh(0x40, 64));
  add(c, "FileHandleOdd", fh(0x11, 13));
  add(c, "Fattr", fattr(1));
  add(c, "SattrAll", sattr_all());
  add(c, "SattrSome", sattr_some());
  add(c, "WccData", wcc(2));
  add(c, "WccDataAfterOnly", WccData{std::nullopt, fattr(3)});
  add(c, "DirOpArgs", dirop(5, "hello.txt"));

  // Arguments.
  add(c, "GetattrArgs", GetattrArgs{fh(1, 32)});
  add(c, "SetattrArgsGuard", SetattrArgs{fh(2, 20), sattr_all(), Time{1234567, 89}});
  add(c, "SetattrArgsNoGuard", SetattrArgs{fh(3, 8), sattr_some(), std::nullopt});
  add(c, "LookupArgs", LookupArgs{dirop(4, "a b")});
  add(c, "AccessArgs", AccessArgs{fh(5, 16), access::Read | access::Delete | access::Execute});
  add(c, "ReadlinkArgs", ReadlinkArgs{fh(6, 9)});
  add(c, "ReadArgs", ReadArgs{fh(7, 24), 0x0000123456789ABCull, 65536});
  {
    WriteArgs w{fh(8, 30), 0x7FFF000011112222ull, 5, StableHow::DataSync, {'d', 'a', 't', 'a', '!'}};
    add(c, "WriteArgs", w);
  }
  {
    CreateArgs a{dirop(9, "new"), CreateMode::Guarded, sattr_all(), {}};
    add(c, "CreateArgsGuarded", a);
    a.mode = CreateMode::Unchecked;
    a.obj_attributes = sattr_some();
    add(c, "CreateArgsUnchecked", a);
    CreateArgs e{dirop(10, "excl"), CreateMode::Exclusive, {}, verf8(3)};
    add(c, "CreateArgsExclusive", e);
  }
  add(c, "MkdirArgs", MkdirArgs{dirop(11, "subdir"), sattr_all()});
  add(c, "SymlinkArgs", SymlinkArgs{dirop(12, "ln"), sattr_some(), "../target/path"});
  {
    MknodArgs m{dirop(13, "dev"), FileType::Chr, sattr_all(), {4, 64}, {}};
    add(c, "MknodArgsChr", m);
    MknodArgs p{dirop(14, "pipe"), FileType::Fifo, {}, {}, sattr_some()};
    add(c, "MknodArgsFifo", p);
    MknodArgs r{dirop(15, "plain"), FileType::Reg, {}, {}, {}};
    add(c, "MknodArgsReg", r);
  }
  add(c, "RemoveArgs", RemoveArgs{dirop(16, "gone")});
  add(c, "RenameArgs", RenameArgs{dirop(17, "from"), dirop(18, "to-name")});
  add(c, "LinkArgs", LinkArgs{fh(19, 12), dirop(20, "hard")});
  add(c, "ReaddirArgs", ReaddirArgs{fh(21, 40), 0x0102030405060708ull, verf8(9), 4096});
  add(c, "ReaddirplusArgs", ReaddirplusArgs{fh(22, 40), 77, verf8(1), 1024, 32768});
  add(c, "FsstatArgs", FsstatArgs{fh(23, 4)});
  add(c, "FsinfoArgs", FsinfoArgs{fh(24, 5)});
  add(c, "PathconfArgs", PathconfArgs{fh(25, 6)});
  add(c, "CommitArgs", CommitArgs{fh(26, 7), 0xFFFFFFFF00000001ull, 8192});

  // Results: ok and fail variants.
  add(c, "GetattrResOk", GetattrRes{Status::Ok, fattr(4)});
  add(c, "GetattrResFail", GetattrRes{Status::Stale, {}});
  add(c, "SetattrResOk", SetattrRes{Status::Ok, wcc(5)});
  add(c, "SetattrResFail", SetattrRes{Status::NotSync, wcc(6)});
  add(c, "LookupResOk", LookupRes{Status::Ok, fh(27, 36), fattr(7), fattr(8)});
  add(c, "LookupResFail", LookupRes{Status::NoEnt, {}, std::nullopt, fattr(9)});
  add(c, "AccessResOk", AccessRes{Status::Ok, fattr(10), access::Lookup | access::Modify});
  add(c, "AccessResFail", AccessRes{Status::Acces, fattr(11), 0});
  add(c, "ReadlinkResOk", ReadlinkRes{Status::Ok, fattr(12), "/some/where/else"});
  add(c, "ReadlinkResFail", ReadlinkRes{Status::Inval, std::nullopt, ""});
  add(c, "ReadResOk", ReadRes{Status::Ok, fattr(13), 7, true, {1, 2, 3, 4, 5, 6, 7}});
  add(c, "ReadResFail", ReadRes{Status::Io, fattr(14), 0, false, {}});
  add(c, "WriteResOk", WriteRes{Status::Ok, wcc(15), 4096, StableHow::FileSync, verf8(2)});
  add(c, "WriteResFail", WriteRes{Status::NoSpc, wcc(16), 0, StableHow::Unstable, {}});
  add(c, "CreateResOk", CreateRes{Status::Ok, fh(28, 44), fattr(17), wcc(18)});
  add(c, "CreateResOkNoHandle", CreateRes{Status::Ok, std::nullopt, std::nullopt, wcc(19)});
  add(c, "CreateResFail", CreateRes{Status::Exist, std::nullopt, std::nullopt, wcc(20)});
  add(c, "RemoveResOk", RemoveRes{Status::Ok, wcc(21)});
  add(c, "RemoveResFail", RemoveRes{Status::NotEmpty, wcc(22)});
  add(c, "RenameResOk", RenameRes{Status::Ok, wcc(23), wcc(24)});
  add(c, "RenameResFail", RenameRes{Status::XDev, wcc(25), WccData{}});
  add(c, "LinkResOk", LinkRes{Status::Ok, fattr(26), wcc(27)});
  add(c, "LinkResFail", LinkRes{Status::MLink, std::nullopt, wcc(28)});
  {
    ReaddirRes r{Status::Ok, fattr(29), verf8(4), {{11, ".", 1}, {12, "..", 2}, {0xABCDEF0123ull, "file.c", 0x7777}}, true};
    add(c, "ReaddirResOk", r);
    add(c, "ReaddirResOkEmpty", ReaddirRes{Status::Ok, std::nullopt, verf8(5), {}, false});
    add(c, "ReaddirResFail", ReaddirRes{Status::BadCookie, fattr(30), {}, {}, false});
  }
  {
    ReaddirplusRes r{Status::Ok, fattr(31), verf8(6), {}, false};
    r.entries.push_back({21, "x", 100, fattr(32), fh(29, 20)});
    r.entries.push_back({22, "yy", 200, std::nullopt, std::nullopt});
    r.entries.push_back({23, "zzz", 300, fattr(33), std::nullopt});
    add(c, "ReaddirplusResOk", r);
    add(c, "ReaddirplusResFail", ReaddirplusRes{Status::TooSmall, std::nullopt, {}, {}, false});
  }
  add(c, "FsstatResOk", FsstatRes{Status::Ok, fattr(34), 1ull << 40, 1ull << 39, 1ull << 38, 1000000, 999999, 999998, 30});
  add(c, "FsstatResFail", FsstatRes{Status::ServerFault, fattr(35), 0, 0, 0, 0, 0, 0, 0});
  {
    FsinfoRes f{Status::Ok, fattr(36), 1048576, 65536, 4096, 1048576, 65536, 512, 8192,
                0x7FFFFFFFFFFFFFFFull, {0, 1}, fsf::Link | fsf::Symlink | fsf::Homogeneous | fsf::CanSetTime};
    add(c, "FsinfoResOk", f);
    FsinfoRes fail{};
    fail.status = Status::BadHandle;
    add(c, "FsinfoResFail", fail);
  }
  add(c, "PathconfResOk", PathconfRes{Status::Ok, fattr(37), 32000, 255, true, false, true, true});
  {
    PathconfRes fail{};
    fail.status = Status::Jukebox;
    fail.obj_attributes = fattr(38);
    add(c, "PathconfResFail", fail);
  }
  add(c, "CommitResOk", CommitRes{Status::Ok, wcc(39), verf8(7)});
  add(c, "CommitResFail", CommitRes{Status::RoFs, wcc(40), {}});

  // MOUNT v3.
  add(c, "MntArgs", mount3::MntArgs{"/export/data"});
  add(c, "UmntArgs", mount3::UmntArgs{"/export/other"});
  add(c, "MntResOk", mount3::MntRes{mount3::Status::Ok, fh(30, 48), {1, 0, 390004}});
  add(c, "MntResFail", mount3::MntRes{mount3::Status::Acces, {}, {}});
  add(c, "DumpRes", mount3::DumpRes{{"client-a", "/export/a"}, {"client-bb", "/x"}});
  add(c, "DumpResEmpty", mount3::DumpRes{});
  add(c, "ExportRes", mount3::ExportRes{{"/export", {"10.0.0.0/8", "host1"}}, {"/pub", {}}});
  add(c, "ExportResEmpty", mount3::ExportRes{});
  return c;
}

}  // namespace

const std::vector<CodecCase>& all_codec_cases() {
  static const std::vector<CodecCase> cases = build();
  return cases;
}

}  // namespace nfsgw::test
