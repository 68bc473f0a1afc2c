// A small persistent key-value store. The interface leaks no RocksDB types, so the
// layers above can be tested against an in-memory store and the engine can change.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace nfsgw::cache {

class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual std::optional<std::string> get(std::string_view key) = 0;
  virtual void put(std::string_view key, std::string_view value) = 0;
  virtual void erase(std::string_view key) = 0;
};

/// Opens (creating if needed) a RocksDB database in `dir`, with a block cache of
/// `memory_mb`. Throws std::runtime_error with RocksDB's message on failure.
std::unique_ptr<KvStore> open_rocksdb_store(const std::string& dir, unsigned memory_mb);
/// A store kept in memory only (unit tests, and caches that are switched off).
std::unique_ptr<KvStore> make_memory_store();

}  // namespace nfsgw::cache
