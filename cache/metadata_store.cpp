// MetadataStore: memory layer (lru_shards.h) + overlay of pending writes + one
// writer thread + a disk read pool (disk_pool.h) + the disk budget sweep
// (disk_budget.h), over the KvStore's metadata families.
//
// Consistency, in short:
// - Every change gets a sequence number from the writer queue, under the queue
//   lock, so the queue (and RocksDB) sees changes in that order.
// - put/update/erase change the memory layer and record the change in the shard's
//   overlay (key -> seq, value or tombstone), all under the shard lock. The writer
//   drops an overlay entry after writing the batch that carries that very seq, so
//   a record evicted from memory before it reached RocksDB is still found.
// - erase_object/erase_export queue a range erase and register a range tombstone
//   (seq) before clearing the memory layer; until the writer has applied it, reads
//   of keys in the range answer "absent" unless the overlay has a newer change.
// - A record with no memory entry and no overlay entry is exactly what RocksDB
//   has. peek reads RocksDB's memory tier under the shard lock, so nothing can
//   change in between; load reads files without the lock and keeps what it read
//   only when no write hit the shard meanwhile (the shard's write counter).
// - Disk order approximates LRU without a write per hit: each stored value carries
//   its last-used second; a record served from memory is marked, and rewritten
//   with the current time when it leaves the memory layer if its stored time is
//   over a minute old. The sweep (writer thread, every 30 s or on request) drops
//   the oldest records until ~25% under the budget; a marked record it meets in
//   memory is rewritten with the current time instead of dropped.
// - A KvStore exception degrades the store: the hook hears of it once, reads stop
//   at memory and overlay, the writer drops what it is given. While degraded the
//   writer tries the disk every disk_retry (recover(), then one batch erasing every
//   metadata family: the disk missed the changes dropped meanwhile, so none of what
//   it holds can be trusted). When that batch is written the store persists again;
//   the batches queued after it are written in order as usual.
// - Preload (options.preload_bytes, once preload_in_background() is called, on its
//   own low-priority thread): note every shard's write counter, flush() (so every
//   change made before is in RocksDB), then one scan of every family picks the
//   records with the newest last-used times whose estimated memory fits the
//   preload budget (a bounded min-heap of keys and values). Then, oldest first so
//   that the newest end up most recently used, each is kept as load() keeps a
//   record: skipped when the memory layer or the overlay knows the key or a range
//   erase covers it; the scan's value used while the shard's counter is still the
//   one noted before the scan (no change since: the scan saw the newest), else
//   read again; kept only if no write hit the shard meanwhile and the disk did not
//   fail since. It only fills free room: it never evicts a record that calls
//   brought in. So a preloaded record is exactly what a read on demand would have
//   found.
#include "cache/metadata_store.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <queue>
#include <thread>

#include <unistd.h>
#include <type_traits>
#include <unordered_map>

#include "cache/answer_basis.h"
#include "cache/byte_budget.h"
#include "cache/disk_budget.h"
#include "cache/disk_pool.h"
#include "cache/key_hash.h"
#include "cache/lru_shards.h"
#include "cache/metadata_codec.h"
#include "cache/metadata_disk_health.h"
#include "cache/metadata_write_queue.h"
#include "cache/peek_memo.h"

