// MOUNT protocol version 3 (RFC 1813 appendix I) types and their XDR codecs.
// Version 1 shares NULL, DUMP, UMNT, UMNTALL and EXPORT; the gateway serves those
// from the same code for v1 and v3 (MNT v1 returns a v2 fhstatus and is refused).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/nfs3_types.h"
#include "protocol/xdr.h"

namespace nfsgw::mount3 {

constexpr std::uint32_t kProgram = 100005;
constexpr std::uint32_t kVersion1 = 1;
constexpr std::uint32_t kVersion3 = 3;
constexpr std::size_t kMaxPathLen = 1024;  // MNTPATHLEN
constexpr std::size_t kMaxNameLen = 255;   // MNTNAMLEN

enum class Proc : std::uint32_t { Null = 0, Mnt = 1, Dump = 2, Umnt = 3, Umntall = 4, Export = 5 };

enum class Status : std::uint32_t {
  Ok = 0, Perm = 1, NoEnt = 2, Io = 5, Acces = 13, NotDir = 20, Inval = 22,
  NameTooLong = 63, NotSupp = 10004, ServerFault = 10006,
};

struct MntArgs { std::string dirpath; };
struct MntRes {
  Status status = Status::Ok;
  nfs3::FileHandle fhandle;                 // ok
  std::vector<std::uint32_t> auth_flavors;  // ok
};

struct MountEntry {
  std::string hostname;
  std::string directory;
};
using DumpRes = std::vector<MountEntry>;  // mountlist

struct UmntArgs { std::string dirpath; };

struct ExportEntry {
  std::string dir;
  std::vector<std::string> groups;
};
using ExportRes = std::vector<ExportEntry>;  // exports

void decode(xdr::Reader& r, MntArgs& v);
void encode(xdr::Writer& w, const MntArgs& v);
void decode(xdr::Reader& r, MntRes& v);
void encode(xdr::Writer& w, const MntRes& v);
void decode(xdr::Reader& r, DumpRes& v);
void encode(xdr::Writer& w, const DumpRes& v);
void decode(xdr::Reader& r, UmntArgs& v);
void encode(xdr::Writer& w, const UmntArgs& v);
void decode(xdr::Reader& r, ExportRes& v);
void encode(xdr::Writer& w, const ExportRes& v);

}  // namespace nfsgw::mount3
