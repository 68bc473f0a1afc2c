// A BlockStore that passes every call to a real one (the memory store) and can be
// told to throw BlockStoreError, as a failing disk would, from reads, from writes
// (write, apply_write, restamp) or from drops; it counts apply_write() calls.
#pragma once

#include <atomic>
#include <cerrno>
#include <memory>

#include "cache/block_store.h"

namespace nfsgw::datacache::test {

class FlakyStore final : public cache::BlockStore {
 public:
  explicit FlakyStore(std::unique_ptr<cache::BlockStore> inner) : inner_(std::move(inner)) {}

  std::atomic<bool> fail_reads{false}, fail_writes{false}, fail_drops{false};
  /// apply_write() calls so far (each one a hop to the disk pool).
  std::atomic<int> apply_writes{0};

  std::uint32_t block_bytes() const override { return inner_->block_bytes(); }
  std::optional<std::string> read(const cache::ObjectKey& f, const cache::Stamp& s, std::uint64_t i) override {
    check(fail_reads);
    return inner_->read(f, s, i);
  }
  using BlockStore::read_now;
  Now read_now(const cache::ObjectKey& f, const cache::Stamp& s, std::uint64_t i, Part part,
               cache::AnswerBasis& basis) override {
    if (fail_reads) return Now::WouldWait;  // the failing disk shows in read()
    return inner_->read_now(f, s, i, part, basis);
  }
  bool no_blocks_now(const cache::ObjectKey& f) override { return inner_->no_blocks_now(f); }
  bool contains(const cache::ObjectKey& f, const cache::Stamp& s, std::uint64_t i) override {
    check(fail_reads);
    return inner_->contains(f, s, i);
  }
  void write(const cache::ObjectKey& f, const cache::Stamp& s, std::uint64_t i, std::string_view d) override {
    check(fail_writes);
    inner_->write(f, s, i, d);
  }
  bool restamp(const cache::ObjectKey& f, const cache::Stamp& b, const cache::Stamp& a) override {
    check(fail_writes);
    return inner_->restamp(f, b, a);
  }
  bool apply_write(const cache::ObjectKey& f, const cache::Stamp& b, const cache::Stamp& a, std::uint64_t off,
                   std::string_view d) override {
    ++apply_writes;
    check(fail_writes);
    return inner_->apply_write(f, b, a, off, d);
  }
  void drop_file(const cache::ObjectKey& f) override {
    check(fail_drops);
    inner_->drop_file(f);
  }
  void drop_export(std::uint32_t e) override {
    check(fail_drops);
    inner_->drop_export(e);
  }
  void evict() override { inner_->evict(); }
  cache::BlockUsage usage() const override { return inner_->usage(); }

 private:
  static void check(const std::atomic<bool>& fail) {
    if (fail) throw cache::BlockStoreError("test: the disk fails", EIO);
  }
  std::unique_ptr<cache::BlockStore> inner_;
};

}  // namespace nfsgw::datacache::test
