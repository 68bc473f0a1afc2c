// Gateway file handles: what clients hold instead of the origin's handles.
//
// Layout (at most 64 bytes, the NFSv3 limit, whatever the origin's handle size):
//   version(1) | export id(4) | kind(1) | payload | mac(16)
// kind Root: no payload (the export root, stable even before the origin is reached);
// kind Embedded: the origin handle itself, when it fits (up to 42 bytes);
// kind Mapped: an 8-byte id, mapped to the origin handle persistently in a KvStore.
// The mac is HMAC-SHA256 over everything before it, truncated to 16 bytes, keyed
// from the secret file: a forged or altered handle fails verification and is
// answered with NFS3ERR_BADHANDLE without reaching the origin. Nodes that share the
// secret (and, for mapped handles, the store) issue the same handles.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/kv_store.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::cache {

class KeyedHmac;

class HandleCodec {
 public:
  enum class Kind : std::uint8_t { Root = 1, Embedded = 2, Mapped = 3 };

  struct Decoded {
    std::uint32_t export_id = 0;
    Kind kind = Kind::Root;
    nfs3::FileHandle origin;  // empty for Kind::Root
  };

  /// `secret` must be at least 32 bytes. `map` holds mapped handles and must outlive
  /// the codec.
  HandleCodec(std::vector<std::uint8_t> secret, KvStore& map);
  ~HandleCodec();

  nfs3::FileHandle root(std::uint32_t export_id) const;
  /// Wraps an origin handle (embedded when it fits, else mapped; the mapping is
  /// written to the store before the handle is returned).
  nfs3::FileHandle wrap(std::uint32_t export_id, const nfs3::FileHandle& origin);
  /// Verifies and unwraps; nullopt for anything forged, altered, truncated, of an
  /// unknown version, or mapped to an id the store does not know.
  std::optional<Decoded> unwrap(const nfs3::FileHandle& gateway) const;

 private:
  nfs3::FileHandle wrap_uncached(std::uint32_t export_id, const nfs3::FileHandle& origin);
  std::optional<Decoded> unwrap_uncached(const nfs3::FileHandle& gateway) const;

  std::unique_ptr<KeyedHmac> mac_;  // keyed from the secret
  KvStore& map_;
  const std::uint64_t instance_;  // tags this codec's entries in the per-thread memo
  mutable std::mutex mu_;  // guards id allocation
};

/// Reads the secret file (at least 32 bytes, used as they are). When it does not
/// exist, creates it with 32 random bytes and mode 0600. Throws std::runtime_error
/// with a clear message (too short, unreadable, ...).
std::vector<std::uint8_t> load_or_create_secret(const std::string& path);

}  // namespace nfsgw::cache
