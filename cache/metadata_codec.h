// Byte encodings of the metadata cache's keys and records (metadata_records.h).
//
// Keys (each record kind has its own column family, so kinds never collide):
//   object prefix  = export id (4 bytes, big-endian) | handle length (1) | handle
//   attrs, listings, links: object prefix
//   lookups:        object prefix of the directory | name bytes
//   access:         object prefix | uid (4) | gid (4) | gids (4 each, sorted, unique)
//   fs:             object prefix | kind (1)
// Every key of one object starts with its object prefix, every key of an export
// with its 4-byte export id; the handle length byte (at most 64) keeps one handle
// from being a prefix of another's keys. Integers are big-endian so that keys sort
// by export, then by handle.
//
// Values: version (1) | kind tag (1) | last used, seconds since the epoch (4,
// big-endian) | payload, all integers big-endian. Decoding is bounds-checked and
// must consume the value exactly; anything else decodes to "absent".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cache/metadata_records.h"

namespace nfsgw::cache::codec {

inline constexpr std::uint8_t kValueVersion = 1;

void append_object_prefix(std::string& out, const ObjectKey& k);
void append_key(std::string& out, const ObjectKey& k);  // attrs, listings, links
void append_key(std::string& out, const NameKey& k);
void append_key(std::string& out, const CredKey& k);
void append_key(std::string& out, const FsKey& k);

std::string object_prefix(const ObjectKey& k);
std::string export_prefix(std::uint32_t export_id);
/// The first key after every key starting with `prefix`; empty when there is
/// none (a prefix of 0xff bytes only).
std::string prefix_end(std::string_view prefix);

/// Encodes `r` with its last-used time (seconds since the epoch).
std::string encode_value(const AttrRecord& r, std::uint32_t used_s);
std::string encode_value(const LookupRecord& r, std::uint32_t used_s);
std::string encode_value(const ListingRecord& r, std::uint32_t used_s);
std::string encode_value(const LinkRecord& r, std::uint32_t used_s);
std::string encode_value(const AccessRecord& r, std::uint32_t used_s);
std::string encode_value(const FsRecord& r, std::uint32_t used_s);

/// False (and `out` unspecified) when `v` is not a valid value of that kind.
bool decode_value(std::string_view v, AttrRecord& out, std::uint32_t& used_s);
bool decode_value(std::string_view v, LookupRecord& out, std::uint32_t& used_s);
bool decode_value(std::string_view v, ListingRecord& out, std::uint32_t& used_s);
bool decode_value(std::string_view v, LinkRecord& out, std::uint32_t& used_s);
bool decode_value(std::string_view v, AccessRecord& out, std::uint32_t& used_s);
bool decode_value(std::string_view v, FsRecord& out, std::uint32_t& used_s);

/// The last-used time of an encoded value of any kind, without decoding the rest.
std::optional<std::uint32_t> value_used_time(std::string_view v);

}  // namespace nfsgw::cache::codec