namespace nfsgw::cache {
namespace {

enum Kind : std::uint8_t { kAttr, kLookup, kListing, kLink, kAccess, kFs, kKindCount };
static_assert(kKindCount == LruShard::kKinds);

constexpr const char* kKindNames[kKindCount] = {"attrs", "lookups", "listings", "links", "access", "fs"};

template <typename R> struct KindOf;
template <> struct KindOf<AttrRecord> { static constexpr Kind value = kAttr; };
template <> struct KindOf<LookupRecord> { static constexpr Kind value = kLookup; };
template <> struct KindOf<ListingRecord> { static constexpr Kind value = kListing; };
template <> struct KindOf<LinkRecord> { static constexpr Kind value = kLink; };
template <> struct KindOf<AccessRecord> { static constexpr Kind value = kAccess; };
template <> struct KindOf<FsRecord> { static constexpr Kind value = kFs; };

/// The small records a hit reads on every call, kept in the per-thread memo
/// (peek_memo.h); listings, links and FS records are neither small nor hot enough.
template <typename R>
constexpr bool kMemoized = std::is_same_v<R, AttrRecord> || std::is_same_v<R, LookupRecord> ||
                           std::is_same_v<R, AccessRecord>;

std::atomic<std::uint64_t> next_store_instance{1};

// Heap bytes of an entry, as malloc counts them: the list node (the entry and two
// links), the index's node and bucket, the record's shared_ptr control block, each
// with malloc's header; then the key when it is too long to live in its string, and
// the record with what it owns. Measured with mallinfo2 (100,000 attribute records:
// 288 bytes each with a 12-byte key, 336 with a 30-byte one, 368 with a 60-byte one;
// these formulas give the same).
constexpr std::size_t kEntryOverhead = sizeof(MemEntry) + 112;
std::size_t heap(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }
/// A key's own heap block (none while it fits the string's inline buffer).
std::size_t key_heap(std::size_t key_size) { return key_size > 15 ? (key_size + 1 + 8 + 15) & ~std::size_t{15} : 0; }
std::size_t entry_bytes(std::size_t key_size, std::size_t record) { return kEntryOverhead + key_heap(key_size) + record; }
std::size_t record_bytes(const AttrRecord& r) { return sizeof r; }
std::size_t record_bytes(const LookupRecord& r) { return sizeof r; }
std::size_t record_bytes(const ListingRecord& r) {
  std::size_t n = sizeof r + r.entries.capacity() * sizeof(ListingEntry);
  for (const auto& e : r.entries) n += heap(e.name);
  return n;
}
std::size_t record_bytes(const LinkRecord& r) { return sizeof r + heap(r.target); }
std::size_t record_bytes(const AccessRecord& r) { return sizeof r; }
std::size_t record_bytes(const FsRecord& r) { return sizeof r + heap(r.xdr); }

template <typename R>
std::string encode_erased(const void* p, std::uint32_t used_s) {
  return codec::encode_value(*static_cast<const R*>(p), used_s);
}
using EncodeFn = std::string (*)(const void*, std::uint32_t);
constexpr EncodeFn kEncode[kKindCount] = {encode_erased<AttrRecord>,    encode_erased<LookupRecord>,
                                          encode_erased<ListingRecord>, encode_erased<LinkRecord>,
                                          encode_erased<AccessRecord>,  encode_erased<FsRecord>};

/// Decodes a stored value of kind R into a record for the memory layer, with its
/// charged bytes and last-used time; nullptr when it does not decode.
template <typename R>
std::shared_ptr<const void> decode_erased(std::string_view v, std::size_t& bytes, std::uint32_t& used_s) {
  auto r = std::make_shared<R>();
  if (!codec::decode_value(v, *r, used_s)) return nullptr;
  bytes = record_bytes(*r);
  return r;
}
using DecodeFn = std::shared_ptr<const void> (*)(std::string_view, std::size_t&, std::uint32_t&);
constexpr DecodeFn kDecode[kKindCount] = {decode_erased<AttrRecord>,    decode_erased<LookupRecord>,
                                          decode_erased<ListingRecord>, decode_erased<LinkRecord>,
                                          decode_erased<AccessRecord>,  decode_erased<FsRecord>};
/// The in-memory size of each kind's record before what it owns (the preload's
/// estimate from a stored value: this plus the value's bytes).
constexpr std::size_t kRecordSize[kKindCount] = {sizeof(AttrRecord),    sizeof(LookupRecord),
                                                 sizeof(ListingRecord), sizeof(LinkRecord),
                                                 sizeof(AccessRecord),  sizeof(FsRecord)};

template <typename K>
std::string memory_key(Kind kind, const K& key) {
  std::string s;
  s.reserve(80);
  s.push_back(static_cast<char>(kind));
  codec::append_key(s, key);
  return s;
}

/// The key without the kind byte: what the KvStore family holds.
std::string_view disk_key(std::string_view memory_key) { return memory_key.substr(1); }

bool in_range(std::string_view key, std::string_view begin, std::string_view end) {
  return key >= begin && (end.empty() || key < end);
}

struct Pending {
  std::uint64_t seq = 0;
  std::shared_ptr<const void> value;  // nullptr: erased
};

struct Shard {
  explicit Shard(std::size_t budget) : lru(budget) {}
  std::mutex mu;
  LruShard lru;
  std::unordered_map<std::string, Pending, KeyHash, std::equal_to<>> overlay;
  /// Bumped (under `mu`) by every change of the shard's records; read without the
  /// lock by the per-thread memo.
  std::atomic<std::uint64_t> writes{0};
};

struct RangeTombstone {
  std::string begin, end;  // disk keys; empty end: to the end
  std::uint64_t seq = 0;
};

using Op = MetadataOp;

/// What one queued change holds until it is written: its queue slot, its overlay
/// entry (node, key), the key again in the op, and the record (the memory layer
/// may drop its own copy meanwhile; charged again here, so the bound holds then).
std::size_t pending_charge(std::size_t key_size, std::size_t record) {
  return sizeof(Op) + 96 + 2 * key_heap(key_size) + record;
}

constexpr std::uint32_t kTouchAfterSeconds = 60;
constexpr std::size_t kSweepChunk = 512;

/// The options with their clocks filled in.
MetadataStoreOptions with_clocks(MetadataStoreOptions o) {
  if (o.clock == nullptr) o.clock = &wall_clock();
  if (o.timer_clock == nullptr) o.timer_clock = &monotonic_clock();
  return o;
}

}  // namespace

const std::vector<std::string>& metadata_families() {
  static const std::vector<std::string> names = {"meta_attrs", "meta_lookups", "meta_listings",
                                                 "meta_links", "meta_access",  "meta_fs"};
  return names;
}

struct MetadataStore::Impl {
  Impl(KvStore& kv, MetadataStoreOptions o)
      : kv(kv),
        options(with_clocks(o)),
        timers(options.timer_clock),
        budget(o.disk_bytes),
        pending(o.pending_bytes == 0 ? std::numeric_limits<std::size_t>::max() / 2 : o.pending_bytes),
        health(*timers, options.disk_retry),
        queue(*timers) {
    for (std::size_t k = 0; k < kKindCount; ++k) families[k] = kv.family(metadata_families()[k]);
    const unsigned n = std::max(options.shards, 1u);
    shards.reserve(n);
    for (unsigned i = 0; i < n; ++i) shards.push_back(std::make_unique<Shard>(options.memory_bytes / n));
    pool = std::make_unique<DiskPool>(options.disk_threads);
    queue.start({[this](const std::vector<Op>& ops) { write(ops); }, [this] { sweep(); },
                 [this] { return health.retry_due(); }, [this] { retry_disk(); }});
  }

