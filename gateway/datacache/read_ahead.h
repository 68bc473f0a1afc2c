// Which blocks to read ahead: per file, where the last READ ended and how far
// read-ahead has already been started. Knows nothing of the store or the origin.
//
// A READ is sequential when it starts at, or within one block of, the end of the
// file's previous READ (from any client: interleaved readers of one file still
// count), or at offset 0 of a file not seen yet. After a sequential READ the
// blocks from the one after the READ's end up to `window_bytes` past it (and not
// past the file's end) are due, less those already started for the same version
// of the file. A READ elsewhere resets that mark.
//
// Bounded: at most `max_files` files are remembered, the least recently read
// forgotten first. Safe from any thread.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/metadata_records.h"
#include "protocol/nfs3_types.h"

namespace nfsgw::datacache {

/// Blocks [first, end).
struct BlockRange {
  std::uint64_t first = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const { return end > first ? end - first : 0; }
};

class ReadAhead {
 public:
  ReadAhead(std::uint32_t block_bytes, std::uint64_t window_bytes, std::size_t max_files = 1024);

  /// Notes a READ of bytes [offset, end) of `fh`, whose version is `stamp`, and
  /// returns the blocks to start reading ahead now: at most `max_blocks`, taken as
  /// started. Empty when the READ is not sequential or the window is 0.
  BlockRange on_read(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t offset,
                     std::uint64_t end, std::uint64_t max_blocks);
  /// on_read() when it would start nothing (with any number of slots): notes the
  /// READ and returns true. When it would start something, changes nothing and
  /// returns false (the caller then calls on_read() where it can start fetches).
  bool on_read_if_none_due(const nfs3::FileHandle& fh, const cache::Stamp& stamp, std::uint64_t offset,
                           std::uint64_t end);
  void forget(const nfs3::FileHandle& fh);
  void clear();
  std::size_t files() const;

 private:
  struct File;
  /// What on_read() decides for the file (or a new one); changes nothing.
  struct Decision {
    bool sequential = false;
    BlockRange due;
  };
  Decision decide(const File* f, const cache::Stamp& stamp, std::uint64_t offset, std::uint64_t end) const;
  /// Notes the READ of a file (mu_ held): its entry, made when new.
  File& note(std::string key, const cache::Stamp& stamp, std::uint64_t end, bool sequential);

  struct File {
    std::string key;
    cache::Stamp stamp;
    std::uint64_t last_end = 0;
    std::uint64_t started_until = 0;  // blocks below this were started for `stamp`
  };

  std::uint32_t block_;
  std::uint64_t window_;
  std::size_t max_files_;
  mutable std::mutex mu_;
  std::list<File> lru_;  // most recent first
  std::unordered_map<std::string, std::list<File>::iterator> files_;
};

}  // namespace nfsgw::datacache
