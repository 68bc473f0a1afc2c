#include "cache/metadata_codec.h"

#include <algorithm>
#include <vector>

#include "cache/byte_codec.h"

namespace nfsgw::cache {

// FNV-1a, 64 bits, masked to 63 (cookies travel as signed values in some
// clients). Fixed for ever: clients keep cookies across restarts and upgrades.
std::uint64_t listing_cookie(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  h &= 0x7fffffffffffffffull;
  return h == 0 ? 1 : h;
}

namespace codec {
namespace {

// Value kind tags: a value stored under the wrong family never decodes.
enum Tag : std::uint8_t { kAttr = 1, kLookup = 2, kListing = 3, kLink = 4, kAccess = 5, kFs = 6 };

std::string start(Tag tag, std::uint32_t used_s, std::size_t reserve) {
  std::string s;
  s.reserve(6 + reserve);
  Out o(s);
  o.u8(kValueVersion);
  o.u8(tag);
  o.u32(used_s);
  return s;
}

/// Reads the header; false when it is not version 1 of `tag`.
bool header(In& in, Tag tag, std::uint32_t& used_s) {
  if (in.u8() != kValueVersion) return false;
  if (in.u8() != tag) return false;
  used_s = in.u32();
  return in.ok();
}

}  // namespace

void append_object_prefix(std::string& out, const ObjectKey& k) {
  Out o(out);
  o.u32(k.export_id);
  o.fh(k.fh);
}

void append_key(std::string& out, const ObjectKey& k) { append_object_prefix(out, k); }

void append_key(std::string& out, const NameKey& k) {
  append_object_prefix(out, k.dir);
  out.append(k.name);
}

void append_key(std::string& out, const CredKey& k) {
  append_object_prefix(out, k.object);
  Out o(out);
  o.u32(k.uid);
  o.u32(k.gid);
  // Sorted and without repeats, so that the order a client lists its groups in
  // does not matter; a copy (inline, at most 16), the caller's stays as it is.
  AuthGroups g = k.gids;
  std::sort(g.begin(), g.end());
  const auto end = std::unique(g.begin(), g.end());
  for (auto p = g.begin(); p != end; ++p) o.u32(*p);
}

void append_key(std::string& out, const FsKey& k) {
  append_object_prefix(out, k.object);
  out.push_back(static_cast<char>(k.kind));
}

std::string object_prefix(const ObjectKey& k) {
  std::string s;
  append_object_prefix(s, k);
  return s;
}

std::string export_prefix(std::uint32_t export_id) {
  std::string s;
  Out(s).u32(export_id);
  return s;
}

std::string prefix_end(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty() && static_cast<unsigned char>(s.back()) == 0xff) s.pop_back();
  if (!s.empty()) s.back() = static_cast<char>(static_cast<unsigned char>(s.back()) + 1);
  return s;
}

// ---- values ----------------------------------------------------------------------

std::string encode_value(const AttrRecord& r, std::uint32_t used_s) {
  auto s = start(kAttr, used_s, 100);
  Out o(s);
  o.fattr(r.attr);
  o.i64(r.expires);
  o.u64(r.seq);
  o.u64(r.gen);
  return s;
}

bool decode_value(std::string_view v, AttrRecord& r, std::uint32_t& used_s) {
  In in(v);
  if (!header(in, kAttr, used_s)) return false;
  r.attr = in.fattr();
  r.expires = in.i64();
  r.seq = in.u64();
  r.gen = in.u64();
  return in.done();
}

std::string encode_value(const LookupRecord& r, std::uint32_t used_s) {
  auto s = start(kLookup, used_s, 110);
  Out o(s);
  o.u8(r.exists ? 1 : 0);
  if (r.exists) o.fh(r.child);
  o.u64(r.dir_gen);
  o.i64(r.expires);
  return s;
}

bool decode_value(std::string_view v, LookupRecord& r, std::uint32_t& used_s) {
  In in(v);
  if (!header(in, kLookup, used_s)) return false;
  std::uint8_t exists = in.u8();
  if (exists > 1) return false;
  r.exists = exists == 1;
  r.child = r.exists ? in.fh() : nfs3::FileHandle();
  r.dir_gen = in.u64();
  r.expires = in.i64();
  return in.done();
}

std::string encode_value(const ListingRecord& r, std::uint32_t used_s) {
  std::size_t size = 40;
  for (const auto& e : r.entries) size += 21 + e.name.size() + e.child.len;
  auto s = start(kListing, used_s, size);
  Out o(s);
  o.u64(r.dir_gen);
  o.u32(static_cast<std::uint32_t>(r.entries.size()));
  for (const auto& e : r.entries) {
    o.u64(e.cookie);
    o.u64(e.fileid);
    o.str(e.name);
    o.fh(e.child);
  }
  return s;
}

bool decode_value(std::string_view v, ListingRecord& r, std::uint32_t& used_s) {
  In in(v);
  if (!header(in, kListing, used_s)) return false;
  r.dir_gen = in.u64();
  std::uint32_t n = in.u32();
  constexpr std::size_t kMinEntry = 8 + 8 + 4 + 1;
  if (!in.ok() || n > in.left() / kMinEntry) return false;  // a corrupt count allocates nothing
  r.entries.clear();
  r.entries.reserve(n);
  for (std::uint32_t i = 0; i < n && in.ok(); ++i) {
    ListingEntry e;
    e.cookie = in.u64();
    e.fileid = in.u64();
    e.name = in.str();
    e.child = in.fh();
    r.entries.push_back(std::move(e));
  }
  return in.done();
}

std::string encode_value(const LinkRecord& r, std::uint32_t used_s) {
  auto s = start(kLink, used_s, 40 + r.target.size());
  Out o(s);
  o.stamp(r.link);
  o.str(r.target);
  return s;
}

bool decode_value(std::string_view v, LinkRecord& r, std::uint32_t& used_s) {
  In in(v);
  if (!header(in, kLink, used_s)) return false;
  r.link = in.stamp();
  r.target = in.str();
  return in.done();
}

std::string encode_value(const AccessRecord& r, std::uint32_t used_s) {
  auto s = start(kAccess, used_s, 60);
  Out o(s);
  o.stamp(r.object);
  o.u32(r.asked);
  o.u32(r.granted);
  o.i64(r.expires);
  return s;
}

bool decode_value(std::string_view v, AccessRecord& r, std::uint32_t& used_s) {
  In in(v);
  if (!header(in, kAccess, used_s)) return false;
  r.object = in.stamp();
  r.asked = in.u32();
  r.granted = in.u32();
  r.expires = in.i64();
  return in.done();
}

std::string encode_value(const FsRecord& r, std::uint32_t used_s) {
  auto s = start(kFs, used_s, 12 + r.xdr.size());
  Out o(s);
  o.str(r.xdr);
  o.i64(r.expires);
  return s;
}

bool decode_value(std::string_view v, FsRecord& r, std::uint32_t& used_s) {
  In in(v);
  if (!header(in, kFs, used_s)) return false;
  r.xdr = in.str();
  r.expires = in.i64();
  return in.done();
}

std::optional<std::uint32_t> value_used_time(std::string_view v) {
  In in(v);
  if (in.u8() != kValueVersion) return std::nullopt;
  std::uint8_t tag = in.u8();
  if (tag < kAttr || tag > kFs) return std::nullopt;
  std::uint32_t t = in.u32();
  if (!in.ok()) return std::nullopt;
  return t;
}

}  // namespace codec
}  // namespace nfsgw::cache
