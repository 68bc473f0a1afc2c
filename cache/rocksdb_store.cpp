// The persistent KvStore, on RocksDB. Nothing RocksDB-specific leaves this file.
//
// One database, the default column family (handle map, export roots) plus the
// named families (one per metadata record kind). Opening lists the families the
// database already has and opens all of them, creating the requested ones that
// are missing, so a database written by a newer or older nfsgw with more or fewer
// families still opens.
//
// Options, and why:
// - Memory (RocksDbMemory, a part of memory_mb: cache/memory_budget.h): one LRU
//   block cache shared by every family, and the memtables charged to that same
//   cache through a WriteBufferManager that flushes beyond their share, so the
//   whole database stays near the configured figure however many families exist. Each family's memtable is half that share. Index and filter blocks live
//   in the cache too (bounded), L0's pinned.
// - Bloom filters (10 bits/key, whole key) on every family: the workload is point
//   gets (attributes, a name in a directory, a credential's ACCESS answer), many
//   of them misses, and a filter saves a file read per miss. The prefix-scanned
//   families (lookups by directory, ACCESS by object) are only scanned by tools,
//   invalidation and the disk budget sweep, so they get no prefix extractor; their
//   point gets profit from the whole-key filter like the others.
// - Compression: none at L0 (freshly flushed, soon rewritten: not worth the CPU),
//   LZ4 everywhere else, the bottommost level included (ZSTD there made reads from
//   disk CPU-bound: a metadata cache reads far more than it writes). Each codec is
//   used only if this librocksdb build supports it (Debian 12's does: Snappy, zlib,
//   bzip2, LZ4, ZSTD), falling back to Snappy, then none.
// - Partitioned index and filters, top level pinned, index/filter blocks in the
//   block cache's high-priority pool: a database larger than the block cache then
//   reads small partitions per get instead of whole index/filter blocks.
// - Durability: the WAL is always on. Durability::Synced sets WriteOptions::sync
//   (the handle map: a client keeps a mapped handle for ever, so a mapping must
//   survive a power cut); Durability::Unsynced does not fsync (the metadata cache:
//   a record lost in a power cut is only a miss; the WAL in the page cache still
//   survives a crash of the process).
// - Background work: max_background_jobs = 2, one subcompaction: gateways run on
//   small boxes where the NFS threads need the cores.
// - Deletes: erase_range is a DeleteRange (one tombstone for a whole object or
//   export); files dense with point deletes (the disk budget sweep) are marked for
//   compaction, so the space comes back soon after a sweep.
// - level_compaction_dynamic_level_bytes: bounded space amplification, which keeps
//   the disk usage the budget sees close to the live data.
//
// Errors throw std::runtime_error with RocksDB's message and the directory.
//
// Recovery (recover(), after a failed write): DB::Resume() first. RocksDB cannot
// resume from every error: a WAL it could not create when switching memtables (a
// read-only disk: EROFS) is a fatal background error, and Resume() refuses for the
// life of the DB object. Then, once a probe file can be created in the directory
// again, the database is closed and opened again in place (its WAL replayed): the
// same object serves on, and every call waits on a shared lock that only the
// reopen takes exclusively. If that open fails, calls fail (std::runtime_error)
// until a later recover() opens it.
//
// Neither is tried while the disk has less free space than two memtables (what the
// next flush writes, plus the WAL that fills meanwhile): Resume() on a still-full
// disk reports success, the next writes fit in the WAL's preallocated space, and
// the store would fail again minutes later and say so again; a larger write on a
// writer still in error can trip RocksDB's own assertions (Debian's build keeps
// them). recover() throws "... MiB free" instead, and the caller tries later.
#include <sys/statvfs.h>

#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

#include <shared_mutex>
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "cache/kv_store.h"
#include "cache/rocksdb_log.h"

