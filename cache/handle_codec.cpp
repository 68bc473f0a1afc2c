// Gateway file handles: building, verifying and unwrapping them (layout in
// handle_codec.h).
//
// Delta payload (origin handles of 43 to 64 bytes, against the export's origin root
// handle R): root tag(4) | len(1) | mask(ceil(len/8)) | the bytes i with mask bit i
// clear, in order. Bit i (byte i/8, bit i%8) set means origin[i] == R[i]; the root
// tag is a 32-bit hash of R, so a payload is never resolved against another root.
// Used when it fits in 42 bytes (a 64-byte handle may differ from the root's in up
// to 29 bytes): origin handles of one file system usually share their file system
// id, and often their whole layout, with the root's.
//
// Digest records, in the shared KvStore under the "fh/" prefix:
//   fh/d2o/<digest(16)>          -> <export id><origin>
// The digest is HMAC-SHA256 (a key derived from the secret, apart from the MAC's)
// of <export id><origin>, truncated to 16 bytes. The record is written (synced)
// before the handle is returned, and a record is checked against its digest when
// read, so a damaged or foreign record is refused, never followed.
//
// Legacy records, written by nfsgw before Delta and Digest and only read now:
//   fh/i2o/<id(8)>               -> <export id><origin>   (Kind::Mapped)
//   fh/o2i/..., fh/next           (no longer read or written)
#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cache/handle_codec.h"
#include "cache/handle_memo.h"
#include "cache/key_hash.h"
#include "cache/keyed_hmac.h"
#include "cache/thread_table.h"

