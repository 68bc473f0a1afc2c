// CRC32C (Castagnoli), the checksum of the data block store: with the SSE4.2
// instruction when the CPU has it, else table-driven (slicing by 8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nfsgw::cache {

/// Continues a CRC32C over `data`; crc32c(0, s) is the CRC of s.
std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t size);
/// The table-driven path alone (tests compare it with the instruction).
std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t size);
inline std::uint32_t crc32c(std::string_view s) { return crc32c(0, s.data(), s.size()); }

}  // namespace nfsgw::cache