namespace nfsgw::cache {
namespace {

[[noreturn]] void throw_status(const char* what, const std::string& dir, const rocksdb::Status& s) {
  throw std::runtime_error(std::string("rocksdb ") + what + " in " + dir + ": " + s.ToString());
}

rocksdb::Slice slice(std::string_view s) { return {s.data(), s.size()}; }

/// What opening needs, kept for a reopen.
struct OpenSpec {
  rocksdb::DBOptions options;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;  // every family the database has
  std::vector<std::string> families;                         // ours, in the caller's order
  std::string dir;
  std::shared_ptr<rocksdb::Cache> block_cache;
};

/// An open database: the DB, a handle for every family it has, and ours.
struct OpenDb {
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> all_handles;
  std::vector<rocksdb::ColumnFamilyHandle*> families;  // [0] default, [i+1] families[i]
};

OpenDb open_db(const OpenSpec& spec);

class RocksDbStore final : public KvStore {
 public:
  RocksDbStore(OpenDb open, OpenSpec spec)
      : db_(open.db), all_handles_(std::move(open.all_handles)), families_(std::move(open.families)),
        names_(spec.families), dir_(spec.dir), min_free_bytes_(room_to_write(spec)), spec_(std::move(spec)) {}

  ~RocksDbStore() override { close(); }

  using KvStore::get;

  Family family(std::string_view name) const override {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return static_cast<Family>(i + 1);
    throw std::out_of_range("rocksdb in " + dir_ + ": no family '" + std::string(name) + "'");
  }

  Found get(Family f, std::string_view key, std::string& value, Tier tier) override {
    std::shared_lock lock(reopen_mu_);
    require_open();
    rocksdb::ReadOptions ro;
    if (tier == Tier::MemoryOnly) ro.read_tier = rocksdb::kBlockCacheTier;
    auto s = db_->Get(ro, handle(f), slice(key), &value);
    if (s.ok()) return Found::Yes;
    if (s.IsNotFound()) return Found::No;
    if (tier == Tier::MemoryOnly && s.IsIncomplete()) return Found::NotInMemory;
    throw_status("get", dir_, s);
  }

  void write(const Batch& batch, Durability durability) override {
    std::shared_lock lock(reopen_mu_);
    require_open();
    rocksdb::WriteBatch wb;
    for (const auto& c : batch.changes) {
      auto* cf = handle(c.family);
      rocksdb::Status s;
      switch (c.op) {
        case Batch::Op::Put:
          s = wb.Put(cf, slice(c.key), slice(c.value));
          break;
        case Batch::Op::Erase:
          s = wb.Delete(cf, slice(c.key));
          break;
        case Batch::Op::EraseRange:
          s = add_erase_range(wb, cf, c.key, c.value);
          break;
      }
      if (!s.ok()) throw_status("write batch", dir_, s);
    }
    if (wb.Count() == 0) return;
    rocksdb::WriteOptions wo;
    wo.sync = durability == Durability::Synced;
    auto s = db_->Write(wo, &wb);
    if (!s.ok()) throw_status("write", dir_, s);
  }

  void scan(Family f, std::string_view begin, std::string_view end,
            const std::function<bool(std::string_view, std::string_view)>& visit) override {
    std::shared_lock lock(reopen_mu_);
    require_open();
    rocksdb::ReadOptions ro;
    // Scans serve tools and the budget sweep: do not push the hot set out.
    ro.fill_cache = false;
    rocksdb::Slice upper = slice(end);
    if (!end.empty()) ro.iterate_upper_bound = &upper;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handle(f)));
    for (it->Seek(slice(begin)); it->Valid(); it->Next()) {
      auto k = it->key(), v = it->value();
      if (!visit({k.data(), k.size()}, {v.data(), v.size()})) return;
    }
    if (!it->status().ok()) throw_status("scan", dir_, it->status());
  }

