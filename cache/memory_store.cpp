// An in-memory KvStore: for unit tests, and for caches that are switched off or
// must not outlive the process. Thread-safe like the RocksDB store, so code tested
// against it behaves the same under concurrency.
#include <map>
#include <mutex>
#include <string>

#include "cache/kv_store.h"

namespace nfsgw::cache {
namespace {

class MemoryStore final : public KvStore {
 public:
  std::optional<std::string> get(std::string_view key) override {
    std::lock_guard lock(mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    return it->second;
  }
  void put(std::string_view key, std::string_view value) override {
    std::lock_guard lock(mu_);
    data_.insert_or_assign(std::string(key), std::string(value));
  }
  void erase(std::string_view key) override {
    std::lock_guard lock(mu_);
    auto it = data_.find(key);
    if (it != data_.end()) data_.erase(it);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string, std::less<>> data_;
};

}  // namespace

std::unique_ptr<KvStore> make_memory_store() { return std::make_unique<MemoryStore>(); }

}  // namespace nfsgw::cache
