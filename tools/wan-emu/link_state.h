// Everything the relay sessions of all pairs share: the link's current delay and
// bandwidth per direction, whether it is cut, the counters, and the live sessions
// (so `cut` can drop them). Lives on the emulator's single io thread; no locking.
#pragma once

#include <chrono>
#include <cstddef>
#include <unordered_set>

#include "tools/wan-emu/link_shaper.h"
#include "tools/wan-emu/traffic_counters.h"

namespace nfsgw::wanemu {

class RelaySession;

struct LinkState {
  std::chrono::milliseconds delay[2] = {std::chrono::milliseconds{0}, std::chrono::milliseconds{0}};
  LinkShaper shaper[2];
  bool cut = false;
  /// Per direction and connection, reading pauses while this many bytes wait in
  /// the delay line (the emulated link's buffer; TCP flow control does the rest).
  std::size_t max_queued_bytes = 32u << 20;
  TrafficCounters counters;
  std::unordered_set<RelaySession*> sessions;

  std::chrono::milliseconds delay_of(Direction d) const { return delay[static_cast<int>(d)]; }
  LinkShaper& shaper_of(Direction d) { return shaper[static_cast<int>(d)]; }
  /// No timer is needed in this direction: bytes go straight through.
  bool pass_through(Direction d) const {
    return delay[static_cast<int>(d)].count() == 0 && shaper[static_cast<int>(d)].unlimited();
  }
};

}  // namespace nfsgw::wanemu
