// Gateway file handles: what clients hold instead of the origin's handles.
//
// Layout (at most 64 bytes, the NFSv3 limit, whatever the origin's handle size):
//   version(1) | export id(4) | kind(1) | payload | mac(16)
// kind Root: no payload (the export root, stable even before the origin is reached);
// kind Embedded: the origin handle itself, when it fits (up to 42 bytes);
// kind Delta: a longer origin handle written as its difference from the export's
//   origin root handle (a tag of the root, the length, a bitmap of the bytes equal
//   to the root's, the others), when that fits in 42 bytes;
// kind Digest: otherwise, a 16-byte keyed digest of (export id, origin handle),
//   mapped back to the origin handle in the node's KvStore;
// kind Mapped: read only, the form nfsgw issued before Delta and Digest (an id from
//   a per-node counter); still resolved from the store so that handles clients hold
//   across an upgrade keep working on the node that issued them.
// Every handle nfsgw issues is a function of the secret, the export id, the origin
// handle and (Delta) the export's origin root handle only: nodes that share the
// secret file and the export paths issue the same handles, and resolve each
// other's Root, Embedded and Delta handles without having seen them. A Digest
// handle resolves only on a node that has wrapped it once (docs/design.md).
// The mac is HMAC-SHA256 over everything before it, truncated to 16 bytes, keyed
// from the secret file: a forged or altered handle fails verification and is
// answered with NFS3ERR_BADHANDLE without reaching the origin.
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
  enum class Kind : std::uint8_t { Root = 1, Embedded = 2, Mapped = 3, Delta = 4, Digest = 5 };

  struct Decoded {
    std::uint32_t export_id = 0;
    Kind kind = Kind::Root;
    nfs3::FileHandle origin;  // empty for Kind::Root and Kind::Delta
    /// Kind::Delta only: the payload, for resolve_delta with the export's origin root.
    nfs3::FileHandle delta;
  };

  /// `secret` must be at least 32 bytes. `map` holds mapped handles and must outlive
  /// the codec.
  HandleCodec(std::vector<std::uint8_t> secret, KvStore& map);
  ~HandleCodec();

  nfs3::FileHandle root(std::uint32_t export_id) const;
  /// Wraps an origin handle: embedded when it fits; else, given the export's origin
  /// root handle, a delta from it when that fits; else a digest, whose mapping is
  /// written to the store before the handle is returned. Pass `root` whenever it is
  /// known: without it a long handle always gets the Digest form.
  nfs3::FileHandle wrap(std::uint32_t export_id, const nfs3::FileHandle& origin,
                        const nfs3::FileHandle* root = nullptr);
  /// Verifies and unwraps; nullopt for anything forged, altered, truncated, of an
  /// unknown version, or a digest (or legacy id) the store does not know. A Delta
  /// handle comes back with `delta` set: resolve it with resolve_delta.
  ///
  /// Const although it may remember the answer in this thread's HandleMemo
  /// (handle_memo.h): that memo is a cache of a pure function, not part of the
  /// codec. The answer depends only on the handle's bytes, the secret (fixed for
  /// the codec's life) and, for Digest and Mapped handles, a store record that
  /// never changes once written (no budget or sweep erases the handle map). Only
  /// successes are remembered, and only for this codec (its instance owns the
  /// slots), so a remembered answer is the one unwrap_uncached() gives, and no
  /// caller can tell whether the memo answered. The memo is the calling thread's
  /// own, so concurrent unwraps share nothing writable, as const promises.
  std::optional<Decoded> unwrap(const nfs3::FileHandle& gateway) const;
  /// The origin handle of a verified Delta payload, given the export's origin root
  /// handle; nullopt when it does not fit that root (the origin's root handle
  /// changed since the handle was issued: the handle is stale).
  static std::optional<nfs3::FileHandle> resolve_delta(const nfs3::FileHandle& delta,
                                                       const nfs3::FileHandle& root);

 private:
  nfs3::FileHandle wrap_uncached(std::uint32_t export_id, const nfs3::FileHandle& origin,
                                 const nfs3::FileHandle* root);
  std::optional<nfs3::FileHandle> resolve_digest(std::uint32_t export_id, std::span<const std::uint8_t> digest) const;
  std::optional<nfs3::FileHandle> resolve_legacy(std::uint32_t export_id, std::uint64_t id) const;
  std::optional<Decoded> unwrap_uncached(const nfs3::FileHandle& gateway) const;

  std::unique_ptr<KeyedHmac> mac_;     // keyed from the secret
  std::unique_ptr<KeyedHmac> digest_;  // keyed from the secret (another label)
  KvStore& map_;
  const std::uint64_t instance_;  // owns this codec's slots in the per-thread memo (new_table_owner())
};

/// Reads the secret file (at least 32 bytes, used as they are). When it does not
/// exist, creates it with 32 random bytes and mode 0600. Throws std::runtime_error
/// with a clear message (too short, unreadable, ...).
std::vector<std::uint8_t> load_or_create_secret(const std::string& path);

}  // namespace nfsgw::cache