  void recover() override {
    if (const auto free = free_bytes(); free && *free < min_free_bytes_) {
      throw std::runtime_error("rocksdb in " + dir_ + ": the disk has " + std::to_string(*free >> 20) +
                               " MiB free; writes start again at " + std::to_string(min_free_bytes_ >> 20) +
                               " MiB");
    }
    // A failed WAL or flush write leaves RocksDB refusing writes until resumed
    // (it may also have resumed by itself once space returned: then a no-op).
    {
      std::shared_lock lock(reopen_mu_);
      if (db_ != nullptr) {
        auto s = db_->Resume();
        if (s.ok()) return;
        // Fatal (say, no new WAL could be created): only a reopen clears it, and
        // only once the directory takes new files again.
        if (!writable()) throw_status("resume", dir_, s);
      } else if (!writable()) {
        throw std::runtime_error("rocksdb in " + dir_ + ": closed, and the directory does not take new files yet");
      }
    }
    std::unique_lock lock(reopen_mu_);
    close();
    OpenDb fresh = open_db(spec_);  // throws: stays closed until the next recover()
    db_ = fresh.db;
    all_handles_ = std::move(fresh.all_handles);
    families_ = std::move(fresh.families);
  }

  FamilyUsage usage(Family f) override {
    std::shared_lock lock(reopen_mu_);
    require_open();
    auto* cf = handle(f);
    FamilyUsage u;
    std::uint64_t v = 0;
    if (db_->GetIntProperty(cf, rocksdb::DB::Properties::kEstimateNumKeys, &v)) u.keys = v;
    if (db_->GetIntProperty(cf, rocksdb::DB::Properties::kLiveSstFilesSize, &v)) u.bytes += v;
    if (db_->GetIntProperty(cf, rocksdb::DB::Properties::kCurSizeAllMemTables, &v)) u.bytes += v;
    return u;
  }

  MemoryUsage memory() override {
    std::shared_lock lock(reopen_mu_);
    MemoryUsage m;
    if (spec_.options.write_buffer_manager) m.write_buffer_limit = spec_.options.write_buffer_manager->buffer_size();
    if (spec_.block_cache) {
      m.cache_capacity = spec_.block_cache->GetCapacity();
      m.cache_usage = spec_.block_cache->GetUsage();
      m.cache_pinned = spec_.block_cache->GetPinnedUsage();
    }
    if (db_ == nullptr) return m;
    for (auto* h : all_handles_) {
      std::uint64_t v = 0;
      if (db_->GetIntProperty(h, rocksdb::DB::Properties::kCurSizeAllMemTables, &v)) m.memtables += v;
      if (db_->GetIntProperty(h, rocksdb::DB::Properties::kEstimateTableReadersMem, &v)) m.table_readers += v;
    }
    return m;
  }

 private:
  rocksdb::ColumnFamilyHandle* handle(Family f) const {
    if (f >= families_.size()) throw std::out_of_range("rocksdb in " + dir_ + ": no family " + std::to_string(f));
    return families_[f];
  }

