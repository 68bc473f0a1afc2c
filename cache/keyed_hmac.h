// HMAC-SHA256 under one fixed key, computed many times a second (every file
// handle a client sends is verified, every handle nfsgw answers is signed).
//
// OpenSSL's one-shot HMAC() looks the algorithm up and schedules the key on every
// call (about 3 us here), and even a reused EVP_MAC context costs about 0.4 us and
// allocations; this computes the key's inner and outer SHA-256 states once and
// copies them per MAC (keyed_hmac.cpp), the same computation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace nfsgw::cache {

class KeyedHmac {
 public:
  using Digest = std::array<std::uint8_t, 32>;

  /// Throws std::runtime_error when OpenSSL cannot provide HMAC-SHA256.
  explicit KeyedHmac(std::span<const std::uint8_t> key);
  ~KeyedHmac();
  KeyedHmac(const KeyedHmac&) = delete;
  KeyedHmac& operator=(const KeyedHmac&) = delete;

  /// Thread-safe. Throws std::runtime_error if OpenSSL fails.
  Digest operator()(const void* data, std::size_t n) const;

 private:
  struct Template;
  std::unique_ptr<Template> template_;
};

/// One-shot HMAC-SHA256 (for deriving keys; not for hot paths).
KeyedHmac::Digest hmac_sha256(std::span<const std::uint8_t> key, const void* data, std::size_t n);

}  // namespace nfsgw::cache
