// TCP record marking (RFC 5531 section 11): each fragment is preceded by a 4-byte
// big-endian header whose top bit marks the last fragment of a record.
#include "protocol/record_marking.h"

#include <algorithm>

namespace nfsgw::rpc {

namespace {
// Reserve at most this much ahead of the bytes actually received, so a header
// announcing a large fragment that never arrives cannot pin memory.
constexpr std::size_t kMaxReserveAhead = 256 * 1024;
}  // namespace

namespace {
/// Grows geometrically: reserving exactly per fragment would make a stream of tiny
/// fragments copy the record over and over (quadratic time).
void grow(std::vector<std::uint8_t>& v, std::size_t extra) {
  if (v.capacity() - v.size() >= extra) return;
  v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
}
}  // namespace

RecordAssembler::Status RecordAssembler::feed(std::span<const std::uint8_t>& in) {
  if (complete_) return Status::Record;  // the caller has not taken it yet
  for (;;) {
    if (!in_fragment_) {
      while (header_have_ < 4 && !in.empty()) {
        header_[header_have_++] = in.front();
        in = in.subspan(1);
      }
      if (header_have_ < 4) return Status::NeedMore;
      std::uint32_t h = (std::uint32_t{header_[0]} << 24) | (std::uint32_t{header_[1]} << 16) |
                        (std::uint32_t{header_[2]} << 8) | std::uint32_t{header_[3]};
      std::size_t len = h & ~kLastFragmentBit;
      // Checked before anything is allocated. The header stays buffered, so every
      // later feed() answers TooLarge again: the stream cannot be resynchronised.
      if (len > max_ || record_.size() > max_ - len) return Status::TooLarge;
      header_have_ = 0;
      in_fragment_ = true;
      last_fragment_ = (h & kLastFragmentBit) != 0;
      fragment_left_ = len;
      grow(record_, std::min(len, kMaxReserveAhead));
    }
    std::size_t n = std::min(fragment_left_, in.size());
    record_.insert(record_.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    in = in.subspan(n);
    fragment_left_ -= n;
    if (fragment_left_ > 0) return Status::NeedMore;
    in_fragment_ = false;
    if (last_fragment_) {
      complete_ = true;
      return Status::Record;
    }
  }
}

std::vector<std::uint8_t> RecordAssembler::take_record() {
  std::vector<std::uint8_t> out = std::move(record_);
  record_.clear();
  complete_ = false;
  last_fragment_ = false;
  return out;
}

void write_record_header(std::uint8_t out[4], std::uint32_t len) {
  std::uint32_t h = kLastFragmentBit | (len & ~kLastFragmentBit);
  out[0] = static_cast<std::uint8_t>(h >> 24);
  out[1] = static_cast<std::uint8_t>(h >> 16);
  out[2] = static_cast<std::uint8_t>(h >> 8);
  out[3] = static_cast<std::uint8_t>(h);
}

}  // namespace nfsgw::rpc
