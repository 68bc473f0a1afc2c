#include "cache/metadata_codec.h"

#include <algorithm>
#include <vector>

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

class Out {
 public:
  explicit Out(std::string& s) : s_(s) {}
  void u8(std::uint8_t v) { s_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) u8(static_cast<std::uint8_t>(v >> shift));
  }
  void u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v >> 32));
    u32(static_cast<std::uint32_t>(v));
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void bytes(std::string_view b) { s_.append(b); }
  void str(std::string_view b) {
    u32(static_cast<std::uint32_t>(b.size()));
    bytes(b);
  }
  void fh(const nfs3::FileHandle& h) {
    u8(h.len);
    s_.append(reinterpret_cast<const char*>(h.bytes.data()), h.len);
  }
  void time(const nfs3::Time& t) {
    u32(t.seconds);
    u32(t.nseconds);
  }
  void stamp(const Stamp& st) {
    u32(static_cast<std::uint32_t>(st.type));
    u64(st.fileid);
    u64(st.size);
    time(st.mtime);
    time(st.ctime);
  }
  void fattr(const nfs3::Fattr& a) {
    u32(static_cast<std::uint32_t>(a.type));
    u32(a.mode);
    u32(a.nlink);
    u32(a.uid);
    u32(a.gid);
    u64(a.size);
    u64(a.used);
    u32(a.rdev.major);
    u32(a.rdev.minor);
    u64(a.fsid);
    u64(a.fileid);
    time(a.atime);
    time(a.mtime);
    time(a.ctime);
  }

 private:
  std::string& s_;
};

/// Bounds-checked reader: once a read fails, every later read fails too.
class In {
 public:
  explicit In(std::string_view s) : s_(s) {}
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == s_.size(); }
  std::size_t left() const { return s_.size() - pos_; }

  std::uint8_t u8() {
    if (!need(1)) return 0;
    return static_cast<std::uint8_t>(s_[pos_++]);
  }
  std::uint32_t u32() {
    if (!need(4)) return 0;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<std::uint8_t>(s_[pos_++]);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t hi = u32();
    return (hi << 32) | u32();
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  std::string str() {
    std::uint32_t n = u32();
    if (!need(n)) return {};
    std::string v(s_.substr(pos_, n));
    pos_ += n;
    return v;
  }
  nfs3::FileHandle fh() {
    nfs3::FileHandle h;
    std::uint8_t n = u8();
    if (n > nfs3::kFhSize) ok_ = false;
    if (!need(n)) return h;
    h.assign({reinterpret_cast<const std::uint8_t*>(s_.data() + pos_), n});
    pos_ += n;
    return h;
  }
  nfs3::Time time() {
    nfs3::Time t;
    t.seconds = u32();
    t.nseconds = u32();
    return t;
  }
  nfs3::FileType type() {
    std::uint32_t t = u32();
    if (t < 1 || t > 7) ok_ = false;
    return ok_ ? static_cast<nfs3::FileType>(t) : nfs3::FileType::Reg;
  }
  Stamp stamp() {
    Stamp st;
    st.type = type();
    st.fileid = u64();
    st.size = u64();
    st.mtime = time();
    st.ctime = time();
    return st;
  }
  nfs3::Fattr fattr() {
    nfs3::Fattr a;
    a.type = type();
    a.mode = u32();
    a.nlink = u32();
    a.uid = u32();
    a.gid = u32();
    a.size = u64();
    a.used = u64();
    a.rdev.major = u32();
    a.rdev.minor = u32();
    a.fsid = u64();
    a.fileid = u64();
    a.atime = time();
    a.mtime = time();
    a.ctime = time();
    return a;
  }
  void fail() { ok_ = false; }

 private:
  bool need(std::size_t n) {
    if (ok_ && left() >= n) return true;
    ok_ = false;
    return false;
  }
  std::string_view s_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

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
  // AUTH_SYS carries at most 16 groups: sort a small copy on the stack when it fits.
  std::uint32_t small[16];
  std::vector<std::uint32_t> big;
  std::uint32_t* g = small;
  if (k.gids.size() > std::size(small)) {
    big = k.gids;
    g = big.data();
  } else {
    std::copy(k.gids.begin(), k.gids.end(), small);
  }
  std::uint32_t* end = g + k.gids.size();
  std::sort(g, end);
  end = std::unique(g, end);
  for (auto* p = g; p != end; ++p) o.u32(*p);
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
