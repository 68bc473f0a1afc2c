// Remembers which procedure each outstanding xid of one connection called, so a reply
// (which carries only the xid) can be attributed to its procedure.
//
// Bounded: a peer that never answers must not grow memory without limit. When the
// table is full it is emptied, and replies to the forgotten calls are counted as
// unmatched (a visible, honest loss rather than a guess).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "tools/wan-emu/traffic_counters.h"

namespace nfsgw::wanemu {

class XidTracker {
 public:
  explicit XidTracker(std::size_t max_outstanding = 1u << 16) : max_(max_outstanding) {}

  void on_call(std::uint32_t xid, const ProcKey& k) {
    if (outstanding_.size() >= max_) outstanding_.clear();
    outstanding_[xid] = k;
  }

  /// The procedure the reply answers, if its call was seen; forgets the xid.
  std::optional<ProcKey> on_reply(std::uint32_t xid) {
    auto it = outstanding_.find(xid);
    if (it == outstanding_.end()) return std::nullopt;
    ProcKey k = it->second;
    outstanding_.erase(it);
    return k;
  }

  std::size_t outstanding() const { return outstanding_.size(); }

 private:
  std::size_t max_;
  std::unordered_map<std::uint32_t, ProcKey> outstanding_;
};

}  // namespace nfsgw::wanemu
