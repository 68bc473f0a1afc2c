// The disk block store against damage, budgets, restarts, threads and failing
// disks; and its checksum.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "block_store_helpers.h"
#include "cache/block_store.h"
#include "cache/crc32c.h"
#include "cache/metadata_store.h"
#include "controlled_store.h"
#include "temp_dir.h"

namespace nfsgw::cache {
namespace {

namespace fs = std::filesystem;
using testing::data_file;
using testing::data_stamp;
using testing::pattern;

using testing::kBlock;

/// The data files under `dir` (one per stored origin file).
std::vector<fs::path> data_files(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir + "/blocks"))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

class DiskBlockStoreTest : public ::testing::Test {
 protected:
  void open(std::uint64_t budget = 1 << 20) {
    store.reset();
    BlockStoreOptions o;
    o.block_bytes = kBlock;
    o.disk_bytes = budget;
    o.clock = &clock;
    o.touch_interval_ms = 1000;
    store = open_file_block_store(dir.path(), o);
  }
  /// The one data file, in tests that store a single origin file.
  fs::path the_data_file() const {
    const auto files = data_files(dir.path());
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? fs::path(dir / "none") : files[0];
  }

  testing::TempDir dir;
  ManualClock clock;
  std::unique_ptr<BlockStore> store;
};

TEST_F(DiskBlockStoreTest, AFlippedByteIsAMissCountedAndDropped) {
  open();
  const auto f = data_file(1, 1);
  const auto st = data_stamp(2 * kBlock);
  store->write(f, st, 0, pattern(kBlock, 1));
  store->write(f, st, 1, pattern(kBlock, 2));
  ASSERT_TRUE(store->read(f, st, 1));  // positive control
  testing::flip_byte(the_data_file(), kBlock + 123);
  // The file's descriptor is open (read() above): read_now() checks too, and
  // leaves the bad block to read(), which drops and counts it.
  std::string out(kBlock, '\0');
  EXPECT_EQ(store->read_now(f, st, 1, out), BlockStore::Now::WouldWait);
  EXPECT_EQ(store->read_now(f, st, 0, out), BlockStore::Now::Hit) << "positive control";
  EXPECT_EQ(out, pattern(kBlock, 1));
  EXPECT_FALSE(store->read(f, st, 1));
  auto u = store->usage();
  EXPECT_EQ(u.corrupt_dropped, 1u);
  EXPECT_EQ(u.blocks, 1u);
  EXPECT_EQ(u.bytes, kBlock);
  EXPECT_FALSE(store->read(f, st, 1));  // dropped: now a plain miss
  EXPECT_EQ(store->usage().corrupt_dropped, 1u);
  EXPECT_EQ(store->read(f, st, 0), pattern(kBlock, 1));
  // Fetched again, it is served again.
  store->write(f, st, 1, pattern(kBlock, 2));
  EXPECT_EQ(store->read(f, st, 1), pattern(kBlock, 2));
}

TEST_F(DiskBlockStoreTest, ATruncatedDataFileIsAMiss) {
  open();
  const auto f = data_file(1, 1);
  const auto st = data_stamp(2 * kBlock);
  store->write(f, st, 0, pattern(kBlock, 1));
  store->write(f, st, 1, pattern(kBlock, 2));
  const auto file = the_data_file();
  fs::resize_file(file, kBlock + 10);
  EXPECT_EQ(store->read(f, st, 0), pattern(kBlock, 1));
  EXPECT_FALSE(store->read(f, st, 1));
  EXPECT_EQ(store->usage().corrupt_dropped, 1u);
}

TEST_F(DiskBlockStoreTest, AnIndexRecordWithoutItsDataIsAMiss) {
  open();
  const auto f = data_file(1, 1);
  const auto st = data_stamp(kBlock);
  store->write(f, st, 0, pattern(kBlock, 1));
  // The bytes never reached the disk (a power cut after the index record): a
  // hole of zeros, then no file at all.
  const auto file = the_data_file();
  fs::resize_file(file, 0);
  fs::resize_file(file, kBlock);
  EXPECT_FALSE(store->read(f, st, 0));
  store->write(f, st, 0, pattern(kBlock, 1));
  ASSERT_TRUE(store->read(f, st, 0));
  fs::remove(file);
  // After a restart (a running store still holds the file open, and reads the
  // intact bytes it names).
  open();
  EXPECT_FALSE(store->read(f, st, 0));
  EXPECT_EQ(store->usage().corrupt_dropped, 1u) << "counted since the restart";
  EXPECT_EQ(store->usage().blocks, 0u);
}

TEST_F(DiskBlockStoreTest, AnOldBlockUnderANewRecordIsAMiss) {
  open();
  const auto f = data_file(1, 1);
  const auto st = data_stamp(kBlock);
  store->write(f, st, 0, pattern(kBlock, 1));
  const auto file = the_data_file();
  std::string old_bytes(kBlock, '\0');
  std::ifstream(file, std::ios::binary).read(old_bytes.data(), kBlock);
  store->write(f, st, 0, pattern(kBlock, 2));
  // The new bytes were lost but the new record was kept.
  std::ofstream(file, std::ios::binary | std::ios::in | std::ios::out).write(old_bytes.data(), kBlock);
  EXPECT_FALSE(store->read(f, st, 0));
  EXPECT_EQ(store->usage().corrupt_dropped, 1u);
}

TEST_F(DiskBlockStoreTest, DataFilesNoRecordNamesAreRemovedAtOpen) {
  open();
  store->write(data_file(1, 1), data_stamp(kBlock), 0, pattern(kBlock, 1));
  store.reset();
  fs::create_directories(dir / "blocks/7f");
  std::ofstream(dir / "blocks/7f/000000000000097f") << "left by a crash";
  std::ofstream(dir / "blocks/7f/notours") << "?";
  open();
  EXPECT_FALSE(fs::exists(dir / "blocks/7f/000000000000097f"));
  EXPECT_FALSE(fs::exists(dir / "blocks/7f/notours"));
  EXPECT_EQ(data_files(dir.path()).size(), 1u);
  EXPECT_EQ(store->read(data_file(1, 1), data_stamp(kBlock), 0), pattern(kBlock, 1));
}

TEST_F(DiskBlockStoreTest, EvictionDropsTheLeastRecentlyUsedFilesAcrossAReopen) {
  // 10 blocks of budget; brought down to 9 when over.
  open(10 * kBlock);
  const auto st = data_stamp(3 * kBlock);
  const auto a = data_file(1, 1), b = data_file(1, 2), c = data_file(1, 3), d = data_file(1, 4);
  for (const auto& f : {a, b, c}) {
    for (std::uint32_t i = 0; i < 3; ++i) store->write(f, st, i, pattern(kBlock, i));
    clock.advance(2000);
  }
  ASSERT_TRUE(store->read(a, st, 0));  // a is now the most recently used
  clock.advance(2000);
  open(10 * kBlock);
  EXPECT_EQ(store->usage().blocks, 9u);
  EXPECT_EQ(store->usage().evicted_files, 0u);
  store->write(d, st, 0, pattern(kBlock, 0));  // 10 blocks: at the budget, not over
  EXPECT_EQ(store->usage().evicted_files, 0u);
  store->write(d, st, 1, pattern(kBlock, 1));  // 11: over, b goes (8 left)
  auto u = store->usage();
  EXPECT_EQ(u.evicted_files, 1u);
  EXPECT_EQ(u.evicted_blocks, 3u);
  EXPECT_EQ(u.evicted_bytes, 3u * kBlock);
  EXPECT_EQ(u.blocks, 8u);
  EXPECT_FALSE(store->read(b, st, 0));
  EXPECT_TRUE(store->read(a, st, 2));
  EXPECT_TRUE(store->read(c, st, 2));
  EXPECT_TRUE(store->read(d, st, 1));
  EXPECT_EQ(data_files(dir.path()).size(), 3u);
}

TEST_F(DiskBlockStoreTest, UseWithinTheTouchIntervalDoesNotReorder) {
  open(10 * kBlock);
  const auto st = data_stamp(3 * kBlock);
  const auto a = data_file(1, 1), b = data_file(1, 2), c = data_file(1, 3);
  for (const auto& f : {a, b, c}) {
    for (std::uint32_t i = 0; i < 3; ++i) store->write(f, st, i, pattern(kBlock, i));
    clock.advance(300);
  }
  ASSERT_TRUE(store->read(a, st, 0));  // 900 ms after a's write: not refreshed
  store->write(data_file(1, 4), st, 0, pattern(kBlock, 0));
  store->write(data_file(1, 4), st, 1, pattern(kBlock, 1));
  EXPECT_FALSE(store->read(a, st, 0));
  EXPECT_TRUE(store->read(b, st, 0));
}

TEST_F(DiskBlockStoreTest, EvictionNeverTouchesTheMetadataInTheSameDatabase) {
  std::vector<std::string> families = metadata_families();
  families.insert(families.end(), block_families().begin(), block_families().end());
  auto kv = open_rocksdb_store(dir / "db", 8, families);
  kv->put("handle-map-key", "synced");
  const auto attrs = kv->family(metadata_families()[0]);
  KvStore::Batch meta;
  meta.put(attrs, "attr-key", "record");
  kv->write(meta, KvStore::Durability::Unsynced);

  BlockStoreOptions o;
  o.block_bytes = kBlock;
  o.disk_bytes = 4 * kBlock;
  o.clock = &clock;
  auto shared = open_file_block_store(dir / "data", *kv, o);
  for (std::uint8_t n = 0; n < 8; ++n) {
    shared->write(data_file(1, n), data_stamp(2 * kBlock), 0, pattern(kBlock, n));
    shared->write(data_file(1, n), data_stamp(2 * kBlock), 1, pattern(kBlock, n));
    clock.advance(120'000);
  }
  EXPECT_GT(shared->usage().evicted_files, 0u);  // positive control
  EXPECT_LE(shared->usage().bytes, 4u * kBlock);
  shared->drop_export(1);
  EXPECT_EQ(shared->usage().files, 0u);
  EXPECT_EQ(kv->get("handle-map-key"), "synced");
  std::string v;
  EXPECT_EQ(kv->get(attrs, "attr-key", v, KvStore::Tier::Any), KvStore::Found::Yes);
  EXPECT_EQ(v, "record");
}

TEST_F(DiskBlockStoreTest, ADiskErrorThrowsAndTheStoreStaysUsable) {
  open();
  // The first file's data goes to blocks/01/: make that a file, so creating the
  // data file fails as a full or broken disk would.
  std::ofstream(dir / "blocks/01") << "not a directory";
  const auto f = data_file(1, 1);
  const auto st = data_stamp(kBlock);
  try {
    store->write(f, st, 0, pattern(kBlock, 1));
    FAIL() << "no error";
  } catch (const BlockStoreError& e) {
    EXPECT_NE(e.code(), 0);
    EXPECT_NE(std::string(e.what()).find("blocks/01"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(store->read(f, st, 0));
  EXPECT_EQ(store->usage().files, 0u);
  store->write(f, st, 0, pattern(kBlock, 1));  // the next file id works
  EXPECT_EQ(store->read(f, st, 0), pattern(kBlock, 1));
}

// A read-only (or failing) disk under the index: RocksDB refuses every write after
// one failed until it is resumed. Once the disk works, the store resumes it.
TEST_F(DiskBlockStoreTest, AnIndexThatRefusesWritesAfterAFailureIsRecoveredOnceTheDiskWorks) {
  testing::ControlledStore kv(make_memory_store(block_families()));
  kv.sticky_write_errors = true;
  BlockStoreOptions o;
  o.block_bytes = kBlock;
  o.clock = &clock;
  auto s = open_file_block_store(dir / "data", kv, o);
  const auto st = data_stamp(kBlock);
  kv.fail_writes = true;
  EXPECT_THROW(s->write(data_file(1, 1), st, 0, pattern(kBlock, 1)), BlockStoreError);
  EXPECT_THROW(s->write(data_file(1, 2), st, 0, pattern(kBlock, 2)), BlockStoreError) << "still failing";
  kv.fail_writes = false;
  ASSERT_NO_THROW(s->write(data_file(1, 3), st, 0, pattern(kBlock, 3)));
  EXPECT_EQ(s->read(data_file(1, 3), st, 0), pattern(kBlock, 3));
  EXPECT_GE(kv.recovers.load(), 1);
  const int recovers = kv.recovers.load();
  ASSERT_NO_THROW(s->write(data_file(1, 4), st, 0, pattern(kBlock, 4)));
  EXPECT_EQ(kv.recovers.load(), recovers) << "no recover() while the index works";
}

TEST_F(DiskBlockStoreTest, ConcurrentReadersAndWritersNeverSeeATornBlock) {
  open(64ull << 20);
  constexpr unsigned kThreads = 4, kOps = 400, kFiles = 3, kBlocks = 4;
  const auto st = data_stamp(kBlocks * kBlock);
  // A block's content says which file, block and version it is.
  auto content = [](unsigned file, unsigned index, unsigned version) {
    std::string s = pattern(kBlock, file * 1000 + index * 10 + version);
    s[0] = static_cast<char>(file);
    s[1] = static_cast<char>(index);
    s[2] = static_cast<char>(version);
    return s;
  };
  std::atomic<unsigned> wrong{0}, hits{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (unsigned op = 0; op < kOps; ++op) {
        const unsigned file = rng() % kFiles, index = rng() % kBlocks, version = rng() % 4;
        const auto key = data_file(1, static_cast<std::uint8_t>(file));
        if (rng() % 2 == 0) {
          store->write(key, st, index, content(file, index, version));
        } else if (auto got = store->read(key, st, index)) {
          ++hits;
          const unsigned v = static_cast<unsigned char>((*got)[2]);
          if (*got != content(file, index, v)) ++wrong;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GT(hits.load(), 0u);  // positive control: the readers did read
  const auto u = store->usage();
  EXPECT_EQ(u.corrupt_dropped, 0u);
  EXPECT_EQ(u.files, kFiles);
  EXPECT_LE(u.blocks, kFiles * kBlocks);
  EXPECT_EQ(u.bytes, u.blocks * kBlock);
  // What is stored after the storm is intact and counted right after a reopen.
  open(64ull << 20);
  EXPECT_EQ(store->usage().blocks, u.blocks);
}

TEST(Crc32c, KnownValuesAndBothPathsAgree) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  // Around the three-stream stripes (3 x 4096 bytes) too, and a whole block.
  for (std::size_t n : {0u, 1u, 7u, 8u, 9u, 63u, 4096u, 4099u, 12287u, 12288u, 12289u, 24576u, 40005u, 1u << 20}) {
    const std::string s = pattern(n, static_cast<std::uint32_t>(n));
    EXPECT_EQ(crc32c(0, s.data(), s.size()), crc32c_portable(0, s.data(), s.size())) << n;
    // Continuing over two halves gives the CRC of the whole.
    EXPECT_EQ(crc32c(crc32c(0, s.data(), n / 2), s.data() + n / 2, n - n / 2), crc32c(s)) << n;
    EXPECT_EQ(crc32c(0x12345678u, s.data(), n), crc32c_portable(0x12345678u, s.data(), n)) << n;
  }
  // One flipped bit in any stripe changes it.
  std::string big = pattern(3 * 12288, 7);
  const std::uint32_t whole = crc32c(big);
  for (std::size_t at : {0u, 4095u, 4096u, 8200u, 12287u, 20000u}) {
    big[at] ^= 1;
    EXPECT_NE(crc32c(big), whole) << at;
    big[at] ^= 1;
  }
  EXPECT_NE(crc32c("123456789"), crc32c("123456780"));
}

}  // namespace
}  // namespace nfsgw::cache
