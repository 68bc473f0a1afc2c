// ONC RPC record marking over TCP (RFC 5531 section 11).
//
// RecordAssembler is fed bytes as they arrive and yields complete records. A record
// whose total size would exceed the configured bound is refused: the caller closes
// the connection, since the stream cannot be resynchronised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nfsgw::rpc {

constexpr std::uint32_t kLastFragmentBit = 0x80000000u;

class RecordAssembler {
 public:
  enum class Status { NeedMore, Record, TooLarge };

  explicit RecordAssembler(std::size_t max_record_bytes) : max_(max_record_bytes) {}

  /// Consumes bytes from `in` (advancing it). Stops as soon as a whole record is
  /// ready (Status::Record; take it with take_record()), when `in` is exhausted
  /// (NeedMore), or when the record being assembled is over the bound (TooLarge).
  Status feed(std::span<const std::uint8_t>& in);

  /// Moves out the completed record (valid after feed returned Record).
  std::vector<std::uint8_t> take_record();

 private:
  std::size_t max_;
  std::uint8_t header_[4] = {};
  std::size_t header_have_ = 0;
  std::size_t fragment_left_ = 0;
  bool in_fragment_ = false;
  bool last_fragment_ = false;
  bool complete_ = false;
  std::vector<std::uint8_t> record_;
};

/// Writes a record-marking header for a single last fragment of `len` bytes.
void write_record_header(std::uint8_t out[4], std::uint32_t len);

}  // namespace nfsgw::rpc
