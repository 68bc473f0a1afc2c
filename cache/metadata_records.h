// What the metadata cache keeps, one record type per column family, with the keys
// they are found by. Encodings (metadata_codec.cpp) are versioned and bounds-checked:
// a record that does not decode is treated as absent, never trusted.
//
// Validity is derived, not stored twice. Every attribute record carries a
// generation: it stays the same while the object is unchanged (a GETATTR that finds
// the same Stamp renews the window and keeps it), and while the gateway itself
// applies a change it made through the origin in place (WCC pre-op attributes
// matching the cached ones); any other change gives a new generation. A
// directory's lookups and listing carry the generation they were learnt under, and
// are usable while the directory's attribute record is inside its window with that
// generation: one GETATTR renews all of them at once, and a change seen from
// outside drops all of them at once. Link targets and ACCESS answers carry the
// object's Stamp instead (a chmod through nfsgw must invalidate ACCESS answers).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/clock.h"
#include "cache/key_hash.h"
#include "protocol/auth_groups.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::cache {

/// An object as the cache knows it: its export and its ORIGIN handle.
struct ObjectKey {
  std::uint32_t export_id = 0;
  nfs3::FileHandle fh;
  friend bool operator==(const ObjectKey&, const ObjectKey&) = default;
};

/// ObjectKey in unordered containers (key_hash of the handle, mixed with the
/// space) and in ordered ones (space, then handle bytes).
struct ObjectKeyHash {
  std::size_t operator()(const ObjectKey& k) const noexcept {
    const auto v = k.fh.view();
    return key_hash({reinterpret_cast<const char*>(v.data()), v.size()}) ^
           (std::size_t{k.export_id} * 0x9e3779b97f4a7c15ull);
  }
};
struct ObjectKeyLess {
  bool operator()(const ObjectKey& a, const ObjectKey& b) const noexcept {
    if (a.export_id != b.export_id) return a.export_id < b.export_id;
    const auto x = a.fh.view(), y = b.fh.view();
    return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end());
  }
};

/// A name in a directory.
struct NameKey {
  ObjectKey dir;
  std::string name;
  friend bool operator==(const NameKey&, const NameKey&) = default;
};

/// The identity and version of an object: when all of these are unchanged, the
/// object is unchanged as far as its dependent entries are concerned.
struct Stamp {
  nfs3::FileType type = nfs3::FileType::Reg;
  std::uint64_t fileid = 0;
  std::uint64_t size = 0;
  nfs3::Time mtime;
  nfs3::Time ctime;
  friend bool operator==(const Stamp&, const Stamp&) = default;
  static Stamp of(const nfs3::Fattr& a) { return {a.type, a.fileid, a.size, a.mtime, a.ctime}; }
};

/// AUTH_SYS identity as the origin judges it (after squash): uid, gid, groups.
struct CredKey {
  ObjectKey object;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  AuthGroups gids;  // as sent; the codec sorts a copy for the key
  friend bool operator==(const CredKey&, const CredKey&) = default;
};

/// FSINFO, PATHCONF and FSSTAT results by object.
enum class FsKind : std::uint8_t { Fsinfo = 1, Pathconf = 2, Fsstat = 3 };
struct FsKey {
  ObjectKey object;
  FsKind kind = FsKind::Fsinfo;
  friend bool operator==(const FsKey&, const FsKey&) = default;
};

// ---- records -----------------------------------------------------------------

/// Attributes by handle.
struct AttrRecord {
  nfs3::Fattr attr;
  Millis expires = 0;      // end of the window
  std::uint64_t seq = 0;   // the gateway's own order of origin replies
  std::uint64_t gen = 0;   // see above: dependents are valid for this generation
};

/// A LOOKUP answer: the child's handle, or "no such name".
struct LookupRecord {
  bool exists = false;
  nfs3::FileHandle child;  // when exists
  std::uint64_t dir_gen = 0;  // the directory's generation when learnt
  Millis expires = kNever; // negative answers only: end of negative_ttl
};

/// One name of a cached listing. Cookies are the gateway's own (see listing_cookie).
struct ListingEntry {
  std::uint64_t cookie = 0;
  std::uint64_t fileid = 0;
  std::string name;
  nfs3::FileHandle child;  // empty when the origin gave none ("." and ".." may lack one)
};

/// A whole directory listing, sorted by cookie.
struct ListingRecord {
  std::uint64_t dir_gen = 0;  // the directory's generation when filled
  std::vector<ListingEntry> entries;
};

/// A symbolic link's target.
struct LinkRecord {
  Stamp link;
  std::string target;
};

/// An ACCESS answer for one credential.
struct AccessRecord {
  Stamp object;
  std::uint32_t asked = 0;    // the bits the origin was asked about
  std::uint32_t granted = 0;  // the subset it granted
  Millis expires = 0;
};

/// An FSINFO, PATHCONF or FSSTAT result, XDR-encoded as the protocol codec does.
struct FsRecord {
  std::string xdr;
  Millis expires = 0;
};

/// The gateway's cookie for `name`: a stable 63-bit hash, so that a client paging
/// through a listing resumes at the same place even after the listing was
/// replaced (entries are ordered by cookie). Never 0 (the start of a listing);
/// collisions inside one listing are resolved by the listing's builder.
std::uint64_t listing_cookie(std::string_view name);

}  // namespace nfsgw::cache
