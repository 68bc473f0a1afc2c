// Large test files: written with pseudo-random (incompressible, never sparse)
// content and compared by SHA-256, so 1 GiB files are checked without holding them
// in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace integ {

/// Writes `size` pseudo-random bytes (seeded by `seed`) to `path`. Throws on error.
void write_random_file(const std::string& path, std::uint64_t size, std::uint64_t seed);
/// SHA-256 of bytes given in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t n);
  /// The digest in hex; ends the computation.
  std::string hex();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

/// Hex SHA-256 of a file's contents; throws when it cannot be read.
std::string sha256_file(const std::string& path);
/// Size of a local file, or -1 when it does not exist.
long long file_size(const std::string& path);

}  // namespace integ
