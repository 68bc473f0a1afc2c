// The bytes of a READ reply: one heap block whose bytes are left uninitialised
// when it is made for a reader to fill (a pread into it, a block cache copying its
// block in place), instead of a std::vector that zero-fills on resize. Moved
// between layers; a copy is a deep copy (tests, a shared refusal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <utility>

namespace nfsgw::nfs3 {

class Payload {
 public:
  using value_type = std::uint8_t;
  using iterator = std::uint8_t*;
  using const_iterator = const std::uint8_t*;

  Payload() = default;
  /// `size` bytes whose values are unspecified until the caller writes them.
  static Payload uninitialized(std::size_t size) {
    Payload p;
    p.allocate(size);
    return p;
  }
  /// A copy of [first, last) (any forward range of bytes: vector or string iterators, pointers).
  template <std::forward_iterator It>
  Payload(It first, It last) {
    assign(first, last);
  }
  Payload(std::initializer_list<std::uint8_t> bytes) { assign(bytes.begin(), bytes.end()); }
  Payload(const Payload& other) { assign(other.begin(), other.end()); }
  Payload& operator=(const Payload& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Payload(Payload&& other) noexcept : bytes_(std::move(other.bytes_)), size_(std::exchange(other.size_, 0)) {}
  Payload& operator=(Payload&& other) noexcept {
    bytes_ = std::move(other.bytes_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  template <std::forward_iterator It>
  void assign(It first, It last) {
    allocate(static_cast<std::size_t>(std::distance(first, last)));
    std::uint8_t* out = bytes_.get();
    for (; first != last; ++first) *out++ = static_cast<std::uint8_t>(*first);
  }
  void assign(const std::uint8_t* first, const std::uint8_t* last) {
    allocate(static_cast<std::size_t>(last - first));
    if (size_ > 0) std::memcpy(bytes_.get(), first, size_);
  }
  /// Keeps the first `size` bytes (no reallocation); a larger size is ignored.
  void truncate(std::size_t size) {
    if (size < size_) size_ = size;
  }

  std::uint8_t* data() { return bytes_.get(); }
  const std::uint8_t* data() const { return bytes_.get(); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::uint8_t* begin() { return bytes_.get(); }
  std::uint8_t* end() { return bytes_.get() + size_; }
  const std::uint8_t* begin() const { return bytes_.get(); }
  const std::uint8_t* end() const { return bytes_.get() + size_; }
  std::uint8_t& operator[](std::size_t i) { return bytes_[i]; }
  std::uint8_t operator[](std::size_t i) const { return bytes_[i]; }
  operator std::span<const std::uint8_t>() const { return {bytes_.get(), size_}; }

  friend bool operator==(const Payload& a, const Payload& b) {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data(), b.data(), a.size_) == 0);
  }

 private:
  void allocate(std::size_t size) {
    bytes_ = size > 0 ? std::make_unique_for_overwrite<std::uint8_t[]>(size) : nullptr;
    size_ = size;
  }

  std::unique_ptr<std::uint8_t[]> bytes_;
  std::size_t size_ = 0;
};

}  // namespace nfsgw::nfs3
