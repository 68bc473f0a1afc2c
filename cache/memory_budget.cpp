#include "cache/memory_budget.h"

#include <algorithm>

namespace nfsgw::cache {

std::size_t MemoryBudget::memo_bytes(const std::vector<MemoShape>& memos) const {
  std::size_t per_thread = 0;
  for (std::size_t i = 0; i < memos.size() && i < memo_sets.size(); ++i)
    per_thread += memos[i].bytes_per_set * memo_sets[i];
  return per_thread * threads;
}

MemoryBudget split_memory(std::size_t total_bytes, unsigned threads, const std::vector<MemoShape>& memos,
                          double hot_blocks_share) {
  MemoryBudget b;
  b.total = total_bytes;
  b.threads = std::max(threads, 1u);

  // The memos: every one at its full size, then all halved together until every
  // thread's tables fit an eighth of the total (or each is down to 16 sets).
  const std::size_t memo_share = total_bytes / 8;
  b.memo_sets.resize(memos.size());
  for (std::size_t i = 0; i < memos.size(); ++i) b.memo_sets[i] = std::max<std::size_t>(memos[i].max_sets, 1);
  for (;;) {
    if (b.memo_bytes(memos) <= memo_share) break;
    bool shrunk = false;
    for (std::size_t i = 0; i < memos.size(); ++i) {
      const std::size_t floor = std::min<std::size_t>(16, std::max<std::size_t>(memos[i].max_sets, 1));
      if (b.memo_sets[i] / 2 >= floor) {
        b.memo_sets[i] /= 2;
        shrunk = true;
      }
    }
    if (!shrunk) break;
  }
  // At their smallest the memos of very many threads may still not fit their share:
  // they are charged what they take, and the rest shrinks (never below zero).
  b.thread_memos = b.memo_bytes(memos);
  b.memos_fit = b.thread_memos <= total_bytes / 2;

  b.duplicate_entries = std::clamp<std::size_t>(total_bytes / 64 / MemoryBudget::kDuplicateEntryBytes,
                                                MemoryBudget::kMinDuplicateEntries,
                                                MemoryBudget::kMaxDuplicateEntries);
  b.duplicate_cache = b.duplicate_entries * MemoryBudget::kDuplicateEntryBytes;

  hot_blocks_share = std::clamp(hot_blocks_share, 0.0, 0.5);
  b.hot_blocks = static_cast<std::size_t>(static_cast<double>(total_bytes) * hot_blocks_share);

  // Memory that comes and goes with the work, bounded by these shares (each a
  // cache::ByteBudget): READ data in flight, the store's queue of writes.
  b.read_replies = total_bytes / 16;
  b.read_blocks = total_bytes / 16;
  b.pending_writes = total_bytes / 32;
  b.block_index = std::max<std::size_t>(total_bytes / 32, 1u << 20);

  const std::size_t taken =
      b.thread_memos + b.duplicate_cache + b.hot_blocks + b.block_index + b.read_replies + b.read_blocks + b.pending_writes;
  const std::size_t rest = total_bytes > taken ? total_bytes - taken : 0;
  b.block_cache = rest / 2;
  b.memory_layer = rest - b.block_cache;
  b.write_buffers = b.block_cache / 4;
  return b;
}

}  // namespace nfsgw::cache
