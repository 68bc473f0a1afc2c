// Incremental observer of an ONC RPC byte stream over TCP (RFC 5531 record marking).
//
// The relay must forward bytes unchanged and immediately, so this parser never
// buffers a record: it only watches bytes go by and reports, for each record, the
// few header words it needs (xid, message type and, for a CALL, program, version and
// procedure). Headers may be split across reads and across fragments of one record.
//
// A stream that stops looking like RPC (a message type other than CALL/REPLY, a CALL
// with an RPC version other than 2, a fragment longer than the bound, an empty
// first fragment) cannot be resynchronised reliably, so the parser marks it
// desynchronised and from then on only counts the bytes as unparsed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nfsgw::wanemu {

/// What the parser learnt about one RPC message.
struct RpcMessageInfo {
  enum class Kind : std::uint8_t { Call, Reply };
  Kind kind = Kind::Call;
  std::uint32_t xid = 0;
  std::uint32_t prog = 0;  // CALL only
  std::uint32_t vers = 0;  // CALL only
  std::uint32_t proc = 0;  // CALL only
};

class RpcStreamParser {
 public:
  /// Fragments longer than this are taken as garbage (RFC 5531 allows up to 2^31-1,
  /// but no NFS peer sends anything near it).
  static constexpr std::uint32_t kDefaultMaxFragment = 64u << 20;

  explicit RpcStreamParser(std::uint32_t max_fragment = kDefaultMaxFragment)
      : max_fragment_(max_fragment) {}

  /// Observes the next bytes of the stream; appends one entry to `out` per message
  /// whose header became known within these bytes. Never fails.
  void feed(std::span<const std::uint8_t> bytes, std::vector<RpcMessageInfo>& out);

  /// True once the stream stopped looking like RPC; permanent.
  bool desynchronised() const { return desync_; }
  /// Bytes that could not be attributed to a well-formed record (everything from
  /// the start of the record that broke the framing onwards).
  std::uint64_t unparsed_bytes() const { return unparsed_; }
  /// Records whose last fragment has been fully seen.
  std::uint64_t records() const { return records_; }
  /// Records that ended before their header was complete (too short to classify).
  std::uint64_t short_records() const { return short_records_; }

 private:
  // The header words needed: xid, mtype, rpcvers, prog, vers, proc.
  static constexpr std::size_t kCallHeaderBytes = 24;
  static constexpr std::size_t kReplyHeaderBytes = 8;

  void start_fragment();
  void take_header_bytes(const std::uint8_t*& p, std::size_t& n, std::size_t& in_frag,
                         std::vector<RpcMessageInfo>& out);
  void end_of_record();
  void go_desync(std::size_t extra_bytes);
  bool header_is_sane();
  std::uint32_t header_word(std::size_t i) const;

  std::uint32_t max_fragment_;
  bool desync_ = false;
  std::uint64_t unparsed_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t short_records_ = 0;

  // Record marking state.
  std::uint8_t mark_[4] = {};
  std::size_t mark_have_ = 0;      // bytes of the current fragment mark seen
  bool in_fragment_ = false;       // mark complete, body bytes pending
  std::uint32_t fragment_left_ = 0;
  bool last_fragment_ = false;
  bool first_fragment_ = true;     // next fragment starts a record
  std::uint64_t record_bytes_ = 0; // bytes of the current record seen, marks included

  // Header collection state for the current record.
  std::uint8_t header_[kCallHeaderBytes] = {};
  std::size_t header_have_ = 0;
  bool header_done_ = false;
};

}  // namespace nfsgw::wanemu
