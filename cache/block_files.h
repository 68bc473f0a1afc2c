// Where the data block store keeps block bytes: one sparse file per origin file,
// named by the file record's id, a block at index * block size. Only bytes: the
// index (block_index_codec.h) says which blocks exist and checks them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nfsgw::cache {

class BlockFiles {
 public:
  virtual ~BlockFiles() = default;
  /// Throws BlockStoreError (ENOSPC, EIO...).
  virtual void write(std::uint64_t id, std::uint64_t offset, std::string_view data) = 0;
  /// Reads up to `size` bytes; returns how many there were (fewer when the file
  /// or the bytes are missing). Throws BlockStoreError on an I/O error.
  virtual std::size_t read(std::uint64_t id, std::uint64_t offset, char* out, std::size_t size) = 0;
  /// read() that never waits for the disk: only through a descriptor read() left
  /// open, and only bytes already in the page cache. nullopt when it would have to
  /// wait (then call read(), off the caller's thread). Never throws.
  virtual std::optional<std::size_t> read_now(std::uint64_t id, std::uint64_t offset, char* out,
                                              std::size_t size) = 0;
  /// Gives the space of a range back (best effort, never throws).
  virtual void punch(std::uint64_t id, std::uint64_t offset, std::uint64_t size) = 0;
  /// Removes a file (best effort, never throws).
  virtual void remove(std::uint64_t id) = 0;
  /// Removes every file whose id `known` refuses (left by a crash); returns how many.
  virtual std::uint64_t remove_unknown(const std::function<bool(std::uint64_t)>& known) = 0;
};

/// Files under `dir` (created when missing): `dir`/<id % 256, 2 hex>/<id, 16 hex>.
std::unique_ptr<BlockFiles> open_disk_block_files(const std::string& dir);
/// Bytes in memory (unit tests).
std::unique_ptr<BlockFiles> make_memory_block_files();

}  // namespace nfsgw::cache
