// Gateway file handles: building, verifying and unwrapping them (layout in
// handle_codec.h), and the persistent map for origin handles too long to embed.
//
// Map records, in the shared KvStore under the "fh/" prefix:
//   fh/next                      -> next id to hand out (8 bytes, big-endian)
//   fh/o2i/<export id><origin>   -> id (8 bytes): the same origin handle always
//                                   gets the same gateway handle
//   fh/i2o/<id>                  -> <export id><origin>: used by unwrap()
// Writes happen in the order counter, id->origin, origin->id, and the handle is
// returned only after all three: a crash in between leaves at most an unused id,
// never a handle a client holds without its mapping.
#include <openssl/crypto.h>

#include <array>
#include <atomic>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cache/handle_codec.h"
#include "cache/handle_memo.h"
#include "cache/keyed_hmac.h"

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

std::string forward_key(std::uint32_t export_id, const nfs3::FileHandle& origin) {
  std::string k = "fh/o2i/";
  put_be32(k, export_id);
  k.append(reinterpret_cast<const char*>(origin.bytes.data()), origin.len);
  return k;
}
std::string reverse_key(std::uint64_t id) {
  std::string k = "fh/i2o/";
  put_be64(k, id);
  return k;
}
const std::string kNextKey = "fh/next";

std::atomic<std::uint64_t> next_codec_instance{1};

std::uint32_t export_of(const nfs3::FileHandle& gateway) {
  return static_cast<std::uint32_t>(get_be(gateway.bytes.data() + 1, 4));
}
/// A gateway handle ends in its MAC: its last bytes are already a good hash.
std::size_t mac_hash(const nfs3::FileHandle& gateway) {
  return static_cast<std::size_t>(get_be(gateway.bytes.data() + gateway.len - 8, 8));
}
std::size_t origin_hash(std::uint32_t export_id, const nfs3::FileHandle& origin) {
  const std::string_view bytes(reinterpret_cast<const char*>(origin.bytes.data()), origin.len);
  return std::hash<std::string_view>{}(bytes) ^ (std::size_t{export_id} * 0x9e3779b97f4a7c15ull);
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
    : map_(map), instance_(next_codec_instance.fetch_add(1)) {
  if (secret.size() < kMinSecret) {
    throw std::invalid_argument("handle secret must be at least 32 bytes, got " + std::to_string(secret.size()));
  }
  auto derived = hmac_sha256(secret, kMacLabel, sizeof kMacLabel - 1);
  mac_ = std::make_unique<KeyedHmac>(derived);
  OPENSSL_cleanse(derived.data(), derived.size());
  OPENSSL_cleanse(secret.data(), secret.size());
}

HandleCodec::~HandleCodec() = default;

nfs3::FileHandle HandleCodec::root(std::uint32_t export_id) const {
  return seal(*mac_, export_id, Kind::Root, {});
}

nfs3::FileHandle HandleCodec::wrap(std::uint32_t export_id, const nfs3::FileHandle& origin) {
  auto& set = HandleMemo::set_of(HandleMemo::Direction::Wrap, origin_hash(export_id, origin));
  if (const auto* hit = HandleMemo::find(set, instance_, export_id, origin)) return hit->value;
  nfs3::FileHandle gateway = wrap_uncached(export_id, origin);
  auto& slot = HandleMemo::victim(set);
  slot = HandleMemo::Slot{instance_, export_id, 0, origin, gateway};
  return gateway;
}

nfs3::FileHandle HandleCodec::wrap_uncached(std::uint32_t export_id, const nfs3::FileHandle& origin) {
  if (origin.len <= kMaxEmbedded) return seal(*mac_, export_id, Kind::Embedded, origin.view());

  const std::string fwd = forward_key(export_id, origin);
  auto as_handle = [&](const std::string& id_bytes) {
    return seal(*mac_, export_id, Kind::Mapped, std::span<const std::uint8_t>(bytes_of(id_bytes), kIdSize));
  };
  // Fast path without the lock: the mapping exists and never changes once written.
  if (auto id = map_.get(fwd); id && id->size() == kIdSize) return as_handle(*id);

  std::lock_guard lock(mu_);
  // Another thread may have mapped this handle while we waited.
  if (auto id = map_.get(fwd); id && id->size() == kIdSize) return as_handle(*id);

  std::uint64_t next = 1;
  if (auto stored = map_.get(kNextKey)) {
    if (stored->size() != kIdSize) throw std::runtime_error("handle map: corrupt id counter");
    next = get_be(bytes_of(*stored), kIdSize);
  }
  std::string next_bytes, id_bytes, origin_record;
  put_be64(next_bytes, next + 1);
  put_be64(id_bytes, next);
  put_be32(origin_record, export_id);
  origin_record.append(reinterpret_cast<const char*>(origin.bytes.data()), origin.len);
  map_.put(kNextKey, next_bytes);
  map_.put(reverse_key(next), origin_record);
  map_.put(fwd, id_bytes);
  return as_handle(id_bytes);
}

std::optional<HandleCodec::Decoded> HandleCodec::unwrap(const nfs3::FileHandle& gateway) const {
  // Checked before the memo reads the handle's MAC bytes (a length over 64 is as
  // forged as one too short).
  if (gateway.len < kHeader + kMac || gateway.len > nfs3::kFhSize) return std::nullopt;
  const std::uint32_t export_id = export_of(gateway);
  auto& set = HandleMemo::set_of(HandleMemo::Direction::Unwrap, mac_hash(gateway));
  if (const auto* hit = HandleMemo::find(set, instance_, export_id, gateway))
    return Decoded{export_id, static_cast<Kind>(hit->kind), hit->value};
  auto decoded = unwrap_uncached(gateway);
  if (decoded) {
    auto& slot = HandleMemo::victim(set);
    slot = HandleMemo::Slot{instance_, export_id, static_cast<std::uint8_t>(decoded->kind), gateway, decoded->origin};
  }
  return decoded;
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
    default:
      return std::nullopt;
  }
  const std::size_t body = kHeader + payload;
  auto mac = (*mac_)(b.data(), body);
  if (CRYPTO_memcmp(mac.data(), b.data() + body, kMac) != 0) return std::nullopt;

  if (d.kind == Kind::Embedded) {
    d.origin.assign(b.subspan(kHeader, payload));
  } else if (d.kind == Kind::Mapped) {
    auto record = map_.get(reverse_key(get_be(b.data() + kHeader, kIdSize)));
    if (!record || record->size() <= 4 || record->size() > 4 + nfs3::kFhSize) return std::nullopt;
    // The id was issued for one export; the MAC already binds the pair, this also
    // catches a store shared with a differently configured node.
    if (get_be(bytes_of(*record), 4) != d.export_id) return std::nullopt;
    d.origin.assign(std::span<const std::uint8_t>(bytes_of(*record) + 4, record->size() - 4));
  }
  return d;
}

}  // namespace nfsgw::cache
