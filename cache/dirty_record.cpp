// The dirty log's frames: encoding and bounds-checked decoding.
#include "cache/dirty_record.h"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "cache/crc32c.h"

namespace nfsgw::cache {
namespace {

constexpr char kMagic[4] = {'N', 'G', 'D', 'L'};
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kCrcAt = 8;    // after magic and length
constexpr std::size_t kBodyAt = 12;  // after the CRC

template <typename T>
void put(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// Reads from a bounded view; every get fails (and stays failed) past its end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  bool get(T& v) {
    if (in_.size() - at_ < sizeof(T)) return false;
    v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(in_[at_ + i])) << (8 * i));
    at_ += sizeof(T);
    return true;
  }
  bool take(std::size_t n, std::string_view& out) {
    if (in_.size() - at_ < n) return false;
    out = in_.substr(at_, n);
    at_ += n;
    return true;
  }
  std::size_t at() const { return at_; }

 private:
  std::string_view in_;
  std::size_t at_ = 0;
};

std::size_t file_bytes(const ObjectKey& f) { return 4 + 1 + f.fh.len; }
std::size_t writer_bytes(const Writer& w) { return 4 + 4 + 1 + 4 * w.gids.size(); }

constexpr std::uint8_t kAtime = 1, kMtime = 2;

void put_writer(std::string& out, const Writer& w) {
  put<std::uint32_t>(out, w.uid);
  put<std::uint32_t>(out, w.gid);
  put<std::uint8_t>(out, static_cast<std::uint8_t>(w.gids.size()));
  for (std::uint32_t g : w.gids) put<std::uint32_t>(out, g);
}

bool get_writer(Reader& r, Writer& w) {
  std::uint8_t ngids = 0;
  if (!r.get(w.uid) || !r.get(w.gid) || !r.get(ngids) || ngids > kMaxWriterGids) return false;
  w.gids.resize(ngids);
  for (auto& g : w.gids)
    if (!r.get(g)) return false;
  return true;
}

void put_time(std::string& out, const std::optional<nfs3::Time>& t) {
  put<std::uint32_t>(out, t ? t->seconds : 0);
  put<std::uint32_t>(out, t ? t->nseconds : 0);
}

bool get_time(Reader& r, bool present, std::optional<nfs3::Time>& t) {
  nfs3::Time v;
  if (!r.get(v.seconds) || !r.get(v.nseconds)) return false;
  if (present) t = v;
  return true;
}

}  // namespace

std::size_t dirty_frame_head_size(const DirtyRecord& r) {
  std::size_t n = kBodyAt + 1 + 1 + 8 + file_bytes(r.file);
  switch (r.kind) {
    case DirtyRecord::Kind::Write: n += 8 + writer_bytes(r.writer) + 4; break;
    case DirtyRecord::Kind::Times: n += 1 + 16 + writer_bytes(r.writer); break;
    case DirtyRecord::Kind::Truncate:
    case DirtyRecord::Kind::Start:
    case DirtyRecord::Kind::CleanStop: n += 8; break;
    case DirtyRecord::Kind::Clean: n += 24; break;
    case DirtyRecord::Kind::Drop: break;
  }
  return n;
}

void encode_dirty_record(const DirtyRecord& r, std::string& out) {
  if (r.writer.gids.size() > kMaxWriterGids) throw std::invalid_argument("dirty record: too many groups");
  const bool write = r.kind == DirtyRecord::Kind::Write;
  if (write && r.data.size() > std::numeric_limits<std::uint32_t>::max() - 4096)
    throw std::invalid_argument("dirty record: data too long");
  const std::size_t total = dirty_frame_head_size(r) + (write ? r.data.size() : 0);
  const std::size_t start = out.size();
  out.reserve(start + total);
  out.append(kMagic, sizeof kMagic);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(total));
  put<std::uint32_t>(out, 0);  // the CRC, below
  put<std::uint8_t>(out, kVersion);
  put<std::uint8_t>(out, static_cast<std::uint8_t>(r.kind));
  put<std::uint64_t>(out, r.seq);
  put<std::uint32_t>(out, r.file.export_id);
  put<std::uint8_t>(out, r.file.fh.len);
  out.append(reinterpret_cast<const char*>(r.file.fh.bytes.data()), r.file.fh.len);
  switch (r.kind) {
    case DirtyRecord::Kind::Write:
      put<std::uint64_t>(out, r.offset);
      put_writer(out, r.writer);
      put<std::uint32_t>(out, static_cast<std::uint32_t>(r.data.size()));
      out.append(r.data);
      break;
    case DirtyRecord::Kind::Times:
      put<std::uint8_t>(out, static_cast<std::uint8_t>((r.atime ? kAtime : 0) | (r.mtime ? kMtime : 0)));
      put_time(out, r.atime);
      put_time(out, r.mtime);
      put_writer(out, r.writer);
      break;
    case DirtyRecord::Kind::Truncate:
    case DirtyRecord::Kind::Start:
    case DirtyRecord::Kind::CleanStop: put<std::uint64_t>(out, r.offset); break;
    case DirtyRecord::Kind::Clean:
      put<std::uint64_t>(out, r.offset);
      put<std::uint64_t>(out, r.length);
      put<std::uint64_t>(out, r.upto);
      break;
    case DirtyRecord::Kind::Drop: break;
  }
  const std::uint32_t crc = crc32c(0, out.data() + start + kBodyAt, total - kBodyAt);
  for (std::size_t i = 0; i < 4; ++i) out[start + kCrcAt + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
}

