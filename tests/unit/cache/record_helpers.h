// Sample metadata records for the metadata cache tests.
#pragma once

#include <cstdint>
#include <string>

#include "cache/metadata_records.h"
#include "handle_helpers.h"

namespace nfsgw::cache::testing {

/// Attributes whose every field depends on `seed`.
inline nfs3::Fattr sample_attr(std::uint32_t seed, nfs3::FileType type = nfs3::FileType::Reg) {
  nfs3::Fattr a;
  a.type = type;
  a.mode = 0644 + seed;
  a.nlink = 1 + seed;
  a.uid = 1000 + seed;
  a.gid = 100 + seed;
  a.size = 4096ull * seed + 0x100000000ull;
  a.used = 8192ull * seed;
  a.rdev = {seed, seed + 1};
  a.fsid = 0xfeedface00000000ull + seed;
  a.fileid = 0x1234567800000000ull + seed;
  a.atime = {1'700'000'000 + seed, 1 + seed};
  a.mtime = {1'700'000'100 + seed, 2 + seed};
  a.ctime = {1'700'000'200 + seed, 3 + seed};
  return a;
}

/// A distinct 24-byte origin handle for each `n`.
inline ObjectKey object(std::uint32_t n, std::uint32_t export_id = 1) {
  auto fh = origin(24, static_cast<std::uint8_t>(n));
  for (int i = 0; i < 4; ++i) fh.bytes[static_cast<std::size_t>(i) + 1] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  return {export_id, fh};
}

inline AttrRecord attr_record(std::uint32_t seed) { return {sample_attr(seed), 1'000 + seed, seed, seed}; }

}  // namespace nfsgw::cache::testing