  void start_preload() {
    {
      std::lock_guard lock(preload_mu);
      if (preload_started) return;
      preload_started = true;
      if (options.preload_bytes == 0) {
        preload_done = true;
        return;
      }
    }
    preloader = std::thread([this] { preload(); });
  }

  ~Impl() {
    if (preloader.joinable()) {
      stop_preload.store(true);
      preloader.join();
    }
    pool.reset();  // runs the queued loads
    queue.stop();  // the writer drains the queue first
  }

  // ---- helpers -------------------------------------------------------------------

  std::uint32_t now_s() const {
    auto ms = options.clock->now_ms();
    return ms <= 0 ? 0 : static_cast<std::uint32_t>(std::min<Millis>(ms / 1000, UINT32_MAX));
  }

  Shard& shard_of(std::string_view memory_key) { return shard_at(KeyHash{}(memory_key)); }
  Shard& shard_at(std::size_t hash) { return *shards[hash % shards.size()]; }

  /// The seq of the newest pending range erase covering `memory_key`, 0 if none.
  std::uint64_t range_seq(std::string_view memory_key) {
    if (pending_ranges.load() == 0) return 0;
    auto k = disk_key(memory_key);
    std::lock_guard lock(ranges_mu);
    std::uint64_t seq = 0;
    for (const auto& r : ranges)
      if (in_range(k, r.begin, r.end)) seq = std::max(seq, r.seq);
    return seq;
  }

  std::uint64_t enqueue(Op op) { return queue.push(std::move(op)); }

  /// What the memory layer and the overlay know of a key. Shard lock held.
  enum class Known { Value, Absent, Unknown };
  Known known(Shard& sh, std::string_view key, std::shared_ptr<const void>& value, bool touch) {
    if (auto* e = sh.lru.find(key)) {
      if (touch) e->touched = true;
      value = e->value;
      return Known::Value;
    }
    const auto rs = range_seq(key);
    if (auto it = sh.overlay.find(key); it != sh.overlay.end() && it->second.seq > rs) {
      value = it->second.value;
      return value ? Known::Value : Known::Absent;
    }
    if (rs != 0) return Known::Absent;
    return Known::Unknown;
  }

