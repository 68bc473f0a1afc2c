// Where the dirty log (dirty_log.h) keeps its records: numbered segment files in
// one directory, each only ever appended to, made durable by sync(), and removed
// whole. Only bytes: the log frames, checks and indexes them.
//
// Durability, as a power loss sees it: bytes appended to a segment survive once a
// sync() of that segment has returned; bytes appended after the last sync may be
// kept, lost, or kept in part (any prefix, or with holes of zeros where the page
// cache wrote later pages first). create() and remove() are durable when they
// return (the directory is synced).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nfsgw::cache {

/// A disk error of the dirty log; `code` is the errno.
class DirtyLogError : public std::runtime_error {
 public:
  DirtyLogError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

class LogFiles {
 public:
  virtual ~LogFiles() = default;
  /// The segments there are, by number, lowest first.
  virtual std::vector<std::uint64_t> list() = 0;
  /// Creates segment `n`, empty, durably. Throws DirtyLogError.
  virtual void create(std::uint64_t n) = 0;
  /// Appends `bytes` to segment `n`; returns the offset they start at. Throws
  /// DirtyLogError (ENOSPC, EIO); then the segment's size is what it was before.
  virtual std::uint64_t append(std::uint64_t n, std::string_view bytes) = 0;
  /// Makes every byte appended to segment `n` so far durable. Throws DirtyLogError.
  virtual void sync(std::uint64_t n) = 0;
  /// Reads `size` bytes at `offset`; false when the segment has fewer. Throws
  /// DirtyLogError on an I/O error.
  virtual bool read(std::uint64_t n, std::uint64_t offset, char* out, std::size_t size) = 0;
  virtual std::uint64_t size(std::uint64_t n) = 0;
  /// Cuts segment `n` to `size` bytes, durably (a torn tail found on opening).
  virtual void truncate(std::uint64_t n, std::uint64_t size) = 0;
  /// Removes segment `n`, durably. Throws DirtyLogError.
  virtual void remove(std::uint64_t n) = 0;
};

/// Segments under `dir` (created when missing): `dir`/<n, 16 hex>.log. Other files
/// there are left alone.
std::unique_ptr<LogFiles> open_disk_log_files(const std::string& dir);

/// Segments in memory that remember what was synced, for tests of what a crash or
/// a power loss leaves. Safe from any number of threads.
class MemoryLogFiles final : public LogFiles {
 public:
  std::vector<std::uint64_t> list() override;
  void create(std::uint64_t n) override;
  std::uint64_t append(std::uint64_t n, std::string_view bytes) override;
  void sync(std::uint64_t n) override;
  bool read(std::uint64_t n, std::uint64_t offset, char* out, std::size_t size) override;
  std::uint64_t size(std::uint64_t n) override;
  void truncate(std::uint64_t n, std::uint64_t size) override;
  void remove(std::uint64_t n) override;

  /// How much of each segment's unsynced tail a power loss leaves.
  enum class Loss {
    All,          // every unsynced byte is gone
    Half,         // the first half of it stays (a tail torn mid-record)
    HoleInside,   // all of it stays but for a run of zeros in its middle
  };
  /// A power loss now: every segment keeps its synced bytes and, of the rest, what
  /// `loss` says. Then the files are as a restarted machine finds them.
  void power_loss(Loss loss);
  /// From now on every append, sync, create and remove throws DirtyLogError(code);
  /// 0 ends it.
  void fail_with(int code);
  /// A disk of `bytes` (0: no bound): an append that would take the segments past
  /// it throws DirtyLogError(ENOSPC) and writes nothing; removing segments frees room.
  void set_capacity(std::uint64_t bytes);
  /// Flips one bit of segment `n` at `offset` (a disk that returns bad data).
  void flip_bit(std::uint64_t n, std::uint64_t offset);
  std::uint64_t syncs() const;
  /// The bytes of segment `n` that a power loss would keep for sure.
  std::uint64_t synced_size(std::uint64_t n) const;

 private:
  struct Segment {
    std::string bytes;
    std::size_t synced = 0;
  };
  Segment& at(std::uint64_t n);
  void check_failure() const;

  mutable std::mutex mu_;
  std::vector<std::pair<std::uint64_t, Segment>> segments_;  // by number
  int fail_code_ = 0;
  std::uint64_t capacity_ = 0;
  std::uint64_t syncs_ = 0;
};

}  // namespace nfsgw::cache
