// The persistent KvStore, on RocksDB. Nothing RocksDB-specific leaves this file.
//
// Durability: every write is synced (WriteOptions::sync). The store's most
// important user is HandleCodec's mapping of long origin handles: once a client has
// been given a mapped handle, losing the mapping in a power cut would turn that
// handle into ESTALE for good. KvStore::put() has no per-write durability flag, so
// all writes pay the fsync. Fine for the handle map (rare writes: only origin
// handles over 42 bytes); a data cache wanting cheaper writes would need a
// durability flag added to the KvStore interface.
//
// Memory: one LRU block cache of `memory_mb`; memtables are charged to the same
// cache through a WriteBufferManager, so the total stays near memory_mb.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "cache/kv_store.h"

namespace nfsgw::cache {
namespace {

[[noreturn]] void throw_status(const char* what, const std::string& dir, const rocksdb::Status& s) {
  throw std::runtime_error(std::string("rocksdb ") + what + " in " + dir + ": " + s.ToString());
}

class RocksDbStore final : public KvStore {
 public:
  RocksDbStore(std::unique_ptr<rocksdb::DB> db, std::string dir) : db_(std::move(db)), dir_(std::move(dir)) {
    write_.sync = true;
  }
  ~RocksDbStore() override {
    // Close() reports errors that the destructor would swallow; nothing can be
    // done about them here, but the WAL is synced on every write anyway.
    (void)db_->Close();
  }

  std::optional<std::string> get(std::string_view key) override {
    std::string value;
    auto s = db_->Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::nullopt;
    if (!s.ok()) throw_status("get", dir_, s);
    return value;
  }
  void put(std::string_view key, std::string_view value) override {
    auto s = db_->Put(write_, rocksdb::Slice(key.data(), key.size()),
                      rocksdb::Slice(value.data(), value.size()));
    if (!s.ok()) throw_status("put", dir_, s);
  }
  void erase(std::string_view key) override {
    auto s = db_->Delete(write_, rocksdb::Slice(key.data(), key.size()));
    if (!s.ok()) throw_status("delete", dir_, s);
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::string dir_;
  rocksdb::WriteOptions write_;
};

}  // namespace

std::unique_ptr<KvStore> open_rocksdb_store(const std::string& dir, unsigned memory_mb) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create cache directory " + dir + ": " + ec.message());

  const std::size_t cache_bytes = static_cast<std::size_t>(std::max(memory_mb, 1u)) << 20;
  auto block_cache = rocksdb::NewLRUCache(cache_bytes);

  rocksdb::BlockBasedTableOptions table;
  table.block_cache = block_cache;
  // Lookups are point gets by key: a bloom filter saves a disk read per miss.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;

  rocksdb::Options options;
  options.create_if_missing = true;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  options.write_buffer_size = std::clamp<std::size_t>(cache_bytes / 8, 4u << 20, 64u << 20);
  options.max_write_buffer_number = 2;
  options.write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(cache_bytes / 4, block_cache);
  options.max_background_jobs = 2;
  options.keep_log_file_num = 4;
  options.max_manifest_file_size = 64u << 20;

  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) throw_status("open", dir, s);
  return std::make_unique<RocksDbStore>(std::unique_ptr<rocksdb::DB>(raw), dir);
}

}  // namespace nfsgw::cache