  /// Called under the shard lock for each record leaving the memory layer.
  void evicted(Shard& sh, MemEntry&& e) {
    evicted_memory.fetch_add(1, std::memory_order_relaxed);
    if (!e.touched || health.degraded()) return;
    const auto now = now_s();
    if (now < e.used_s + kTouchAfterSeconds) return;
    // A pending write rewrites it anyway; a pending range erase drops it.
    if (sh.overlay.count(e.key) != 0 || range_seq(e.key) != 0) return;
    // Never waits (a shard lock is held): with the queue full, the record keeps
    // its older time on disk.
    const std::size_t charge = pending_charge(e.key.size(), e.size);
    if (!pending.try_take(charge)) {
      touches_skipped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    Op op;
    op.charge = charge;
    op.type = Op::Touch;
    op.kind = static_cast<Kind>(e.kind);
    op.key = std::move(e.key);
    op.value = std::move(e.value);
    op.used_s = now;
    enqueue(std::move(op));
  }

  void insert(Shard& sh, std::string key, Kind kind, std::shared_ptr<const void> value, std::size_t bytes,
              std::uint32_t used_s, bool touched) {
    MemEntry e;
    e.size = entry_bytes(key.size(), bytes);
    e.key = std::move(key);
    e.value = std::move(value);
    e.used_s = used_s;
    e.kind = kind;
    e.touched = touched;
    sh.lru.insert(std::move(e), [&](MemEntry&& out) { evicted(sh, std::move(out)); });
  }

  /// A change of one record (value nullptr: erase). Shard lock held.
  /// `charge`: taken from `pending` by the caller.
  void change(Shard& sh, std::string key, Kind kind, std::shared_ptr<const void> value, std::size_t bytes,
              std::size_t charge) {
    ++sh.writes;
    const auto now = now_s();
    Op op;
    op.charge = charge;
    op.type = value ? Op::Put : Op::Erase;
    op.kind = kind;
    op.key = key;
    op.value = value;
    op.used_s = now;
    const auto seq = enqueue(std::move(op));
    sh.overlay.insert_or_assign(key, Pending{seq, value});
    if (value)
      insert(sh, std::move(key), kind, std::move(value), bytes, now, false);
    else
      sh.lru.erase(key);
  }

  void degrade(const std::string& message) {
    MetadataDiskHealth::ErrorHook report;
    if (!health.fail(message, report)) return;
    // The writer may be asleep until the next sweep (30 s): it must wake to the
    // retry's time. No caller holds the queue's lock here: the writer calls
    // write() and sweep() unlocked.
    queue.wake();
    if (report) report(message);
  }

  // ---- reads -----------------------------------------------------------------------

  template <typename R>
  std::shared_ptr<const R> decode(std::string_view v, std::uint32_t& used_s) {
    auto r = std::make_shared<R>();
    if (!codec::decode_value(v, *r, used_s)) return nullptr;
    return r;
  }

  template <typename R>
  Peeked<R> peek(const Key<R>& key, bool through_memory_layer) {
    constexpr Kind kind = KindOf<R>::value;
    // One key buffer per thread: no allocation on a hit once it has grown.
    thread_local std::string buf;
    buf.clear();
    buf.push_back(static_cast<char>(kind));
    codec::append_key(buf, key);
    const std::size_t hash = KeyHash{}(buf);
    Shard& sh = shard_at(hash);
    PeekMemo::Set* memo = nullptr;
    if constexpr (kMemoized<R>) {
      if (options.thread_memo) {
        memo = &PeekMemo::set_of(hash);
        PeekMemo::Slot* slot = through_memory_layer ? nullptr : PeekMemo::find(*memo, instance, hash, buf);
        const std::uint64_t writes = slot != nullptr ? sh.writes.load(std::memory_order_acquire) : 0;
        if (slot != nullptr && PeekMemo::usable(*slot, writes)) {
          if (PeekMemo::wants_copy(*slot)) {
            slot->value = std::make_shared<const R>(*static_cast<const R*>(slot->value.get()));
            slot->own = true;
          }
          return {Where::Memory, std::static_pointer_cast<const R>(slot->value), Watch{&sh.writes, writes}};
        }
      }
    }
    std::string error;
    {
      std::lock_guard lock(sh.mu);
      // What is read now rests on this shard as it is now (answer_basis.h).
      const Watch watch{&sh.writes, sh.writes.load(std::memory_order_relaxed)};
      std::shared_ptr<const void> v;
      switch (known(sh, buf, v, true)) {
        case Known::Value: {
          auto r = std::static_pointer_cast<const R>(std::move(v));
          if (memo != nullptr)
            PeekMemo::fill(PeekMemo::victim(*memo, instance, hash, buf), buf, watch.seen, r);
          return {Where::Memory, std::move(r), watch};
        }
        case Known::Absent:
          return {Where::Absent, nullptr, watch};
        case Known::Unknown:
          break;
      }
      if (health.degraded()) return {};
      try {
        std::string value;
        switch (kv.get(families[kind], disk_key(buf), value, KvStore::Tier::MemoryOnly)) {
          case KvStore::Found::No:
            return {Where::Absent, nullptr, watch};
          case KvStore::Found::NotInMemory:
            return {Where::OnDisk, nullptr, {}};
          case KvStore::Found::Yes:
            break;
        }
        std::uint32_t used_s = 0;
        auto r = decode<R>(value, used_s);
        if (!r) return {};
        insert(sh, buf, kind, r, record_bytes(*r), used_s, true);
        return {Where::Memory, std::move(r), watch};
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    degrade(error);
    return {};
  }

  template <typename R>
  std::shared_ptr<const R> load(const Key<R>& key) {
    constexpr Kind kind = KindOf<R>::value;
    const std::string mk = memory_key(kind, key);
    Shard& sh = shard_of(mk);
    constexpr int kAttempts = 3;
    for (int attempt = 1;; ++attempt) {
      std::uint64_t writes_before;
      {
        std::lock_guard lock(sh.mu);
        std::shared_ptr<const void> v;
        switch (known(sh, mk, v, true)) {
          case Known::Value:
            return std::static_pointer_cast<const R>(std::move(v));
          case Known::Absent:
            return nullptr;
          case Known::Unknown:
            break;
        }
        if (health.degraded()) return nullptr;
        writes_before = sh.writes;
      }
      std::shared_ptr<const R> r;
      std::uint32_t used_s = 0;
      try {
        std::string value;
        if (kv.get(families[kind], disk_key(mk), value, KvStore::Tier::Any) == KvStore::Found::Yes)
          r = decode<R>(value, used_s);
      } catch (const std::exception& e) {
        degrade(e.what());
        return nullptr;
      }
      {
        std::lock_guard lock(sh.mu);
        if (sh.writes == writes_before) {
          if (r) insert(sh, mk, kind, r, record_bytes(*r), used_s, true);
          return r;
        }
      }
      // A write hit the shard while reading: what was read may be older than it.
      if (attempt == kAttempts) return r;  // a concurrent read; not kept in memory
    }
  }

  // ---- writes ----------------------------------------------------------------------

  template <typename R>
  void put(const Key<R>& key, R value) {
    constexpr Kind kind = KindOf<R>::value;
    std::string mk = memory_key(kind, key);
    const std::size_t bytes = record_bytes(value);
    std::shared_ptr<const void> v = std::make_shared<const R>(std::move(value));
    // Room in the queue first, holding no lock (the writer thread makes it).
    const std::size_t charge = pending_charge(mk.size(), bytes);
    pending.take_blocking(charge);
    Shard& sh = shard_of(mk);
    std::lock_guard lock(sh.mu);
    change(sh, std::move(mk), kind, std::move(v), bytes, charge);
  }

  template <typename R>
  void update(const Key<R>& key, const std::function<std::optional<R>(const R* current)>& decide) {
    constexpr Kind kind = KindOf<R>::value;
    std::string mk = memory_key(kind, key);
    // Room for a record of its type first (no lock held); set right once decided.
    const std::size_t guess = pending_charge(mk.size(), sizeof(R));
    pending.take_blocking(guess);
    Shard& sh = shard_of(mk);
    std::lock_guard lock(sh.mu);
    std::shared_ptr<const void> current;
    if (known(sh, mk, current, false) != Known::Value) current.reset();
    auto next = decide(static_cast<const R*>(current.get()));
    if (!next) {
      pending.release(guess);
      return;
    }
    const std::size_t bytes = record_bytes(*next);
    const std::size_t charge = pending_charge(mk.size(), bytes);
    if (charge > guess) pending.add(charge - guess);  // a listing's entries: past the limit by at most this
    else pending.release(guess - charge);
    change(sh, std::move(mk), kind, std::make_shared<const R>(std::move(*next)), bytes, charge);
  }

  template <typename R>
  void erase(const Key<R>& key) {
    constexpr Kind kind = KindOf<R>::value;
    std::string mk = memory_key(kind, key);
    const std::size_t charge = pending_charge(mk.size(), 0);
    pending.take_blocking(charge);
    Shard& sh = shard_of(mk);
    std::lock_guard lock(sh.mu);
    change(sh, std::move(mk), kind, nullptr, 0, charge);
  }

  /// Every record of every kind whose disk key is in [begin, end).
  void erase_range(std::string begin, std::string end) {
    const std::size_t charge = pending_charge(begin.size() + end.size(), 0);
    pending.take_blocking(charge);
    Op op;
    op.charge = charge;
    op.type = Op::Range;
    op.key = begin;
    op.end = end;
    queue.push(std::move(op), [&](std::uint64_t seq) {
      std::lock_guard rl(ranges_mu);
      ranges.push_back({begin, end, seq});
      pending_ranges.fetch_add(1);
    });
    for (auto& s : shards) {
      std::lock_guard lock(s->mu);
      ++s->writes;
      s->lru.erase_if([&](const MemEntry& e) { return in_range(disk_key(e.key), begin, end); });
    }
  }

  std::vector<nfs3::FileHandle> cached_children(const ObjectKey& dir) {
    flush();
    const std::string begin = codec::object_prefix(dir), end = codec::prefix_end(begin);
    std::map<std::string, std::optional<nfs3::FileHandle>> found;  // disk key -> child
    auto child_of = [](const LookupRecord* r) {
      return r != nullptr && r->exists ? std::optional<nfs3::FileHandle>(r->child) : std::nullopt;
    };
    if (!health.degraded()) {
      try {
        kv.scan(families[kLookup], begin, end, [&](std::string_view k, std::string_view v) {
          LookupRecord r;
          std::uint32_t used_s;
          if (codec::decode_value(v, r, used_s)) found[std::string(k)] = child_of(&r);
          return true;
        });
      } catch (const std::exception& e) {
        degrade(e.what());
      }
    }
    // What is in memory is as new as the disk or newer.
    for (auto& s : shards) {
      std::lock_guard lock(s->mu);
      for (const auto& [mk, p] : s->overlay) {
        if (mk[0] != kLookup || !in_range(disk_key(mk), begin, end)) continue;
        found[std::string(disk_key(mk))] =
            p.seq > range_seq(mk) ? child_of(static_cast<const LookupRecord*>(p.value.get())) : std::nullopt;
      }
      s->lru.for_each([&](const MemEntry& e) {
        if (e.kind == kLookup && in_range(disk_key(e.key), begin, end))
          found[std::string(disk_key(e.key))] = child_of(static_cast<const LookupRecord*>(e.value.get()));
      });
    }
    std::vector<nfs3::FileHandle> out;
    for (auto& [k, child] : found)
      if (child) out.push_back(*child);
    return out;
  }

  void flush() { queue.flush(); }

  void sweep_disk() {
    flush();
    queue.sweep_now();
  }

  void run_due_work() { queue.run_due_work(); }

  // ---- preload at start (its own thread) ------------------------------------------

  struct Candidate {
    std::uint32_t used_s = 0;
    Kind kind = kAttr;
    std::size_t bytes = 0;  // estimated, in the memory layer
    std::string key;        // memory key
    std::string value;      // as the scan read it
    bool operator>(const Candidate& o) const { return used_s > o.used_s; }
  };

  void preload_finished() {
    {
      std::lock_guard lock(preload_mu);
      preload_done = true;
    }
    preload_cv.notify_all();
  }

  void wait_preloaded() {
    std::unique_lock lock(preload_mu);
    preload_cv.wait(lock, [&] { return preload_done || !preload_started; });
  }

  void preload() {
    // No setpriority() here: the systemd unit's SystemCallFilter refuses it (its
    // packaging test caught that), and the refill is short (14,104 records in
    // 17-37 ms, docs/benchmarks.md).
    const auto start = timers->now();
    try {
      // What the scan reads is as new as the disk once every change made before
      // the shards' counters are noted is written: a change after that moves its
      // shard's counter, and that shard's records are then read again one by one.
      std::vector<std::uint64_t> seen(shards.size());
      for (std::size_t i = 0; i < shards.size(); ++i) seen[i] = shards[i]->writes.load();
      const std::uint64_t failures_before = health.failures();
      flush();
      auto picked = preload_pick();
      preload_keep(picked, seen, failures_before);
    } catch (...) {
      // A disk error ends the preload; reads on demand report it as usual.
    }
    if (options.on_preloaded) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timers->now() - start);
      try {
        options.on_preloaded(preloaded.load(), ms.count());
      } catch (...) {
      }
    }
    preload_finished();
  }

  /// The newest records whose estimated size fits the preload budget, oldest first.
  std::vector<Candidate> preload_pick() {
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> newest;  // oldest on top
    std::size_t bytes = 0, seen = 0;
    const std::size_t room = std::min(options.preload_bytes, options.memory_bytes);
    for (std::size_t k = 0; k < kKindCount && !stop_preload.load(); ++k) {
      if (health.degraded()) return {};
      kv.scan(families[k], {}, {}, [&](std::string_view key, std::string_view v) {
        if ((++seen & 4095) == 0 && stop_preload.load()) return false;
        Candidate c;
        c.used_s = codec::value_used_time(v).value_or(0);
        c.kind = static_cast<Kind>(k);
        c.bytes = entry_bytes(1 + key.size(), kRecordSize[k] + v.size());
        if (bytes + c.bytes > room && !newest.empty() && newest.top().used_s >= c.used_s) return true;
        c.key.reserve(key.size() + 1);
        c.key.push_back(static_cast<char>(k));
        c.key.append(key);
        c.value.assign(v);
        bytes += c.bytes;
        newest.push(std::move(c));
        while (bytes > room && !newest.empty()) {
          bytes -= newest.top().bytes;
          newest.pop();
        }
        return true;
      });
    }
    std::vector<Candidate> out;
    out.reserve(newest.size());
    while (!newest.empty()) {
      out.push_back(std::move(const_cast<Candidate&>(newest.top())));
      newest.pop();
    }
    return out;  // oldest first
  }

  /// Keeps each candidate as load() would, in free room only: the scan's value
  /// while its shard is as it was before the scan, else the record read again.
  void preload_keep(std::vector<Candidate>& picked, const std::vector<std::uint64_t>& seen,
                    std::uint64_t failures_before) {
    std::string value;
    for (auto& c : picked) {
      if (stop_preload.load() || health.degraded()) return;
      const std::size_t index = KeyHash{}(c.key) % shards.size();
      Shard& sh = *shards[index];
      std::uint64_t writes_before;
      {
        std::lock_guard lock(sh.mu);
        std::shared_ptr<const void> v;
        if (known(sh, c.key, v, false) != Known::Unknown) continue;
        if (sh.lru.bytes() + c.bytes > sh.lru.budget()) continue;
        writes_before = sh.writes;
      }
      const std::string* stored = &c.value;
      if (writes_before != seen[index]) {
        // Changed since the scan: read it now, as load() does.
        if (kv.get(families[c.kind], disk_key(c.key), value, KvStore::Tier::Any) != KvStore::Found::Yes) continue;
        stored = &value;
      }
      std::size_t bytes = 0;
      std::uint32_t used_s = 0;
      auto r = kDecode[c.kind](*stored, bytes, used_s);
      c.value = std::string();  // done with it
      if (!r) continue;
      std::lock_guard lock(sh.mu);
      // As load(): a write that hit the shard since may be newer than what was read;
      // a disk that failed (and was emptied when it came back) holds nothing to trust.
      if (sh.writes != writes_before || health.degraded() || health.failures() != failures_before) continue;
      if (sh.lru.peek(c.key) != nullptr) continue;  // a call's load() kept it meanwhile
      const std::size_t size = entry_bytes(c.key.size(), bytes);
      if (sh.lru.bytes() + size > sh.lru.budget()) continue;
      insert(sh, c.key, c.kind, std::move(r), bytes, used_s, false);
      preloaded.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // ---- the writer thread (metadata_write_queue.h calls these) ----------------------

  void write(const std::vector<Op>& ops) {
    if (!health.degraded()) {
      try {
        KvStore::Batch batch;
        batch.changes.reserve(ops.size());
        for (const auto& op : ops) {
          switch (op.type) {
            case Op::Put:
            case Op::Touch:
              batch.put(families[op.kind], disk_key(op.key), kEncode[op.kind](op.value.get(), op.used_s));
              break;
            case Op::Erase:
              batch.erase(families[op.kind], disk_key(op.key));
              break;
            case Op::Range:
              for (std::size_t k = 0; k < kKindCount; ++k) batch.erase_range(families[k], op.key, op.end);
              break;
          }
        }
        kv.write(batch, KvStore::Durability::Unsynced);
      } catch (const std::exception& e) {
        degrade(e.what());  // from now on the changes live in memory only
      } catch (...) {
        degrade("unknown error writing the metadata cache");
      }
    }
    // Written (or dropped, degraded): the overlay entries of these very changes go.
    bool had_range = false;
    for (const auto& op : ops) {
      if (op.type == Op::Range) {
        had_range = true;
        continue;
      }
      if (op.type == Op::Touch) continue;
      Shard& sh = shard_of(op.key);
      std::lock_guard lock(sh.mu);
      if (auto it = sh.overlay.find(op.key); it != sh.overlay.end() && it->second.seq == op.seq)
        sh.overlay.erase(it);
    }
    if (had_range) {
      std::lock_guard lock(ranges_mu);
      for (const auto& op : ops) {
        if (op.type != Op::Range) continue;
        auto it = std::find_if(ranges.begin(), ranges.end(), [&](const RangeTombstone& r) { return r.seq == op.seq; });
        if (it != ranges.end()) {
          ranges.erase(it);
          pending_ranges.fetch_sub(1);
        }
      }
    }
    std::size_t written = 0;
    for (const auto& op : ops) written += op.charge;
    pending.release(written);  // writers waiting for room go on
  }

  // ---- a failed disk, tried again (writer thread) ------------------------------------

  void retry_disk() {
    try {
      kv.recover();
      KvStore::Batch wipe;
      for (auto f : families) wipe.erase_range(f, {}, {});
      kv.write(wipe, KvStore::Durability::Unsynced);
    } catch (...) {
      health.retry_failed();
      return;
    }
    health.recovered();
  }

  /// The disk budget sweep (writer thread).
  void sweep() {
    if (health.degraded()) return;
    try {
      std::uint64_t reported = 0;
      for (auto f : families) reported += kv.usage(f).bytes;
      const double share = budget.share_to_drop(reported, timers->now());
      if (share <= 0) return;

      // Pass 1: record bytes by last-used minute.
      std::map<std::uint32_t, std::uint64_t> by_minute;
      std::uint64_t total = 0;
      for (auto f : families) {
        kv.scan(f, {}, {}, [&](std::string_view k, std::string_view v) {
          const auto size = k.size() + v.size();
          by_minute[codec::value_used_time(v).value_or(0) / 60] += size;
          total += size;
          return true;
        });
      }
      const auto want = static_cast<std::uint64_t>(share * static_cast<double>(total));
      const SweepCut cut = plan_sweep(by_minute, want);

      // Pass 2: drop what is older than the cut, in batches.
      std::uint64_t at_cutoff = 0, dropped_bytes = 0;
      std::vector<std::pair<Kind, std::string>> chunk;
      for (std::size_t k = 0; k < kKindCount; ++k) {
        kv.scan(families[k], {}, {}, [&](std::string_view key, std::string_view v) {
          const auto minute = codec::value_used_time(v).value_or(0) / 60;
          const auto size = key.size() + v.size();
          if (minute > cut.cutoff) return true;
          if (minute == cut.cutoff) {
            if (at_cutoff >= cut.at_cutoff) return true;
            at_cutoff += size;
          }
          dropped_bytes += size;
          chunk.emplace_back(static_cast<Kind>(k), std::string(key));
          if (chunk.size() >= kSweepChunk) drop(chunk);
          return true;
        });
      }
      drop(chunk);
      budget.swept(total == 0 ? 0.0 : static_cast<double>(dropped_bytes) / static_cast<double>(total),
                   timers->now());
    } catch (const std::exception& e) {
      degrade(e.what());
    } catch (...) {
      degrade("unknown error sweeping the metadata cache");
    }
  }

  /// Erases swept records from disk and memory; a record served from memory since
  /// it was last written is rewritten with the current time instead.
  void drop(std::vector<std::pair<Kind, std::string>>& chunk) {
    if (chunk.empty()) return;
    const auto now = now_s();
    KvStore::Batch batch;
    std::uint64_t erased = 0;
    std::string mk;
    for (auto& [kind, key] : chunk) {
      mk.assign(1, static_cast<char>(kind));
      mk += key;
      Shard& sh = shard_of(mk);
      std::shared_ptr<const void> keep;
      {
        std::lock_guard lock(sh.mu);
        if (sh.overlay.count(mk) != 0) continue;  // a newer write is on its way
        if (auto* e = sh.lru.peek(mk); e != nullptr && e->touched) {
          keep = e->value;
          e->used_s = now;
          e->touched = false;
        } else {
          if (e != nullptr) sh.lru.erase(mk);
          ++sh.writes;
        }
      }
      if (keep) {
        batch.put(families[kind], key, kEncode[kind](keep.get(), now));
      } else {
        batch.erase(families[kind], key);
        ++erased;
      }
    }
    chunk.clear();
    kv.write(batch, KvStore::Durability::Unsynced);
    evicted_disk.fetch_add(erased);
  }

  // ---- state -----------------------------------------------------------------------

  KvStore& kv;
  MetadataStoreOptions options;
  MonotonicClock* timers;  // options.timer_clock, never null
  const std::uint64_t instance = next_store_instance.fetch_add(1);  // tags memo slots
  KvStore::Family families[kKindCount]{};
  std::vector<std::unique_ptr<Shard>> shards;

  std::mutex ranges_mu;  // after a shard's or the queue's lock (metadata_write_queue.h)
  std::vector<RangeTombstone> ranges;
  std::atomic<std::size_t> pending_ranges{0};

  DiskBudget budget;  // writer thread only
  ByteBudget pending;  // the queue's bytes (MetadataStoreOptions::pending_bytes)
  std::atomic<std::uint64_t> touches_skipped{0};
  MetadataDiskHealth health;
  MetadataWriteQueue queue;  // its writer thread calls write(), sweep() and retry_disk()

  std::atomic<std::uint64_t> evicted_memory{0}, evicted_disk{0}, preloaded{0};

  std::atomic<bool> stop_preload{false};
  std::mutex preload_mu;
  std::condition_variable preload_cv;
  bool preload_started = false, preload_done = false;

  std::thread preloader;           // joined first
  std::unique_ptr<DiskPool> pool;  // last: stopped first
};

MetadataStore::MetadataStore(KvStore& kv, MetadataStoreOptions options)
    : impl_(std::make_unique<Impl>(kv, options)) {}

MetadataStore::~MetadataStore() = default;

template <typename R>
MetadataStore::Peeked<R> MetadataStore::peek(const Key<R>& key, bool through_memory_layer) {
  return impl_->peek<R>(key, through_memory_layer);
}

template <typename R>
void MetadataStore::load(Key<R> key, std::function<void(std::shared_ptr<const R>)> done) {
  impl_->pool->post([impl = impl_.get(), key = std::move(key), done = std::move(done)] {
    std::shared_ptr<const R> r;
    try {
      r = impl->load<R>(key);
    } catch (...) {
      // Out of memory decoding, say: a miss. `done` is always called.
    }
    done(std::move(r));
  });
}

template <typename R>
std::shared_ptr<const R> MetadataStore::get(const Key<R>& key) {
  return impl_->load<R>(key);
}

template <typename R>
void MetadataStore::put(const Key<R>& key, R value) {
  impl_->put<R>(key, std::move(value));
}

template <typename R>
void MetadataStore::update(const Key<R>& key, const std::function<std::optional<R>(const R* current)>& decide) {
  impl_->update<R>(key, decide);
}

template <typename R>
void MetadataStore::erase(const Key<R>& key) {
  impl_->erase<R>(key);
}

void MetadataStore::erase_object(const ObjectKey& key) {
  auto begin = codec::object_prefix(key);
  auto end = codec::prefix_end(begin);
  impl_->erase_range(std::move(begin), std::move(end));
}

void MetadataStore::erase_export(std::uint32_t export_id) {
  auto begin = codec::export_prefix(export_id);
  auto end = codec::prefix_end(begin);
  impl_->erase_range(std::move(begin), std::move(end));
}

std::vector<nfs3::FileHandle> MetadataStore::cached_children(const ObjectKey& dir) {
  return impl_->cached_children(dir);
}

void MetadataStore::flush() { impl_->flush(); }
void MetadataStore::preload_in_background() { impl_->start_preload(); }
void MetadataStore::wait_preloaded() { impl_->wait_preloaded(); }
void MetadataStore::sweep_disk() { impl_->sweep_disk(); }

void MetadataStore::run_due_work() { impl_->run_due_work(); }

StoreUsage MetadataStore::usage() const {
  StoreUsage u;
  u.tables.resize(kKindCount);
  for (std::size_t k = 0; k < kKindCount; ++k) u.tables[k].name = kKindNames[k];
  for (auto& s : impl_->shards) {
    std::lock_guard lock(s->mu);
    const auto& c = s->lru.counts();
    for (std::size_t k = 0; k < kKindCount; ++k) {
      u.tables[k].memory_entries += c[k].entries;
      u.tables[k].memory_bytes += c[k].bytes;
    }
  }
  u.degraded = impl_->health.degraded();
  if (!u.degraded) {
    try {
      for (std::size_t k = 0; k < kKindCount; ++k) {
        auto d = impl_->kv.usage(impl_->families[k]);
        u.tables[k].disk_entries = d.keys;
        u.tables[k].disk_bytes = d.bytes;
      }
    } catch (const std::exception& e) {
      impl_->degrade(e.what());
      u.degraded = true;
    }
  }
  u.evicted_memory = impl_->evicted_memory.load();
  u.evicted_disk = impl_->evicted_disk.load();
  u.preloaded = impl_->preloaded.load();
  const auto p = impl_->pending.usage();
  u.pending_bytes = p.used;
  u.pending_peak = p.peak;
  u.pending_limit = impl_->options.pending_bytes;
  u.pending_waits = p.waits;
  u.touches_skipped = impl_->touches_skipped.load();
  return u;
}

void MetadataStore::on_disk_error(std::function<void(const std::string&)> hook) {
  impl_->health.on_error(std::move(hook));
}

void MetadataStore::on_disk_recovered(std::function<void()> hook) { impl_->health.on_recovered(std::move(hook)); }

#define NFSGW_METADATA_RECORD(R)                                                                         \
  template MetadataStore::Peeked<R> MetadataStore::peek<R>(const Key<R>&, bool);                        \
  template void MetadataStore::load<R>(Key<R>, std::function<void(std::shared_ptr<const R>)>);         \
  template std::shared_ptr<const R> MetadataStore::get<R>(const Key<R>&);                              \
  template void MetadataStore::put<R>(const Key<R>&, R);                                               \
  template void MetadataStore::update<R>(const Key<R>&,                                                \
                                         const std::function<std::optional<R>(const R* current)>&);    \
  template void MetadataStore::erase<R>(const Key<R>&);

NFSGW_METADATA_RECORD(AttrRecord)
NFSGW_METADATA_RECORD(LookupRecord)
NFSGW_METADATA_RECORD(ListingRecord)
NFSGW_METADATA_RECORD(LinkRecord)
NFSGW_METADATA_RECORD(AccessRecord)
NFSGW_METADATA_RECORD(FsRecord)
#undef NFSGW_METADATA_RECORD

}  // namespace nfsgw::cache
