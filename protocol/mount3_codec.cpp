// MOUNT v3 codecs (RFC 1813 appendix I). mountlist, exports and groups are XDR
// optional-data linked lists ("value follows" bool before each node); their length
// is bounded by the input, since every node consumes at least eight bytes.
#include "protocol/mount3_types.h"

#include "protocol/nfs3_codec.h"

namespace nfsgw::mount3 {

namespace {

/// The RFC leaves auth_flavors unbounded; no server offers more than a handful.
constexpr std::size_t kMaxAuthFlavors = 64;

Status decode_status(xdr::Reader& r) {
  std::uint32_t v = r.u32();
  switch (static_cast<Status>(v)) {
    case Status::Ok: case Status::Perm: case Status::NoEnt: case Status::Io:
    case Status::Acces: case Status::NotDir: case Status::Inval:
    case Status::NameTooLong: case Status::NotSupp: case Status::ServerFault:
      return static_cast<Status>(v);
  }
  throw xdr::DecodeError("mount3: invalid mountstat3");
}

}  // namespace

void decode(xdr::Reader& r, MntArgs& v) { v.dirpath = r.string(kMaxPathLen); }
void encode(xdr::Writer& w, const MntArgs& v) { w.string(v.dirpath); }
void decode(xdr::Reader& r, UmntArgs& v) { v.dirpath = r.string(kMaxPathLen); }
void encode(xdr::Writer& w, const UmntArgs& v) { w.string(v.dirpath); }

void decode(xdr::Reader& r, MntRes& v) {
  v.status = decode_status(r);
  v.fhandle = nfs3::FileHandle{};
  v.auth_flavors.clear();
  if (v.status != Status::Ok) return;
  nfs3::decode(r, v.fhandle);  // fhandle3: opaque<FHSIZE3>
  std::uint32_t n = r.u32();
  if (n > kMaxAuthFlavors) throw xdr::DecodeError("mount3: too many auth flavors");
  if (std::size_t{n} * 4 > r.remaining()) throw xdr::DecodeError("mount3: truncated auth flavors");
  v.auth_flavors.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) v.auth_flavors.push_back(r.u32());
}

void encode(xdr::Writer& w, const MntRes& v) {
  w.u32(static_cast<std::uint32_t>(v.status));
  if (v.status != Status::Ok) return;
  nfs3::encode(w, v.fhandle);
  w.u32(static_cast<std::uint32_t>(v.auth_flavors.size()));
  for (std::uint32_t f : v.auth_flavors) w.u32(f);
}

void decode(xdr::Reader& r, DumpRes& v) {
  v.clear();
  while (r.boolean()) {
    MountEntry& e = v.emplace_back();
    e.hostname = r.string(kMaxNameLen);
    e.directory = r.string(kMaxPathLen);
  }
}

void encode(xdr::Writer& w, const DumpRes& v) {
  for (const MountEntry& e : v) {
    w.boolean(true);
    w.string(e.hostname);
    w.string(e.directory);
  }
  w.boolean(false);
}

void decode(xdr::Reader& r, ExportRes& v) {
  v.clear();
  while (r.boolean()) {
    ExportEntry& e = v.emplace_back();
    e.dir = r.string(kMaxPathLen);
    while (r.boolean()) e.groups.push_back(r.string(kMaxNameLen));
  }
}

void encode(xdr::Writer& w, const ExportRes& v) {
  for (const ExportEntry& e : v) {
    w.boolean(true);
    w.string(e.dir);
    for (const std::string& g : e.groups) {
      w.boolean(true);
      w.string(g);
    }
    w.boolean(false);
  }
  w.boolean(false);
}

}  // namespace nfsgw::mount3