std::uint32_t dirty_frame_length(std::string_view prefix) {
  if (prefix.size() < kDirtyFramePrefix || std::memcmp(prefix.data(), kMagic, sizeof kMagic) != 0) return 0;
  std::uint32_t len = 0;
  Reader r(prefix.substr(4, 4));
  r.get(len);
  return len;
}

std::optional<DecodedFrame> decode_dirty_frame(std::string_view in) {
  const std::uint32_t total = dirty_frame_length(in);
  if (total < kBodyAt || total > in.size()) return std::nullopt;
  const std::string_view frame = in.substr(0, total);
  Reader head(frame.substr(kCrcAt, 4));
  std::uint32_t crc = 0;
  head.get(crc);
  if (crc32c(0, frame.data() + kBodyAt, total - kBodyAt) != crc) return std::nullopt;

  Reader r(frame);
  std::string_view skip;
  r.take(kBodyAt, skip);
  DecodedFrame d;
  DirtyRecord& rec = d.record;
  std::uint8_t version = 0, kind = 0, fh_len = 0;
  std::string_view fh;
  if (!r.get(version) || version != kVersion || !r.get(kind) || !r.get(rec.seq) || !r.get(rec.file.export_id) ||
      !r.get(fh_len) || fh_len > nfs3::kFhSize || !r.take(fh_len, fh))
    return std::nullopt;
  rec.file.fh.assign({reinterpret_cast<const std::uint8_t*>(fh.data()), fh.size()});
  switch (kind) {
    case static_cast<std::uint8_t>(DirtyRecord::Kind::Write): {
      rec.kind = DirtyRecord::Kind::Write;
      std::uint32_t len = 0;
      if (!r.get(rec.offset) || !get_writer(r, rec.writer) || !r.get(len)) return std::nullopt;
      d.data_at = r.at();
      if (!r.take(len, rec.data)) return std::nullopt;
      // No write may reach past what an offset can name.
      if (rec.offset > std::numeric_limits<std::uint64_t>::max() - len) return std::nullopt;
      break;
    }
    case static_cast<std::uint8_t>(DirtyRecord::Kind::Truncate):
    case static_cast<std::uint8_t>(DirtyRecord::Kind::Start):
    case static_cast<std::uint8_t>(DirtyRecord::Kind::CleanStop):
      rec.kind = static_cast<DirtyRecord::Kind>(kind);
      if (!r.get(rec.offset)) return std::nullopt;
      break;
    case static_cast<std::uint8_t>(DirtyRecord::Kind::Clean):
      rec.kind = DirtyRecord::Kind::Clean;
      if (!r.get(rec.offset) || !r.get(rec.length) || !r.get(rec.upto)) return std::nullopt;
      if (rec.offset > std::numeric_limits<std::uint64_t>::max() - rec.length) return std::nullopt;
      break;
    case static_cast<std::uint8_t>(DirtyRecord::Kind::Drop): rec.kind = DirtyRecord::Kind::Drop; break;
    case static_cast<std::uint8_t>(DirtyRecord::Kind::Times): {
      rec.kind = DirtyRecord::Kind::Times;
      std::uint8_t which = 0;
      if (!r.get(which) || (which & ~(kAtime | kMtime)) != 0 || !get_time(r, which & kAtime, rec.atime) ||
          !get_time(r, which & kMtime, rec.mtime) || !get_writer(r, rec.writer))
        return std::nullopt;
      break;
    }
    default: return std::nullopt;
  }
  if (r.at() != total) return std::nullopt;  // trailing bytes: not a frame this version wrote
  d.frame_bytes = total;
  return d;
}

}  // namespace nfsgw::cache