namespace nfsgw::cache {
namespace {

constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kHeader = 6;  // version(1) | export id(4) | kind(1)
constexpr std::size_t kMac = 16;
constexpr std::size_t kMaxEmbedded = nfs3::kFhSize - kHeader - kMac;  // 42
constexpr std::size_t kIdSize = 8;
constexpr std::size_t kMinSecret = 32;
// Keys the MAC with a value derived from the secret rather than the secret itself,
// so the same secret file could key other things without cross-use.
constexpr char kMacLabel[] = "nfsgw file handle mac v1";
constexpr char kDigestLabel[] = "nfsgw file handle digest v1";
constexpr std::size_t kDigestSize = 16;
constexpr std::size_t kMinLong = kMaxEmbedded + 1;  // Delta and Digest handles: 43..64

void put_be32(std::string& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
void put_be64(std::string& out, std::uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
std::uint64_t get_be(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}
const std::uint8_t* bytes_of(const std::string& s) { return reinterpret_cast<const std::uint8_t*>(s.data()); }

std::string reverse_key(std::uint64_t id) {
  std::string k = "fh/i2o/";
  put_be64(k, id);
  return k;
}
std::string digest_key(std::span<const std::uint8_t> digest) {
  std::string k = "fh/d2o/";
  k.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return k;
}
/// <export id><origin>: a digest's input and its record's value.
std::string digest_input(std::uint32_t export_id, const nfs3::FileHandle& origin) {
  std::string r;
  put_be32(r, export_id);
  r.append(reinterpret_cast<const char*>(origin.bytes.data()), origin.len);
  return r;
}

constexpr std::size_t kRootTag = 4;

/// Names the root handle a Delta payload was written against (FNV-1a, 32 bits): a
/// payload is resolved only against the same root, never spliced into the bytes of
/// another one (say the origin's export now on another file system). The MAC, not
/// this tag, is what stops forgeries.
std::uint32_t root_tag(const nfs3::FileHandle& root) {
  std::uint32_t h = 2166136261u;
  for (std::size_t i = 0; i < root.len; ++i) h = (h ^ root.bytes[i]) * 16777619u;
  return h ^ root.len;
}

/// The Delta payload of `origin` against `root`, or nullopt when it is over 42 bytes.
std::optional<std::vector<std::uint8_t>> encode_delta(const nfs3::FileHandle& origin,
                                                      const nfs3::FileHandle& root) {
  const std::size_t len = origin.len, mask_bytes = (len + 7) / 8;
  std::vector<std::uint8_t> out(kRootTag + 1 + mask_bytes, 0);
  const std::uint32_t tag = root_tag(root);
  for (std::size_t i = 0; i < kRootTag; ++i) out[i] = static_cast<std::uint8_t>(tag >> (24 - 8 * i));
  out[kRootTag] = static_cast<std::uint8_t>(len);
  std::uint8_t* mask = out.data() + kRootTag + 1;
  std::vector<std::uint8_t> literal;
  for (std::size_t i = 0; i < len; ++i) {
    if (i < root.len && origin.bytes[i] == root.bytes[i]) {
      mask[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
    } else {
      literal.push_back(origin.bytes[i]);
    }
  }
  if (out.size() + literal.size() > kMaxEmbedded) return std::nullopt;
  out.insert(out.end(), literal.begin(), literal.end());
  return out;
}

/// Whether a Delta payload is well formed: a root tag, a long length, its mask, and
/// exactly as many literal bytes as the mask has clear bits.
bool delta_well_formed(std::span<const std::uint8_t> p) {
  if (p.size() < kRootTag + 1) return false;
  const std::size_t len = p[kRootTag];
  if (len < kMinLong || len > nfs3::kFhSize) return false;
  const std::size_t mask_bytes = (len + 7) / 8;
  if (p.size() < kRootTag + 1 + mask_bytes) return false;
  const std::uint8_t* mask = p.data() + kRootTag + 1;
  std::size_t literal = 0;
  for (std::size_t i = 0; i < len; ++i)
    if (!(mask[i / 8] & (1u << (i % 8)))) ++literal;
  // Bits past len must be clear: one payload per origin handle.
  for (std::size_t i = len; i < mask_bytes * 8; ++i)
    if (mask[i / 8] & (1u << (i % 8))) return false;
  return p.size() == kRootTag + 1 + mask_bytes + literal;
}

std::uint32_t export_of(const nfs3::FileHandle& gateway) {
  return static_cast<std::uint32_t>(get_be(gateway.bytes.data() + 1, 4));
}
/// A gateway handle ends in its MAC: its last bytes are already a good hash.
std::size_t mac_hash(const nfs3::FileHandle& gateway) {
  return static_cast<std::size_t>(get_be(gateway.bytes.data() + gateway.len - 8, 8));
}
std::size_t origin_hash(std::uint32_t export_id, const nfs3::FileHandle& origin) {
  const std::string_view bytes(reinterpret_cast<const char*>(origin.bytes.data()), origin.len);
  return key_hash(bytes) ^ (std::size_t{export_id} * 0x9e3779b97f4a7c15ull);
}

/// Builds header | payload | mac.
nfs3::FileHandle seal(const KeyedHmac& mac_of, std::uint32_t export_id, HandleCodec::Kind kind,
                      std::span<const std::uint8_t> payload) {
  std::array<std::uint8_t, nfs3::kFhSize> buf{};
  buf[0] = kVersion;
  for (int i = 0; i < 4; ++i) buf[1 + i] = static_cast<std::uint8_t>(export_id >> (24 - 8 * i));
  buf[5] = static_cast<std::uint8_t>(kind);
  std::copy(payload.begin(), payload.end(), buf.begin() + kHeader);
  std::size_t body = kHeader + payload.size();
  auto mac = mac_of(buf.data(), body);
  std::copy_n(mac.begin(), kMac, buf.begin() + body);
  return nfs3::FileHandle(std::span<const std::uint8_t>(buf.data(), body + kMac));
}

}  // namespace

HandleCodec::HandleCodec(std::vector<std::uint8_t> secret, KvStore& map)
    : map_(map), instance_(new_table_owner()) {
  if (secret.size() < kMinSecret) {
    throw std::invalid_argument("handle secret must be at least 32 bytes, got " + std::to_string(secret.size()));
  }
  auto derived = hmac_sha256(secret, kMacLabel, sizeof kMacLabel - 1);
  mac_ = std::make_unique<KeyedHmac>(derived);
  OPENSSL_cleanse(derived.data(), derived.size());
  derived = hmac_sha256(secret, kDigestLabel, sizeof kDigestLabel - 1);
  digest_ = std::make_unique<KeyedHmac>(derived);
  OPENSSL_cleanse(derived.data(), derived.size());
  OPENSSL_cleanse(secret.data(), secret.size());
}

HandleCodec::~HandleCodec() = default;

nfs3::FileHandle HandleCodec::root(std::uint32_t export_id) const {
  return seal(*mac_, export_id, Kind::Root, {});
}

nfs3::FileHandle HandleCodec::wrap(std::uint32_t export_id, const nfs3::FileHandle& origin,
                                   const nfs3::FileHandle* root) {
  // The memo is keyed by (export, origin) only: a long handle wrapped without the
  // root (tests, tools) must not be remembered as the answer for calls that give it.
  if (origin.len > kMaxEmbedded && root == nullptr) return wrap_uncached(export_id, origin, root);
  const std::size_t hash = origin_hash(export_id, origin);
  if (const auto* hit = HandleMemo::find(HandleMemo::Direction::Wrap, instance_, hash, export_id, origin))
    return hit->value;
  nfs3::FileHandle gateway = wrap_uncached(export_id, origin, root);
  HandleMemo::keep(HandleMemo::Direction::Wrap, instance_, hash, HandleMemo::Slot{export_id, 0, origin, gateway});
  return gateway;
}

nfs3::FileHandle HandleCodec::wrap_uncached(std::uint32_t export_id, const nfs3::FileHandle& origin,
                                            const nfs3::FileHandle* root) {
  if (origin.len <= kMaxEmbedded) return seal(*mac_, export_id, Kind::Embedded, origin.view());
  if (root) {
    if (auto delta = encode_delta(origin, *root)) return seal(*mac_, export_id, Kind::Delta, *delta);
  }
  const std::string input = digest_input(export_id, origin);
  const auto digest = (*digest_)(input.data(), input.size());
  const std::span<const std::uint8_t> id(digest.data(), kDigestSize);
  const std::string key = digest_key(id);
  // The record never changes once written (the digest names its contents), so
  // concurrent wraps of one handle write the same bytes: no lock needed.
  if (auto stored = map_.get(key); !stored || *stored != input) map_.put(key, input);
  return seal(*mac_, export_id, Kind::Digest, id);
}

std::optional<nfs3::FileHandle> HandleCodec::resolve_delta(const nfs3::FileHandle& delta,
                                                           const nfs3::FileHandle& root) {
  const auto p = delta.view();
  if (!delta_well_formed(p)) return std::nullopt;
  if (get_be(p.data(), kRootTag) != root_tag(root)) return std::nullopt;
  const std::size_t len = p[kRootTag], mask_bytes = (len + 7) / 8;
  const std::uint8_t* mask = p.data() + kRootTag + 1;
  std::array<std::uint8_t, nfs3::kFhSize> out{};
  std::size_t literal = kRootTag + 1 + mask_bytes;
  for (std::size_t i = 0; i < len; ++i) {
    if (mask[i / 8] & (1u << (i % 8))) {
      if (i >= root.len) return std::nullopt;
      out[i] = root.bytes[i];
    } else {
      out[i] = p[literal++];
    }
  }
  return nfs3::FileHandle(std::span<const std::uint8_t>(out.data(), len));
}

std::optional<HandleCodec::Decoded> HandleCodec::unwrap(const nfs3::FileHandle& gateway) const {
  // Checked before the memo reads the handle's MAC bytes (a length over 64 is as
  // forged as one too short).
  if (gateway.len < kHeader + kMac || gateway.len > nfs3::kFhSize) return std::nullopt;
  const std::uint32_t export_id = export_of(gateway);
  const std::size_t hash = mac_hash(gateway);
  if (const auto* hit = HandleMemo::find(HandleMemo::Direction::Unwrap, instance_, hash, export_id, gateway)) {
    Decoded d{export_id, static_cast<Kind>(hit->kind), {}, {}};
    (d.kind == Kind::Delta ? d.delta : d.origin) = hit->value;
    return d;
  }
  auto decoded = unwrap_uncached(gateway);
  if (decoded) {
    HandleMemo::keep(HandleMemo::Direction::Unwrap, instance_, hash,
                     HandleMemo::Slot{export_id, static_cast<std::uint8_t>(decoded->kind), gateway,
                                      decoded->kind == Kind::Delta ? decoded->delta : decoded->origin});
  }
  return decoded;
}

std::optional<nfs3::FileHandle> HandleCodec::resolve_digest(std::uint32_t export_id,
                                                            std::span<const std::uint8_t> digest) const {
  auto record = map_.get(digest_key(digest));
  if (!record || record->size() < 4 + kMinLong || record->size() > 4 + nfs3::kFhSize) return std::nullopt;
  if (get_be(bytes_of(*record), 4) != export_id) return std::nullopt;
  const auto check = (*digest_)(record->data(), record->size());
  if (CRYPTO_memcmp(check.data(), digest.data(), kDigestSize) != 0) return std::nullopt;
  return nfs3::FileHandle(std::span<const std::uint8_t>(bytes_of(*record) + 4, record->size() - 4));
}

std::optional<nfs3::FileHandle> HandleCodec::resolve_legacy(std::uint32_t export_id, std::uint64_t id) const {
  auto record = map_.get(reverse_key(id));
  if (!record || record->size() <= 4 || record->size() > 4 + nfs3::kFhSize) return std::nullopt;
  // The id was issued for one export; the MAC already binds the pair, this also
  // catches a store shared with a differently configured node.
  if (get_be(bytes_of(*record), 4) != export_id) return std::nullopt;
  return nfs3::FileHandle(std::span<const std::uint8_t>(bytes_of(*record) + 4, record->size() - 4));
}

std::optional<HandleCodec::Decoded> HandleCodec::unwrap_uncached(const nfs3::FileHandle& gateway) const {
  auto b = gateway.view();
  if (b.size() < kHeader + kMac || b.size() > nfs3::kFhSize) return std::nullopt;
  if (b[0] != kVersion) return std::nullopt;
  const std::size_t payload = b.size() - kHeader - kMac;
  Decoded d;
  d.export_id = static_cast<std::uint32_t>(get_be(b.data() + 1, 4));
  switch (b[5]) {
    case static_cast<std::uint8_t>(Kind::Root):
      if (payload != 0) return std::nullopt;
      d.kind = Kind::Root;
      break;
    case static_cast<std::uint8_t>(Kind::Embedded):
      if (payload > kMaxEmbedded) return std::nullopt;
      d.kind = Kind::Embedded;
      break;
    case static_cast<std::uint8_t>(Kind::Mapped):
      if (payload != kIdSize) return std::nullopt;
      d.kind = Kind::Mapped;
      break;
    case static_cast<std::uint8_t>(Kind::Delta):
      if (!delta_well_formed(b.subspan(kHeader, payload))) return std::nullopt;
      d.kind = Kind::Delta;
      break;
    case static_cast<std::uint8_t>(Kind::Digest):
      if (payload != kDigestSize) return std::nullopt;
      d.kind = Kind::Digest;
      break;
    default:
      return std::nullopt;
  }
  const std::size_t body = kHeader + payload;
  auto mac = (*mac_)(b.data(), body);
  if (CRYPTO_memcmp(mac.data(), b.data() + body, kMac) != 0) return std::nullopt;

  std::optional<nfs3::FileHandle> origin;
  switch (d.kind) {
    case Kind::Root:
      return d;
    case Kind::Embedded:
      d.origin.assign(b.subspan(kHeader, payload));
      return d;
    case Kind::Delta:
      d.delta.assign(b.subspan(kHeader, payload));
      return d;
    case Kind::Digest:
      origin = resolve_digest(d.export_id, b.subspan(kHeader, payload));
      break;
    case Kind::Mapped:
      origin = resolve_legacy(d.export_id, get_be(b.data() + kHeader, kIdSize));
      break;
  }
  if (!origin) return std::nullopt;
  d.origin = *origin;
  return d;
}

}  // namespace nfsgw::cache
