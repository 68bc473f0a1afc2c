// blockstore-bench: measures the two candidate backends of the data block store.
//
//   files: one sparse file per origin file (pwrite/pread at index * block size),
//          a CRC32C per block, and a small index (block -> length, CRC) in a
//          RocksDB column family opened through cache::KvStore.
//   blob:  a RocksDB column family with blob files (values of every size go to
//          blob files; RocksDB checks its own checksums on read).
//
// For each candidate and repetition: write every block of every file, read them
// back in order and in a random order (warm: page cache as left by the writes;
// cold: after sync and POSIX_FADV_DONTNEED on every file of the directory), drop
// one file, and reopen. Prints the median of the repetitions.
//
//   blockstore-bench [--dir D] [--mib N] [--files F] [--block-kb K] [--reps R]
//                    [--only files|blob]
#include <fcntl.h>
#include <sys/stat.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/crc32c.h"
#include "cache/kv_store.h"

namespace fs = std::filesystem;
using nfsgw::cache::crc32c;

namespace {

struct Args {
  std::string dir = "/tmp/blockstore-bench";
  std::uint64_t mib = 512;
  unsigned files = 16;
  unsigned block_kb = 1024;
  unsigned reps = 3;
  std::string only;
};

std::string block_key(unsigned file, std::uint64_t index) {
  char k[16];
  std::snprintf(k, sizeof k, "%04x", file);
  std::string s(k, 4);
  for (int i = 7; i >= 0; --i) s.push_back(static_cast<char>(index >> (8 * i)));
  return s;
}

class Candidate {
 public:
  virtual ~Candidate() = default;
  virtual void put(unsigned file, std::uint64_t index, std::string_view data) = 0;
  virtual bool get(unsigned file, std::uint64_t index, std::string& out) = 0;
  virtual void drop(unsigned file) = 0;
  /// Whatever must reach the files before a cold read can read from them.
  virtual void flush() {}
};

// ---- files -----------------------------------------------------------------

class FilesCandidate final : public Candidate {
 public:
  FilesCandidate(const std::string& dir, std::uint32_t block)
      : dir_(dir), block_(block) {
    fs::create_directories(dir + "/data");
    kv_ = nfsgw::cache::open_rocksdb_store(dir + "/index", 8, {"blocks"});
    fam_ = kv_->family("blocks");
    // What the store does at open: sum the usage from the index.
    std::uint64_t n = 0;
    kv_->scan(fam_, "", "", [&](std::string_view, std::string_view) { return ++n, true; });
    opened_blocks = n;
  }
  void put(unsigned file, std::uint64_t index, std::string_view data) override {
    int fd = ::open(path(file).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("open " + path(file));
    auto n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(index * block_));
    ::close(fd);
    if (n != static_cast<ssize_t>(data.size())) throw std::runtime_error("pwrite");
    std::uint32_t rec[2] = {static_cast<std::uint32_t>(data.size()), crc32c(data)};
    nfsgw::cache::KvStore::Batch b;
    b.put(fam_, block_key(file, index), std::string_view(reinterpret_cast<char*>(rec), sizeof rec));
    kv_->write(b, nfsgw::cache::KvStore::Durability::Unsynced);
  }
  bool get(unsigned file, std::uint64_t index, std::string& out) override {
    std::string v;
    if (kv_->get(fam_, block_key(file, index), v, nfsgw::cache::KvStore::Tier::Any) !=
            nfsgw::cache::KvStore::Found::Yes ||
        v.size() != 8)
      return false;
    std::uint32_t rec[2];
    std::memcpy(rec, v.data(), 8);
    out.resize(rec[0]);
    int fd = ::open(path(file).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    auto n = ::pread(fd, out.data(), rec[0], static_cast<off_t>(index * block_));
    ::close(fd);
    return n == static_cast<ssize_t>(rec[0]) && crc32c(out) == rec[1];
  }
  void drop(unsigned file) override {
    ::unlink(path(file).c_str());
    nfsgw::cache::KvStore::Batch b;
    b.erase_range(fam_, block_key(file, 0), block_key(file + 1, 0));
    kv_->write(b, nfsgw::cache::KvStore::Durability::Unsynced);
  }
  std::uint64_t opened_blocks = 0;

 private:
  std::string path(unsigned file) const { return dir_ + "/data/f" + std::to_string(file); }
  std::string dir_;
  std::uint32_t block_;
  std::unique_ptr<nfsgw::cache::KvStore> kv_;
  nfsgw::cache::KvStore::Family fam_ = 0;
};

// ---- blob --------------------------------------------------------------------

void check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.ToString());
}

class BlobCandidate final : public Candidate {
 public:
  explicit BlobCandidate(const std::string& dir) {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    o.max_background_jobs = 2;
    rocksdb::ColumnFamilyOptions blobs;
    blobs.enable_blob_files = true;
    blobs.min_blob_size = 0;
    blobs.blob_file_size = 256ull << 20;
    blobs.enable_blob_garbage_collection = true;
    blobs.write_buffer_size = 64ull << 20;
    blobs.compression = rocksdb::kNoCompression;
    blobs.blob_compression_type = rocksdb::kNoCompression;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()}, {"blocks", blobs}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    check(rocksdb::DB::Open(rocksdb::DBOptions(o), dir, cfs, &handles, &db), "open");
    db_.reset(db);
    handles_ = handles;
    cf_ = handles[1];
  }
  ~BlobCandidate() override {
    for (auto* h : handles_) (void)db_->DestroyColumnFamilyHandle(h);
    (void)db_->Close();
  }
  void put(unsigned file, std::uint64_t index, std::string_view data) override {
    check(db_->Put(rocksdb::WriteOptions(), cf_, block_key(file, index),
                   rocksdb::Slice(data.data(), data.size())),
          "put");
  }
  bool get(unsigned file, std::uint64_t index, std::string& out) override {
    return db_->Get(rocksdb::ReadOptions(), cf_, block_key(file, index), &out).ok();
  }
  void drop(unsigned file) override {
    check(db_->DeleteRange(rocksdb::WriteOptions(), cf_, block_key(file, 0), block_key(file + 1, 0)),
          "delete range");
  }
  void flush() override { check(db_->Flush(rocksdb::FlushOptions(), cf_), "flush"); }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* cf_ = nullptr;
};