  rocksdb::Status add_erase_range(rocksdb::WriteBatch& wb, rocksdb::ColumnFamilyHandle* cf,
                                  const std::string& begin, const std::string& end) {
    if (!end.empty()) {
      if (end <= begin) return rocksdb::Status::OK();  // empty range
      return wb.DeleteRange(cf, slice(begin), slice(end));
    }
    // "To the end": DeleteRange needs an end key, so bound the range by the last
    // key there is now (erased with its own point delete). Rare: callers name ends.
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf));
    it->SeekToLast();
    if (!it->status().ok()) return it->status();
    if (!it->Valid() || it->key().compare(slice(begin)) < 0) return rocksdb::Status::OK();
    std::string last = it->key().ToString();
    if (last > begin) {
      auto s = wb.DeleteRange(cf, slice(begin), slice(last));
      if (!s.ok()) return s;
    }
    return wb.Delete(cf, slice(last));
  }

  void require_open() const {
    if (db_ == nullptr) throw std::runtime_error("rocksdb in " + dir_ + ": closed after a failed reopen");
  }

  /// Free space that recover() waits for: two of the largest memtable.
  static std::uint64_t room_to_write(const OpenSpec& spec) {
    std::uint64_t largest = 0;
    for (const auto& d : spec.descriptors) largest = std::max<std::uint64_t>(largest, d.options.write_buffer_size);
    return 2 * largest;
  }

  /// Bytes an unprivileged writer may still use on the directory's filesystem;
  /// nullopt when statvfs fails (then recover() goes on and RocksDB decides).
  std::optional<std::uint64_t> free_bytes() const {
    struct statvfs st {};
    if (::statvfs(dir_.c_str(), &st) != 0) return std::nullopt;
    return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  }

  /// Whether a new file can be created (and written) in the directory now.
  bool writable() const {
    const std::string probe = dir_ + "/.nfsgw-write-probe";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const bool ok = ::write(fd, "x", 1) == 1;
    ::close(fd);
    std::remove(probe.c_str());
    return ok;
  }

  /// With reopen_mu_ held exclusively (or from the destructor).
  void close() {
    if (db_ == nullptr) return;
    for (auto* h : all_handles_) (void)db_->DestroyColumnFamilyHandle(h);
    // Close() reports errors that the destructor would swallow; nothing can be
    // done about them here: the WAL holds every write already.
    (void)db_->Close();
    delete db_;
    db_ = nullptr;
    all_handles_.clear();
    families_.clear();
  }

  rocksdb::DB* db_;
  std::vector<rocksdb::ColumnFamilyHandle*> all_handles_;  // every family in the database
  std::vector<rocksdb::ColumnFamilyHandle*> families_;     // [0] default, [i+1] names[i]
  const std::vector<std::string> names_;
  const std::string dir_;
  const std::uint64_t min_free_bytes_;
  const OpenSpec spec_;
  /// Shared by every call, exclusive for a reopen (which replaces db_ and the handles).
  mutable std::shared_mutex reopen_mu_;
};

/// The best codec of `wanted` (in order) that this librocksdb build supports.
rocksdb::CompressionType pick(std::initializer_list<rocksdb::CompressionType> wanted) {
  static const auto supported = rocksdb::GetSupportedCompressions();
  for (auto c : wanted)
    if (std::find(supported.begin(), supported.end(), c) != supported.end()) return c;
  return rocksdb::kNoCompression;
}

rocksdb::ColumnFamilyOptions family_options(const std::shared_ptr<rocksdb::Cache>& cache, const RocksDbMemory& memory) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = true;
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  // When the database outgrows the block cache, whole index and filter blocks
  // re-read (and checksummed) per get made a cached GETATTR cost ~2 ms of CPU
  // (1M entries, memory_mb = 64). Partitioned, they are read a small piece at a
  // time; the top levels stay pinned, and index/filter blocks go to the cache's
  // high-priority pool so that data blocks do not push them out.
  table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.partition_filters = true;
  table.pin_top_level_index_and_filter = true;
  table.cache_index_and_filter_blocks_with_high_priority = true;

  rocksdb::ColumnFamilyOptions cf;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // Two memtables of a family fit the memtables' share (the WriteBufferManager
  // flushes the largest beyond it, across families).
  cf.write_buffer_size = std::clamp<std::size_t>(memory.write_buffer_bytes / 2, 1u << 20, 64u << 20);
  cf.max_write_buffer_number = 2;
  cf.level_compaction_dynamic_level_bytes = true;
  const auto upper = pick({rocksdb::kLZ4Compression, rocksdb::kSnappyCompression});
  cf.compression_per_level.assign(static_cast<std::size_t>(cf.num_levels), upper);
  cf.compression_per_level[0] = rocksdb::kNoCompression;
  cf.compression = upper;
  // LZ4 at the bottom too: ZSTD's decompression dominated the CPU of reads from
  // disk in the larger-than-memory benchmark; a metadata cache reads far more
  // than it writes.
  cf.bottommost_compression = pick({rocksdb::kLZ4Compression, rocksdb::kSnappyCompression});
  // A file with 1/4 of deletions in any window of 32k entries is compacted soon.
  cf.table_properties_collector_factories.push_back(
      rocksdb::NewCompactOnDeletionCollectorFactory(32 * 1024, 8 * 1024));
  return cf;
}

}  // namespace

