// Big-endian, bounds-checked writing and reading of the cache's keys and values
// (metadata_codec.cpp, block_index_codec.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache/metadata_records.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::cache::codec {

class Out {
 public:
  explicit Out(std::string& s) : s_(s) {}
  void u8(std::uint8_t v) { s_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                       static_cast<char>(v)};
    s_.append(b, sizeof b);  // one capacity check, not four
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

}  // namespace nfsgw::cache::codec
