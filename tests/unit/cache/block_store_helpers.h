// Files, stamps and block contents for the data block store's tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "cache/block_store.h"

namespace nfsgw::cache::testing {

/// The block size of the block store tests: small, so that files span several.
inline constexpr std::uint32_t kBlock = 4096;

inline ObjectKey data_file(std::uint32_t export_id, std::uint8_t n) {
  ObjectKey k;
  k.export_id = export_id;
  const std::uint8_t fh[] = {0xf1, n, 0x07, n, 0x42};
  k.fh.assign(fh);
  return k;
}

/// Flips one bit of the byte at `offset` of a file, as a disk fault would.
inline void flip_byte(const std::filesystem::path& file, std::uint64_t offset) {
  std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
  io.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  io.read(&c, 1);
  c = static_cast<char>(c ^ 0x01);
  io.seekp(static_cast<std::streamoff>(offset));
  io.write(&c, 1);
}

inline Stamp data_stamp(std::uint64_t size, std::uint32_t mtime = 100) {
  Stamp s;
  s.fileid = 77;
  s.size = size;
  s.mtime = {mtime, 5};
  s.ctime = {mtime, 6};
  return s;
}

/// `size` bytes that differ with `seed` (and from position to position).
inline std::string pattern(std::size_t size, std::uint32_t seed) {
  std::string s(size, '\0');
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& c : s) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

}  // namespace nfsgw::cache::testing
