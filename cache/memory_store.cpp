// An in-memory KvStore: for unit tests, and for caches that are switched off or
// must not outlive the process. One std::map per family behind one mutex, so a
// batch is atomic and code tested against it behaves the same under concurrency.
// The MemoryOnly tier answers like Any (everything is in memory); usage() counts
// key and value bytes exactly.
#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/kv_store.h"

namespace nfsgw::cache {
namespace {

class MemoryStore final : public KvStore {
 public:
  explicit MemoryStore(const std::vector<std::string>& names) : names_(names), data_(names.size() + 1) {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i].empty() || std::count(names_.begin(), names_.end(), names_[i]) != 1)
        throw std::invalid_argument("memory store: bad or duplicate family name '" + names_[i] + "'");
    }
  }

  using KvStore::get;

  Family family(std::string_view name) const override {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return static_cast<Family>(i + 1);
    throw std::out_of_range("memory store: no family '" + std::string(name) + "'");
  }

  Found get(Family f, std::string_view key, std::string& value, Tier) override {
    std::lock_guard lock(mu_);
    const auto& m = map(f);
    auto it = m.find(key);
    if (it == m.end()) return Found::No;
    value = it->second;
    return Found::Yes;
  }

  void write(const Batch& batch, Durability) override {
    std::lock_guard lock(mu_);
    for (const auto& c : batch.changes) map(c.family);  // all families valid before any change
    for (const auto& c : batch.changes) {
      auto& m = map(c.family);
      switch (c.op) {
        case Batch::Op::Put:
          m.insert_or_assign(c.key, c.value);
          break;
        case Batch::Op::Erase:
          if (auto it = m.find(c.key); it != m.end()) m.erase(it);
          break;
        case Batch::Op::EraseRange: {
          if (!c.value.empty() && c.value <= c.key) break;  // empty range
          m.erase(m.lower_bound(c.key), c.value.empty() ? m.end() : m.lower_bound(c.value));
          break;
        }
      }
    }
  }

  void scan(Family f, std::string_view begin, std::string_view end,
            const std::function<bool(std::string_view, std::string_view)>& visit) override {
    // Copies a chunk at a time and visits it without the lock, so that `visit`
    // may use the store (a sweep erasing what it scans).
    constexpr std::size_t kChunk = 256;
    std::string from(begin);
    bool inclusive = true;
    std::vector<std::pair<std::string, std::string>> chunk;
    for (;;) {
      chunk.clear();
      {
        std::lock_guard lock(mu_);
        const auto& m = map(f);
        auto it = inclusive ? m.lower_bound(from) : m.upper_bound(from);
        for (; it != m.end() && chunk.size() < kChunk; ++it) {
          if (!end.empty() && std::string_view(it->first) >= end) break;
          chunk.emplace_back(it->first, it->second);
        }
      }
      for (const auto& [k, v] : chunk)
        if (!visit(k, v)) return;
      if (chunk.size() < kChunk) return;
      from = chunk.back().first;
      inclusive = false;
    }
  }

  FamilyUsage usage(Family f) override {
    std::lock_guard lock(mu_);
    FamilyUsage u;
    for (const auto& [k, v] : map(f)) {
      ++u.keys;
      u.bytes += k.size() + v.size();
    }
    return u;
  }

 private:
  using Map = std::map<std::string, std::string, std::less<>>;
  Map& map(Family f) {
    if (f >= data_.size()) throw std::out_of_range("memory store: no family " + std::to_string(f));
    return data_[f];
  }

  const std::vector<std::string> names_;
  std::mutex mu_;
  std::vector<Map> data_;  // [0] is the default family
};

}  // namespace

std::unique_ptr<KvStore> make_memory_store(const std::vector<std::string>& families) {
  return std::make_unique<MemoryStore>(families);
}

}  // namespace nfsgw::cache