std::unique_ptr<KvStore> open_rocksdb_store(const std::string& dir, unsigned block_cache_mb,
                                            const std::vector<std::string>& families) {
  const std::size_t cache_bytes = static_cast<std::size_t>(std::max(block_cache_mb, 1u)) << 20;
  return open_rocksdb_store(dir, RocksDbMemory{cache_bytes, cache_bytes / 4}, families);
}

std::unique_ptr<KvStore> open_rocksdb_store(const std::string& dir, RocksDbMemory memory,
                                            const std::vector<std::string>& families) {
  for (const auto& n : families) {
    if (n.empty() || n == rocksdb::kDefaultColumnFamilyName ||
        std::count(families.begin(), families.end(), n) != 1)
      throw std::runtime_error("rocksdb in " + dir + ": bad or duplicate family name '" + n + "'");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create cache directory " + dir + ": " + ec.message());

  memory.block_cache_bytes = std::max<std::size_t>(memory.block_cache_bytes, 1u << 20);
  memory.write_buffer_bytes = std::clamp<std::size_t>(memory.write_buffer_bytes, 1u << 20, memory.block_cache_bytes);
  // Half of the cache is the high-priority pool that index and filter blocks use.
  auto block_cache = rocksdb::NewLRUCache(memory.block_cache_bytes, -1, false, 0.5);

  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  // The memtables are charged to the block cache: what they hold pushes blocks out,
  // so the database stays within the cache's size however many families write.
  // Beyond their share the largest is flushed. No stall (allow_stall): a stalled
  // writer only moves the same bytes into the metadata store's queue of pending
  // writes (measured: the 1M-entry run's peak went from 121 to 138 MiB with it).
  options.write_buffer_manager =
      std::make_shared<rocksdb::WriteBufferManager>(memory.write_buffer_bytes, block_cache, false);
  options.max_background_jobs = 2;
  options.max_subcompactions = 1;
  options.keep_log_file_num = 4;
  // RocksDB's LOG through a logger that survives a full disk (rocksdb_log.h).
  options.info_log = make_tolerant_rocksdb_logger(dir + "/LOG");
  options.max_manifest_file_size = 64u << 20;
  // Several families share the WAL: flush the ones holding old logs once the WAL
  // grows, so a rarely written family (the handle map) does not pin them.
  options.max_total_wal_size = 64u << 20;
  options.bytes_per_sync = 1u << 20;

  // Every family the database has, plus the requested ones it lacks.
  std::vector<std::string> existing;
  if (std::filesystem::exists(std::filesystem::path(dir) / "CURRENT")) {
    auto s = rocksdb::DB::ListColumnFamilies(options, dir, &existing);
    if (!s.ok()) throw_status("list column families", dir, s);
  }
  if (std::find(existing.begin(), existing.end(), rocksdb::kDefaultColumnFamilyName) == existing.end())
    existing.insert(existing.begin(), rocksdb::kDefaultColumnFamilyName);
  for (const auto& n : families)
    if (std::find(existing.begin(), existing.end(), n) == existing.end()) existing.push_back(n);

  const auto cf_options = family_options(block_cache, memory);
  OpenSpec spec;
  spec.options = options;
  for (const auto& n : existing) spec.descriptors.emplace_back(n, cf_options);
  spec.families = families;
  spec.dir = dir;
  spec.block_cache = block_cache;
  OpenDb db = open_db(spec);
  return std::make_unique<RocksDbStore>(std::move(db), std::move(spec));
}

namespace {

OpenDb open_db(const OpenSpec& spec) {
  OpenDb out;
  auto s = rocksdb::DB::Open(spec.options, spec.dir, spec.descriptors, &out.all_handles, &out.db);
  if (!s.ok()) throw_status("open", spec.dir, s);
  auto index_of = [&](const std::string& n) {
    for (std::size_t i = 0; i < spec.descriptors.size(); ++i)
      if (spec.descriptors[i].name == n) return i;
    return spec.descriptors.size();
  };
  out.families.push_back(out.all_handles[index_of(rocksdb::kDefaultColumnFamilyName)]);
  for (const auto& n : spec.families) out.families.push_back(out.all_handles[index_of(n)]);
  return out;
}

}  // namespace

}  // namespace nfsgw::cache
