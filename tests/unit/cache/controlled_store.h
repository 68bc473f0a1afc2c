// A KvStore wrapper for the metadata store tests: it can hold writes back (a
// closed gate), fail like a dying disk, and pretend its memory tier is cold.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cache/kv_store.h"

namespace nfsgw::cache::testing {

class ControlledStore final : public KvStore {
 public:
  explicit ControlledStore(std::unique_ptr<KvStore> inner) : inner_(std::move(inner)) {}

  /// Writes wait while the gate is closed.
  void close_gate() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void open_gate() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  std::atomic<bool> fail_writes{false}, fail_reads{false};
  /// As RocksDB after a failed WAL or flush write: once a write has failed, every
  /// write fails until recover(), which fails itself while fail_writes is set.
  std::atomic<bool> sticky_write_errors{false};
  /// MemoryOnly reads answer NotInMemory for what the store has.
  std::atomic<bool> cold{false};
  std::atomic<int> writes{0}, memory_gets{0}, disk_gets{0};

  KvStore& inner() { return *inner_; }

  using KvStore::get;
  Family family(std::string_view name) const override { return inner_->family(name); }
  Found get(Family f, std::string_view key, std::string& value, Tier tier) override {
    (tier == Tier::MemoryOnly ? memory_gets : disk_gets)++;
    if (fail_reads) throw std::runtime_error("injected read error: disk gone");
    auto found = inner_->get(f, key, value, tier);
    if (found == Found::Yes && tier == Tier::MemoryOnly && cold) return Found::NotInMemory;
    return found;
  }
  void write(const Batch& batch, Durability durability) override {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return open_; });
    }
    if (fail_writes) {
      if (sticky_write_errors) stuck_ = true;
      throw std::runtime_error("injected write error: disk gone");
    }
    if (stuck_) throw std::runtime_error("injected background error: writes refused until resumed");
    inner_->write(batch, durability);
    {
      std::lock_guard lock(mu_);
      ++writes;
    }
    cv_.notify_all();
  }
  /// Waits until `n` writes have reached the inner store; false after `limit`.
  bool wait_for_writes(int n, std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return writes >= n; });
  }
  void scan(Family f, std::string_view begin, std::string_view end,
            const std::function<bool(std::string_view, std::string_view)>& visit) override {
    if (fail_reads) throw std::runtime_error("injected scan error: disk gone");
    inner_->scan(f, begin, end, visit);
  }
  FamilyUsage usage(Family f) override { return inner_->usage(f); }
  void recover() override {
    ++recovers;
    if (fail_writes) throw std::runtime_error("injected resume error: disk still gone");
    stuck_ = false;
    inner_->recover();
  }
  std::atomic<int> recovers{0};

 private:
  std::unique_ptr<KvStore> inner_;
  std::mutex mu_;
  std::condition_variable cv_;  // the gate opened, a write applied
  bool open_ = true;
  std::atomic<bool> stuck_{false};
};

/// How many keys the family `family` holds on disk.
inline std::uint64_t disk_keys(KvStore& kv, const std::string& family) {
  std::uint64_t n = 0;
  kv.scan(kv.family(family), {}, {}, [&](std::string_view, std::string_view) { return ++n, true; });
  return n;
}

}  // namespace nfsgw::cache::testing
