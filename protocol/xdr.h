// XDR (RFC 4506) primitives over byte spans.
//
// Reader never reads past its span: every accessor checks the remaining length
// first and throws xdr::DecodeError on truncated or out-of-bounds input, so a
// malformed RPC turns into GARBAGE_ARGS in the dispatcher, never a crash.
// Writer appends big-endian, 4-byte aligned items to a caller-owned vector.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/payload.h"

namespace nfsgw::xdr {

/// Thrown by Reader when the input is truncated or violates a declared bound.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bytes needed to pad `n` up to the next multiple of four.
constexpr std::size_t padding(std::size_t n) { return (4 - (n & 3)) & 3; }

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> buf) : buf_(buf) {}

  std::uint32_t u32();
  std::int32_t i32() { return static_cast<std::int32_t>(u32()); }
  std::uint64_t u64();
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  /// XDR bool: 0 or 1; any other value is a DecodeError.
  bool boolean();

  /// Fixed-length opaque of `n` bytes plus padding; returns a view into the buffer.
  std::span<const std::uint8_t> opaque_fixed(std::size_t n);
  /// Variable-length opaque with a length prefix; length above `max` is a DecodeError.
  std::span<const std::uint8_t> opaque_var(std::size_t max);
  /// Variable-length string; length above `max` is a DecodeError.
  std::string string(std::size_t max);

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return buf_.size() - pos_; }
  /// The unread tail (for example an RPC call's procedure arguments).
  std::span<const std::uint8_t> rest() const { return buf_.subspan(pos_); }

 private:
  const std::uint8_t* take(std::size_t n);

  std::span<const std::uint8_t> buf_;
  std::size_t pos_ = 0;
};

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}

  // Inline: a reply is mostly these (a fattr3 is 21 of them), and push_back's
  // fast path costs less than a call that resizes and zero-fills.
  void u32(std::uint32_t v) {
    out_.push_back(static_cast<std::uint8_t>(v >> 24));
    out_.push_back(static_cast<std::uint8_t>(v >> 16));
    out_.push_back(static_cast<std::uint8_t>(v >> 8));
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
  void u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v >> 32));
    u32(static_cast<std::uint32_t>(v));
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void boolean(bool v) { u32(v ? 1u : 0u); }
  /// A run of `N` bytes of fixed-size items (a fattr3) written with one resize:
  ///   auto run = w.fixed<84>(); run.u32(...); run.u64(...);
  /// The run must be filled exactly (checked in debug builds).
  template <std::size_t N>
  class Run {
   public:
    explicit Run(std::uint8_t* p) : p_(p), end_(p + N) {}
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
    ~Run() { assert(p_ == end_); }
    void u32(std::uint32_t v) {
      p_[0] = static_cast<std::uint8_t>(v >> 24);
      p_[1] = static_cast<std::uint8_t>(v >> 16);
      p_[2] = static_cast<std::uint8_t>(v >> 8);
      p_[3] = static_cast<std::uint8_t>(v);
      p_ += 4;
    }
    void u64(std::uint64_t v) {
      u32(static_cast<std::uint32_t>(v >> 32));
      u32(static_cast<std::uint32_t>(v));
    }

   private:
    std::uint8_t* p_;
    std::uint8_t* const end_;
  };
  template <std::size_t N>
  Run<N> fixed() {
    static_assert(N % 4 == 0, "XDR items are multiples of four bytes");
    const std::size_t at = out_.size();
    out_.resize(at + N);
    return Run<N>(out_.data() + at);
  }

  void opaque_fixed(std::span<const std::uint8_t> data);
  void opaque_var(std::span<const std::uint8_t> data);
  void string(std::string_view s);

  std::size_t size() const { return out_.size(); }
  std::vector<std::uint8_t>& buffer() { return out_; }

  /// Lets the message's last item, a large opaque (a READ's data), stay in its own
  /// buffer instead of being copied: opaque_var_last() then writes only the length
  /// here and moves the bytes to `*slot`. The caller sends `*slot` and its padding
  /// (padding(slot->size()) zero bytes) right after buffer(). Good for one item.
  void detach_last_opaque_into(nfs3::Payload* slot) { detached_ = slot; }
  bool can_detach_last_opaque() const { return detached_ != nullptr; }
  /// A variable-length opaque that is the last item of the message: moved to the
  /// slot when one was given, copied like opaque_var() otherwise.
  void opaque_var_last(nfs3::Payload&& data) {
    if (!detached_) {
      opaque_var(data);
      return;
    }
    u32(static_cast<std::uint32_t>(data.size()));
    *detached_ = std::move(data);
    detached_ = nullptr;
  }

 private:
  std::vector<std::uint8_t>& out_;
  nfs3::Payload* detached_ = nullptr;
};

}  // namespace nfsgw::xdr
