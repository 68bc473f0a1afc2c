// Byte encodings of the data block store's index (block_store.h).
//
// Families and keys (integers big-endian, so keys sort by export, file, index):
//   data_files:  file key = object prefix (metadata_codec.h: export id | handle
//                length | handle)                           -> FileRecord
//   data_blocks: file key | block index (8)                 -> BlockRecord
//   data_lru:    last used, ms since the epoch (8) | file key -> empty
// The handle length byte keeps one file's keys from being a prefix of another's,
// so a file's blocks are exactly the keys starting with its file key.
//
// Values: version (1) | payload. Decoding is bounds-checked and must consume the
// value exactly; anything else decodes to "absent".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cache/clock.h"
#include "cache/metadata_records.h"

namespace nfsgw::cache::codec {

/// One origin file in the store.
struct FileRecord {
  Stamp stamp;                  // its blocks were fetched under this
  std::uint64_t id = 0;         // names its data file; never reused
  Millis last_used = 0;         // also in its data_lru key
  std::uint64_t blocks = 0;     // stored blocks
  std::uint64_t bytes = 0;      // their lengths
  friend bool operator==(const FileRecord&, const FileRecord&) = default;
};

/// One stored block.
struct BlockRecord {
  std::uint64_t file_id = 0;    // the FileRecord's id when written
  std::uint32_t length = 0;
  std::uint32_t crc = 0;        // CRC32C of the bytes
  friend bool operator==(const BlockRecord&, const BlockRecord&) = default;
};

std::string file_key(const ObjectKey& file);
/// Appends file_key(file) to `out` (a buffer a caller reuses).
void append_file_key(std::string& out, const ObjectKey& file);
std::string block_key(std::string_view file_key, std::uint64_t index);
/// The index of a data_blocks key (its last 8 bytes).
std::uint64_t block_index_of(std::string_view block_key);
std::string lru_key(Millis last_used, std::string_view file_key);
/// Splits a data_lru key; false when it is not one.
bool split_lru_key(std::string_view key, Millis& last_used, std::string& file_key);

std::string encode(const FileRecord& r);
std::string encode(const BlockRecord& r);
std::optional<FileRecord> decode_file(std::string_view v);
std::optional<BlockRecord> decode_block(std::string_view v);

}  // namespace nfsgw::cache::codec
