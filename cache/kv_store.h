// A small persistent key-value store with column families. The interface leaks no
// RocksDB types, so the layers above can be tested against an in-memory store and
// the engine can change.
//
// Family 0 is the default family: the handle map and the export roots, written
// synced (a client holds those handles for ever). Named families (the metadata
// cache's) are opened with the store and written in batches, synced or not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfsgw::cache {

class KvStore {
 public:
  using Family = std::uint32_t;
  static constexpr Family kDefault = 0;

  enum class Durability { Synced, Unsynced };
  /// MemoryOnly answers from memtables and the block cache only (never reads a file).
  enum class Tier { Any, MemoryOnly };
  enum class Found { Yes, No, NotInMemory };

  /// A group of changes applied atomically.
  struct Batch {
    enum class Op : std::uint8_t { Put, Erase, EraseRange };
    struct Change {
      Op op;
      Family family;
      std::string key;    // Put, Erase; EraseRange: begin
      std::string value;  // Put; EraseRange: end (exclusive)
    };
    std::vector<Change> changes;
    void put(Family f, std::string_view k, std::string_view v) {
      changes.push_back({Op::Put, f, std::string(k), std::string(v)});
    }
    void erase(Family f, std::string_view k) { changes.push_back({Op::Erase, f, std::string(k), {}}); }
    /// Erases keys in [begin, end); an empty `end` means "to the end" (as in scan).
    void erase_range(Family f, std::string_view begin, std::string_view end) {
      changes.push_back({Op::EraseRange, f, std::string(begin), std::string(end)});
    }
    bool empty() const { return changes.empty(); }
  };

  struct FamilyUsage {
    std::uint64_t keys = 0;   // estimate
    std::uint64_t bytes = 0;  // on disk (SST files) plus memtables, estimate
  };

  virtual ~KvStore() = default;

  // The default family, synced: the handle map.
  std::optional<std::string> get(std::string_view key) {
    std::string v;
    return get(kDefault, key, v, Tier::Any) == Found::Yes ? std::optional<std::string>(std::move(v))
                                                          : std::nullopt;
  }
  void put(std::string_view key, std::string_view value) {
    Batch b;
    b.put(kDefault, key, value);
    write(b, Durability::Synced);
  }
  void erase(std::string_view key) {
    Batch b;
    b.erase(kDefault, key);
    write(b, Durability::Synced);
  }

  /// Families by name, in the order given when the store was opened: family i+1 is
  /// names[i]. Throws std::out_of_range for an unknown name.
  virtual Family family(std::string_view name) const = 0;
  /// Throws std::runtime_error on an I/O error.
  virtual Found get(Family f, std::string_view key, std::string& value, Tier tier) = 0;
  /// Throws std::runtime_error on an I/O error (disk full, read-only...).
  virtual void write(const Batch& batch, Durability durability) = 0;
  /// Visits keys in [begin, end) in order until `visit` returns false. May read
  /// from disk: not for Asio threads. An empty `end` means "to the end".
  virtual void scan(Family f, std::string_view begin, std::string_view end,
                    const std::function<bool(std::string_view key, std::string_view value)>& visit) = 0;
  virtual FamilyUsage usage(Family f) = 0;

  /// What the engine holds in RAM now (bytes): its block cache (with what is
  /// charged to it) and, apart, what is outside it.
  struct MemoryUsage {
    std::uint64_t cache_capacity = 0;  // the block cache's configured size
    std::uint64_t cache_usage = 0;     // everything in it, the memtables' charge included
    std::uint64_t cache_pinned = 0;    // of which pinned (in use, or index/filter pinned)
    std::uint64_t memtables = 0;       // every family's memtables (charged to the cache)
    std::uint64_t write_buffer_limit = 0;  // the memtables' share: the largest is flushed beyond it
    std::uint64_t table_readers = 0;   // index/filter blocks held outside the cache
  };
  virtual MemoryUsage memory() { return {}; }
  /// After a failed write (disk full, read-only): asks the store to accept writes
  /// again (RocksDB: DB::Resume). Throws std::runtime_error when it cannot yet.
  virtual void recover() {}
};

/// What a RocksDB database may keep in RAM: one block cache (data, index and filter
/// blocks) that the memtables are charged to, and the memtables' part of it, beyond
/// which the largest is flushed.
struct RocksDbMemory {
  std::size_t block_cache_bytes = 16u << 20;
  std::size_t write_buffer_bytes = 4u << 20;
};

/// Opens (creating if needed) a RocksDB database in `dir` with the named column
/// families (created when missing), within `memory`. Throws std::runtime_error
/// with RocksDB's message.
std::unique_ptr<KvStore> open_rocksdb_store(const std::string& dir, RocksDbMemory memory,
                                            const std::vector<std::string>& families = {});
/// The same with a block cache of `block_cache_mb`, a quarter of it for memtables.
std::unique_ptr<KvStore> open_rocksdb_store(const std::string& dir, unsigned block_cache_mb,
                                            const std::vector<std::string>& families = {});
/// A store kept in memory only (unit tests), with the same families.
std::unique_ptr<KvStore> make_memory_store(const std::vector<std::string>& families = {});

}  // namespace nfsgw::cache
