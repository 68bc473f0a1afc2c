// The keys of [cache]. The stores are opened once at start with these, so every
// one needs a restart.
#include "config/key_kinds.h"

namespace nfsgw::config {
namespace {

using CacheKinds = Kinds<CacheConfig>;

void check_dir(const Input& in, const std::string& s) {
  if (s.empty()) in.fail("the empty string is not a directory; allowed: a path");
}

void check_secret_file(const Input& in, const std::string& s) {
  if (s.empty()) {
    in.fail("the empty string is not a file; allowed: a path (or leave the key out for <cache.dir>/secret)");
  }
}

void check_power_of_two(const Input& in, std::int64_t i) {
  if ((i & (i - 1)) != 0) in.fail(std::to_string(i) + " is not a power of two; allowed: 64, 128, 256, ..., 16384");
}

/// The secret's default place follows `dir`, whichever order the keys come in.
void default_secret_file(const Input&, CacheConfig& c) {
  if (c.secret_file.empty()) c.secret_file = c.dir + (c.dir.back() == '/' ? "" : "/") + "secret";
}

}  // namespace

const SectionKeys<CacheConfig>& cache_keys() {
  // Upper bounds: beyond 1 TiB of RAM or 64 TiB of disk it is a unit mistake.
  static const SectionKeys<CacheConfig> keys{
      "cache",
      {
          CacheKinds::text("dir", &CacheConfig::dir, "a non-empty path",
                  "where the persistent state lives (the handle map and metadata database, the data cache "
                  "under `dir`/data, the secret)",
                  check_dir),
          CacheKinds::integer("memory_mb", &CacheConfig::memory_mb, 16, 1 << 20,
                     "RAM in MiB for everything nfsgw keeps and the data it has in flight, shared by every export and "
                     "split at start (`cache/memory_budget.h`): the per-thread memos (up to 1/8), the duplicate request "
                     "cache (up to 1/64), the data cache's in-memory blocks (1/16) and its index (1/32), READ data in "
                     "flight (1/16 for replies, 1/16 for blocks: READs wait for room, read-ahead is skipped), the "
                     "metadata writes not yet on disk (1/32: writers wait), then half of the rest each for the metadata "
                     "cache's memory layer and RocksDB's block cache (which holds the memtables). Peak RSS is `memory_mb` "
                     "plus a fixed overhead of at most 48 MiB (code, stacks, malloc's slack, RocksDB's flushes, calls "
                     "outside the caches; docs/operations.md, *Memory*)"),
          CacheKinds::integer("metadata_max_gb", &CacheConfig::metadata_max_gb, 1, 65536,
                     "disk budget of the metadata cache (the RocksDB database under `dir`), in GiB, shared by "
                     "every export"),
          CacheKinds::integer("block_kb", &CacheConfig::block_kb, 64, 16384,
                     "size of a block of the data cache, in KiB: the unit in which file data is fetched from the "
                     "origin, stored and checked. Changing it drops the blocks already stored, at the next start",
                     check_power_of_two)
              .also_allowed(", a power of two"),
          CacheKinds::integer("data_max_gb", &CacheConfig::data_max_gb, 1, 65536,
                     "disk budget of the data cache (block files under `dir`/data), in GiB, shared by every "
                     "export; apart from `metadata_max_gb`: file data never evicts metadata"),
          CacheKinds::integer("dirty_max_gb", &CacheConfig::dirty_max_gb, 1, 65536,
                     "disk bound of the dirty log (`dir`/dirty): the writes that `writes = \"back\"` exports "
                     "acknowledged and have not flushed to the origin yet, in GiB, shared by every export and "
                     "apart from `data_max_gb` (eviction never touches dirty data). When it is full, the flush "
                     "starts at once and new writes wait up to 10 s for room, then are answered "
                     "`NFS3ERR_JUKEBOX` (the client retries); docs/operations.md, *Write-back*"),
          CacheKinds::text("secret_file", &CacheConfig::secret_file, "a non-empty path",
                  "the key for file handle MACs; see *Handle stability* below", check_secret_file)
              .defaults_to("`<dir>/secret`"),
          CacheKinds::boolean("answer_memo", &CacheConfig::answer_memo,
                     "answer a repeated GETATTR, LOOKUP or ACCESS that the cache answers at once from a "
                     "per-thread memo of whole answers while nothing they rest on changed "
                     "(`gateway/rpc/answer_memo.h`); `false` makes every answer walk the layers (for "
                     "measurements)"),
          CacheKinds::boolean("peek_memo", &CacheConfig::peek_memo,
                     "serve the metadata cache's hot records (attributes, lookups, ACCESS answers) from a "
                     "per-thread copy while their part of the cache is unchanged (`cache/peek_memo.h`); `false` "
                     "reads every record through the shared memory layer (for measurements)"),
      },
      default_secret_file,
  };
  return keys;
}

}  // namespace nfsgw::config
