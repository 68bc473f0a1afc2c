// The handle codec's per-thread memo: handles this thread verified or wrapped lately.
//
// Every call verifies its handle's MAC, and every LOOKUP, CREATE or READDIRPLUS
// answer signs the handles it returns: an HMAC-SHA256 each, the largest cost of a
// cached LOOKUP after the RPC itself. Both are pure functions while the codec lives:
// a handle whose exact bytes were verified before is valid now (the secret does not
// change), and an origin handle wrapped before gets the same gateway handle (an
// embedded handle is deterministic, a mapped id never changes once written). So each
// thread keeps both directions of the handles it used last, tagged with the codec
// instance. A slot answers only for a key equal byte for byte, never by hash alone;
// what a forged handle can do is evict entries, costing HMACs, not trust.
//
// Four-way set-associative, 2,048 sets a direction: about 2.4 MiB a thread, outside
// memory_mb. (With two ways a random 2,000-handle working set missed about one call
// in six in callgrind: an HMAC each, 4 % of a cached GETATTR's instructions.) Not
// thread-safe by design: one table per thread (thread_local).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "protocol/nfs3_types.h"

namespace nfsgw::cache {

class HandleMemo {
 public:
  static constexpr std::size_t kSets = 2048;
  static constexpr std::size_t kWays = 4;

  struct Slot {
    std::uint64_t codec = 0;  // 0: empty
    std::uint32_t export_id = 0;
    std::uint8_t kind = 0;
    nfs3::FileHandle key;    // Unwrap: the gateway handle; Wrap: the origin handle
    nfs3::FileHandle value;  // Unwrap: the origin handle (empty for a root); Wrap: the gateway handle
  };
  struct Set {
    // The ways' key hashes side by side, compared first: a lookup reads this line
    // and only the way whose hash matches (a slot is 144 bytes).
    std::array<std::size_t, kWays> hashes{};
    std::uint8_t next = 0;  // the way the next new key replaces
    std::array<Slot, kWays> ways;
  };
  enum class Direction { Unwrap, Wrap };

  /// This thread's set for `hash` in one direction.
  static Set& set_of(Direction d, std::size_t hash) {
    thread_local std::unique_ptr<std::array<Set, 2 * kSets>> table;
    if (!table) table = std::make_unique<std::array<Set, 2 * kSets>>();
    return (*table)[(d == Direction::Unwrap ? 0 : kSets) + (hash ^ (hash >> 23)) % kSets];
  }

  /// The slot of `codec` whose key is `key` (and, for Wrap, whose export is
  /// `export_id`), or nullptr.
  static const Slot* find(const Set& set, std::size_t hash, std::uint64_t codec, std::uint32_t export_id,
                          const nfs3::FileHandle& key) {
    for (std::size_t i = 0; i < kWays; ++i) {
      if (set.hashes[i] != hash) continue;
      const Slot& s = set.ways[i];
      if (s.codec == codec && s.export_id == export_id && s.key == key) return &s;
    }
    return nullptr;
  }

  /// Keeps `slot` for `hash` in `set`: in an empty way, else in the next in turn.
  static void keep(Set& set, std::size_t hash, Slot slot) {
    std::size_t i = 0;
    while (i < kWays && set.ways[i].codec != 0) ++i;
    if (i == kWays) {
      i = set.next;
      set.next = static_cast<std::uint8_t>((set.next + 1) % kWays);
    }
    set.hashes[i] = hash;
    set.ways[i] = std::move(slot);
  }
};

}  // namespace nfsgw::cache
