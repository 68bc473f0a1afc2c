#include "tools/wan-emu/rpc_stream_parser.h"

#include <algorithm>
#include <cstring>

namespace nfsgw::wanemu {

namespace {
constexpr std::uint32_t kLastFragmentBit = 0x80000000u;
constexpr std::uint32_t kMsgCall = 0;
constexpr std::uint32_t kMsgReply = 1;
constexpr std::uint32_t kRpcVersion = 2;

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
}  // namespace

std::uint32_t RpcStreamParser::header_word(std::size_t i) const { return be32(header_ + 4 * i); }

void RpcStreamParser::go_desync(std::size_t extra_bytes) {
  desync_ = true;
  unparsed_ += record_bytes_ + extra_bytes;
  record_bytes_ = 0;
}

void RpcStreamParser::end_of_record() {
  ++records_;
  if (!header_done_) ++short_records_;
  header_have_ = 0;
  header_done_ = false;
  first_fragment_ = true;
  record_bytes_ = 0;
}

bool RpcStreamParser::header_is_sane() {
  // Called whenever a header word completes; returns false when the stream is garbage.
  if (header_have_ >= 8) {
    std::uint32_t mtype = header_word(1);
    if (mtype != kMsgCall && mtype != kMsgReply) return false;
  }
  if (header_have_ >= 12 && header_word(1) == kMsgCall && header_word(2) != kRpcVersion) return false;
  return true;
}

void RpcStreamParser::take_header_bytes(const std::uint8_t*& p, std::size_t& n,
                                        std::size_t& in_frag, std::vector<RpcMessageInfo>& out) {
  std::size_t want = kCallHeaderBytes - header_have_;
  std::size_t k = std::min({want, n, in_frag});
  std::memcpy(header_ + header_have_, p, k);
  header_have_ += k;
  p += k;
  n -= k;
  in_frag -= k;
  record_bytes_ += k;
  if (!header_is_sane()) {
    go_desync(0);
    return;
  }
  if (header_have_ >= kReplyHeaderBytes && header_word(1) == kMsgReply) {
    out.push_back({RpcMessageInfo::Kind::Reply, header_word(0), 0, 0, 0});
    header_done_ = true;
  } else if (header_have_ == kCallHeaderBytes) {
    out.push_back({RpcMessageInfo::Kind::Call, header_word(0), header_word(3), header_word(4),
                   header_word(5)});
    header_done_ = true;
  }
}

void RpcStreamParser::feed(std::span<const std::uint8_t> bytes, std::vector<RpcMessageInfo>& out) {
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  while (n > 0 && !desync_) {
    if (!in_fragment_) {
      std::size_t k = std::min(n, sizeof mark_ - mark_have_);
      std::memcpy(mark_ + mark_have_, p, k);
      mark_have_ += k;
      p += k;
      n -= k;
      record_bytes_ += k;
      if (mark_have_ < sizeof mark_) break;
      mark_have_ = 0;
      std::uint32_t word = be32(mark_);
      std::uint32_t len = word & ~kLastFragmentBit;
      if (len > max_fragment_ || (first_fragment_ && len == 0)) {
        go_desync(0);
        break;
      }
      in_fragment_ = true;
      last_fragment_ = (word & kLastFragmentBit) != 0;
      first_fragment_ = false;
      fragment_left_ = len;
    } else {
      std::size_t in_frag = fragment_left_;
      if (!header_done_) {
        take_header_bytes(p, n, in_frag, out);
        if (desync_) break;
      }
      std::size_t skip = std::min(n, in_frag);
      p += skip;
      n -= skip;
      in_frag -= skip;
      record_bytes_ += skip;
      fragment_left_ = static_cast<std::uint32_t>(in_frag);
    }
    if (in_fragment_ && fragment_left_ == 0) {
      in_fragment_ = false;
      if (last_fragment_) end_of_record();
    }
  }
  if (desync_) unparsed_ += n;
}

}  // namespace nfsgw::wanemu
