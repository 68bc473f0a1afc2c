#include "tools/wan-emu/delay_line.h"

#include <algorithm>

namespace nfsgw::wanemu {

void DelayLine::push(Clock::time_point release, std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return;
  release = std::max(release, last_release_);
  last_release_ = release;
  chunks_.push_back(Chunk{release, std::vector<std::uint8_t>(bytes.begin(), bytes.end())});
  queued_ += bytes.size();
}

std::size_t DelayLine::take_due(Clock::time_point now, std::vector<std::vector<std::uint8_t>>& out,
                                std::size_t max_bytes, Lateness* late) {
  std::size_t moved = 0;
  while (!chunks_.empty() && chunks_.front().release <= now) {
    if (moved > 0 && moved + chunks_.front().data.size() > max_bytes) break;
    moved += chunks_.front().data.size();
    if (late) {
      auto l = now - chunks_.front().release;
      ++late->chunks;
      late->total += l;
      late->max = std::max(late->max, l);
    }
    out.push_back(std::move(chunks_.front().data));
    chunks_.pop_front();
  }
  queued_ -= moved;
  return moved;
}

}  // namespace nfsgw::wanemu
