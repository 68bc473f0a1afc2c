// The records of the dirty log (dirty_log.h), as bytes in a segment.
//
// A frame: magic "NGDL" (4 bytes), the frame's whole length (u32), the CRC32C of
// every byte after the CRC (u32), then the body: version (u8, 1), kind (u8), the
// record's sequence number (u64), the file (cache space u32, handle length u8 and
// bytes), and by kind:
// - Write: offset (u64), the writer's uid, gid (u32 each), its groups (count u8,
//   at most 16, u32 each), the data's length (u32) and the data;
// - Truncate: the size (u64) the file's dirty bytes are cut to;
// - Drop: nothing (the file's dirty bytes are gone);
// - Start, CleanStop: the write verifier (u64) of the run that began, or that
//   ended in good order (the file is empty for both);
// - Clean: offset (u64), length (u64) and a sequence number (u64): the bytes of
//   that range written by records up to that number are committed at the origin;
// - Times: which times follow (u8: 1 atime, 2 mtime; 0 = none kept any more),
//   atime and mtime (seconds, nanoseconds: u32 each, 0 when absent), and the
//   writer as in Write (uid, gid, groups): the times a SETATTR set on a dirty
//   file, to be sent to the origin after its data, as that writer.
// Integers are little-endian. A frame that is short, torn, or fails its CRC
// decodes as nothing: never trusted, never partly used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/metadata_records.h"

namespace nfsgw::cache {

/// Who wrote the bytes, after squash: the flush sends them with these credentials.
struct Writer {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> gids;  // at most kMaxWriterGids
  friend bool operator==(const Writer&, const Writer&) = default;
};
inline constexpr std::size_t kMaxWriterGids = 16;

struct DirtyRecord {
  enum class Kind : std::uint8_t { Write = 1, Truncate = 2, Drop = 3, Start = 4, CleanStop = 5, Clean = 6, Times = 7 };
  Kind kind = Kind::Write;
  std::uint64_t seq = 0;
  /// The file: its cache space (the origin's, config::ExportConfig::cache_space)
  /// and ORIGIN handle, so every export of that origin sees the same dirty bytes.
  ObjectKey file;
  std::uint64_t offset = 0;  // Write, Clean: where the bytes start; Truncate: the size; Start, CleanStop: the verifier
  std::uint64_t length = 0;  // Clean: how many bytes
  std::uint64_t upto = 0;    // Clean: the newest write cleaned
  Writer writer;             // Write, Times
  std::optional<nfs3::Time> atime, mtime;  // Times: the times kept (neither: none any more)
  std::string_view data;     // Write: points into the buffer it was decoded from
};

/// The frame's length before its data (Write) or its whole length (others).
std::size_t dirty_frame_head_size(const DirtyRecord& r);
/// Appends `r`'s frame to `out`. Throws std::invalid_argument for a writer with
/// more than kMaxWriterGids groups or data over 4 GiB.
void encode_dirty_record(const DirtyRecord& r, std::string& out);

struct DecodedFrame {
  DirtyRecord record;
  std::size_t frame_bytes = 0;  // the whole frame
  std::size_t data_at = 0;      // Write: where its data starts in the frame
};
/// The frame at the start of `in`: nullopt when it is short, torn or corrupt.
std::optional<DecodedFrame> decode_dirty_frame(std::string_view in);
/// Bytes a frame's header needs to tell its length (magic and length).
inline constexpr std::size_t kDirtyFramePrefix = 8;
/// The length a frame prefix claims, or 0 when the magic is wrong.
std::uint32_t dirty_frame_length(std::string_view prefix);

}  // namespace nfsgw::cache