// ---- measurement --------------------------------------------------------------

double seconds_of(const std::function<void()>& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::uint64_t disk_bytes(const std::string& dir) {
  std::uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    struct stat st;
    if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0) total += std::uint64_t(st.st_blocks) * 512;
  }
  return total;
}

void evict_page_cache(const std::string& dir) {
  ::sync();
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

using Result = std::map<std::string, double>;

Result run_once(const Args& a, const std::string& kind, unsigned rep) {
  const std::string dir = a.dir + "/" + kind + "-" + std::to_string(rep);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::uint32_t block = a.block_kb * 1024u;
  const std::uint64_t per_file = std::max<std::uint64_t>(1, (a.mib << 20) / block / a.files);
  const double mib = double(per_file * a.files * block) / (1 << 20);
  auto open = [&]() -> std::unique_ptr<Candidate> {
    if (kind == "files") return std::make_unique<FilesCandidate>(dir, block);
    return std::make_unique<BlobCandidate>(dir);
  };

  std::string data(block, '\0');
  std::mt19937_64 rng(42 + rep);
  for (std::size_t i = 0; i + 8 <= data.size(); i += 8) {
    std::uint64_t v = rng();
    std::memcpy(&data[i], &v, 8);
  }
  std::vector<std::pair<unsigned, std::uint64_t>> order;
  for (unsigned f = 0; f < a.files; ++f)
    for (std::uint64_t i = 0; i < per_file; ++i) order.emplace_back(f, i);
  auto shuffled = order;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);

  Result r;
  auto store = open();
  r["write MiB/s"] = mib / seconds_of([&] {
    for (auto [f, i] : order) {
      std::memcpy(data.data(), &i, sizeof i);  // every block differs
      std::memcpy(data.data() + 8, &f, sizeof f);
      store->put(f, i, data);
    }
    store->flush();
  });
  std::string out;
  std::uint64_t bad = 0;
  auto read_all = [&](const std::vector<std::pair<unsigned, std::uint64_t>>& which) {
    for (auto [f, i] : which) {
      if (!store->get(f, i, out) || out.size() != block ||
          std::memcmp(out.data(), &i, sizeof i) != 0)
        ++bad;
    }
  };
  r["seq read warm MiB/s"] = mib / seconds_of([&] { read_all(order); });
  r["random read warm MiB/s"] = mib / seconds_of([&] { read_all(shuffled); });
  evict_page_cache(dir);
  r["seq read cold MiB/s"] = mib / seconds_of([&] { read_all(order); });
  evict_page_cache(dir);
  r["random read cold MiB/s"] = mib / seconds_of([&] { read_all(shuffled); });
  if (bad != 0) throw std::runtime_error(kind + ": " + std::to_string(bad) + " blocks read wrong");

  const double before = double(disk_bytes(dir));
  r["drop one file ms"] = 1000 * seconds_of([&] { store->drop(0); store->flush(); });
  r["MiB freed by the drop"] = (before - double(disk_bytes(dir))) / (1 << 20);
  r["close ms"] = 1000 * seconds_of([&] { store.reset(); });
  r["reopen ms"] = 1000 * seconds_of([&] { store = open(); });
  if (!store->get(1, per_file - 1, out) || store->get(0, 0, out))
    throw std::runtime_error(kind + ": wrong blocks after reopen");
  store.reset();
  fs::remove_all(dir);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(k + " needs a value");
      return argv[++i];
    };
    if (k == "--dir") a.dir = next();
    else if (k == "--mib") a.mib = std::stoull(next());
    else if (k == "--files") a.files = unsigned(std::stoul(next()));
    else if (k == "--block-kb") a.block_kb = unsigned(std::stoul(next()));
    else if (k == "--reps") a.reps = unsigned(std::stoul(next()));
    else if (k == "--only") a.only = next();
    else {
      std::fprintf(stderr,
                   "usage: blockstore-bench [--dir D] [--mib N] [--files F] [--block-kb K] "
                   "[--reps R] [--only files|blob]\n");
      return 2;
    }
  }
  if (a.files == 0 || a.reps == 0 || a.block_kb == 0) {
    std::fprintf(stderr, "--files, --reps and --block-kb must be positive\n");
    return 2;
  }
  std::printf("%llu MiB over %u files, %u KiB blocks, median of %u repetitions, dir %s\n",
              static_cast<unsigned long long>(a.mib), a.files, a.block_kb, a.reps, a.dir.c_str());
  for (std::string kind : {"files", "blob"}) {
    if (!a.only.empty() && a.only != kind) continue;
    std::map<std::string, std::vector<double>> all;
    for (unsigned rep = 0; rep < a.reps; ++rep)
      for (auto& [k, v] : run_once(a, kind, rep)) all[k].push_back(v);
    std::printf("\n%s\n", kind.c_str());
    for (auto& [k, v] : all) {
      std::sort(v.begin(), v.end());
      std::printf("  %-24s %10.1f   (min %.1f, max %.1f)\n", k.c_str(), v[v.size() / 2], v.front(),
                  v.back());
    }
  }
  return 0;
}
