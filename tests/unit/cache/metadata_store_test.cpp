// MetadataStore: the memory layer, the overlay of unwritten changes, persistence,
// invalidation by object and export, the budgets, degraded mode, concurrency.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cache/metadata_codec.h"
#include "cache/metadata_store.h"
#include "cache/peek_memo.h"
#include "controlled_store.h"
#include "record_helpers.h"
#include "temp_dir.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::attr_record;
using nfsgw::cache::testing::ControlledStore;
using nfsgw::cache::testing::disk_keys;
using nfsgw::cache::testing::object;
using nfsgw::cache::testing::origin;
using nfsgw::cache::testing::TempDir;
using Where = MetadataStore::Where;

namespace {

MetadataStoreOptions small_options(const Clock* clock = &wall_clock()) {
  // Timers never fire by themselves here: a sweep runs when a test asks for it.
  static ManualMonotonicClock frozen_timers;
  MetadataStoreOptions o;
  o.memory_bytes = 1 << 20;
  o.disk_threads = 2;
  o.shards = 4;
  o.clock = clock;
  o.timer_clock = &frozen_timers;
  return o;
}

std::unique_ptr<ControlledStore> controlled() {
  return std::make_unique<ControlledStore>(make_memory_store(metadata_families()));
}

template <typename R>
std::shared_ptr<const R> load_now(MetadataStore& s, const Key<R>& key) {
  std::promise<std::shared_ptr<const R>> p;
  auto f = p.get_future();
  s.load<R>(key, [&](std::shared_ptr<const R> r) { p.set_value(std::move(r)); });
  return f.get();
}

const TableUsage& table(const StoreUsage& u, const std::string& name) {
  for (const auto& t : u.tables)
    if (t.name == name) return t;
  throw std::out_of_range(name);
}

std::uint64_t memory_bytes(const StoreUsage& u) {
  std::uint64_t n = 0;
  for (const auto& t : u.tables) n += t.memory_bytes;
  return n;
}

LookupRecord positive(std::uint8_t tag) { return {true, origin(20, tag), 1, kNever}; }

}  // namespace

TEST(MetadataStore, PutPeekEraseUpdate) {
  auto kv = make_memory_store(metadata_families());
  MetadataStore s(*kv, small_options());
  const auto o = object(1);
  EXPECT_EQ(s.peek<AttrRecord>(o).where, Where::Absent);

  s.put<AttrRecord>(o, attr_record(5));
  auto p = s.peek<AttrRecord>(o);
  ASSERT_EQ(p.where, Where::Memory);
  EXPECT_EQ(p.value->attr, attr_record(5).attr);
  // A listing hit hands out the same object, not a copy (small records may come
  // from this thread's memo copy instead: MetadataStoreMemo below).
  s.put<ListingRecord>(object(3), ListingRecord{1, {{listing_cookie("a"), 1, "a", origin(20, 1)}}});
  EXPECT_EQ(s.peek<ListingRecord>(object(3)).value.get(), s.peek<ListingRecord>(object(3)).value.get());

  // Kinds are separate: the object has no listing.
  EXPECT_EQ(s.peek<ListingRecord>(o).where, Where::Absent);

  s.update<AttrRecord>(o, [](const AttrRecord* cur) -> std::optional<AttrRecord> {
    EXPECT_NE(cur, nullptr);
    AttrRecord next = *cur;
    next.seq = 99;
    return next;
  });
  EXPECT_EQ(s.peek<AttrRecord>(o).value->seq, 99u);
  EXPECT_EQ(p.value->seq, 5u);  // the old value held by a caller is unchanged

  s.update<AttrRecord>(o, [](const AttrRecord*) { return std::optional<AttrRecord>(); });  // keep
  EXPECT_EQ(s.peek<AttrRecord>(o).value->seq, 99u);

  bool saw_null = false;
  s.update<AttrRecord>(object(2), [&](const AttrRecord* cur) {
    saw_null = cur == nullptr;
    return std::optional<AttrRecord>(attr_record(2));
  });
  EXPECT_TRUE(saw_null);
  EXPECT_EQ(s.peek<AttrRecord>(object(2)).value->seq, 2u);

  s.erase<AttrRecord>(o);
  EXPECT_EQ(s.peek<AttrRecord>(o).where, Where::Absent);
  s.flush();
  EXPECT_EQ(s.get<AttrRecord>(o), nullptr);
  EXPECT_NE(s.get<AttrRecord>(object(2)), nullptr);
  EXPECT_EQ(disk_keys(*kv, "meta_attrs"), 1u);
}

TEST(MetadataStore, EveryKindIsStoredAndReadBack) {
  auto kv = make_memory_store(metadata_families());
  const auto o = object(1);
  const NameKey nk{o, "name"};
  const CredKey ck{o, 1000, 100, {4, 5}};
  const FsKey fk{o, FsKind::Pathconf};
  {
    MetadataStore s(*kv, small_options());
    s.put<LookupRecord>(nk, positive(3));
    ListingRecord l;
    l.dir_gen = 4;
    l.entries.push_back({listing_cookie("name"), 9, "name", origin(20, 3)});
    s.put<ListingRecord>(o, l);
    s.put<LinkRecord>(o, LinkRecord{{}, "target"});
    s.put<AccessRecord>(ck, AccessRecord{{}, 0x3f, 0x01, 7});
    s.put<FsRecord>(fk, FsRecord{"xdr", 8});
  }  // the destructor writes everything
  MetadataStore s(*kv, small_options());
  EXPECT_EQ(s.get<LookupRecord>(nk)->child, origin(20, 3));
  EXPECT_EQ(s.get<ListingRecord>(o)->entries.at(0).name, "name");
  EXPECT_EQ(s.get<LinkRecord>(o)->target, "target");
  EXPECT_EQ(s.get<AccessRecord>(CredKey{o, 1000, 100, {5, 4}})->granted, 0x01u);  // groups in any order
  EXPECT_EQ(s.get<AccessRecord>(CredKey{o, 1000, 100, {5}}), nullptr);
  EXPECT_EQ(s.get<FsRecord>(fk)->xdr, "xdr");
  EXPECT_EQ(s.get<FsRecord>(FsKey{o, FsKind::Fsstat}), nullptr);
}

TEST(MetadataStore, PeekSaysOnDiskAndLoadFetchesIt) {
  auto kv = controlled();
  {
    MetadataStore s(*kv, small_options());
    s.put<AttrRecord>(object(1), attr_record(1));
  }
  kv->cold = true;
  MetadataStore s(*kv, small_options());
  EXPECT_EQ(s.peek<AttrRecord>(object(2)).where, Where::Absent);  // not on disk either
  EXPECT_EQ(s.peek<AttrRecord>(object(1)).where, Where::OnDisk);
  const int disk_before = kv->disk_gets;
  auto r = load_now<AttrRecord>(s, object(1));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->attr, attr_record(1).attr);
  EXPECT_EQ(kv->disk_gets, disk_before + 1);
  // Now in the memory layer: no disk read.
  auto p = s.peek<AttrRecord>(object(1));
  EXPECT_EQ(p.where, Where::Memory);
  EXPECT_EQ(p.value.get(), r.get());
  EXPECT_EQ(load_now<AttrRecord>(s, object(1)).get(), r.get());
  EXPECT_EQ(kv->disk_gets, disk_before + 1);
  EXPECT_EQ(load_now<AttrRecord>(s, object(3)), nullptr);
}

TEST(MetadataStore, CorruptRecordOnDiskIsAbsent) {
  auto kv = make_memory_store(metadata_families());
  std::string key;
  codec::append_key(key, object(1));
  KvStore::Batch b;
  b.put(kv->family("meta_attrs"), key, "\x01\x01garbage");
  kv->write(b, KvStore::Durability::Unsynced);
  MetadataStore s(*kv, small_options());
  EXPECT_EQ(s.peek<AttrRecord>(object(1)).where, Where::Absent);
  EXPECT_EQ(s.get<AttrRecord>(object(1)), nullptr);
}

TEST(MetadataStore, UnwrittenChangesAreSeenAfterEviction) {
  auto kv = controlled();
  auto opts = small_options();
  opts.memory_bytes = 0;  // nothing stays in memory: only the overlay can answer
  MetadataStore s(*kv, opts);
  s.put<AttrRecord>(object(100), attr_record(100));
  s.flush();
  ASSERT_EQ(disk_keys(kv->inner(), "meta_attrs"), 1u);

  kv->close_gate();
  for (std::uint32_t i = 0; i < 50; ++i) s.put<AttrRecord>(object(i), attr_record(i));
  s.erase<AttrRecord>(object(100));
  EXPECT_EQ(disk_keys(kv->inner(), "meta_attrs"), 1u);  // nothing written yet
  for (std::uint32_t i = 0; i < 50; ++i) {
    auto p = s.peek<AttrRecord>(object(i));
    EXPECT_EQ(p.where, Where::Memory) << i;  // no ASSERT while the gate is closed
    if (p.value) {
      EXPECT_EQ(p.value->seq, i);
    }
  }
  EXPECT_EQ(s.peek<AttrRecord>(object(100)).where, Where::Absent);  // erased, still on disk
  bool saw = false;
  s.update<AttrRecord>(object(7), [&](const AttrRecord* cur) {
    saw = cur != nullptr && cur->seq == 7;
    auto next = cur ? *cur : AttrRecord{};
    next.seq = 700;
    return std::optional<AttrRecord>(next);
  });
  EXPECT_TRUE(saw);
  auto p7 = s.peek<AttrRecord>(object(7));
  EXPECT_TRUE(p7.value && p7.value->seq == 700u);  // no crash while the gate is closed
  EXPECT_EQ(s.usage().evicted_memory, 0u);  // a budget of 0 keeps nothing: nothing to evict

  kv->open_gate();
  s.flush();
  EXPECT_EQ(disk_keys(kv->inner(), "meta_attrs"), 50u);
  EXPECT_EQ(s.get<AttrRecord>(object(7))->seq, 700u);
  EXPECT_EQ(s.get<AttrRecord>(object(100)), nullptr);
}

TEST(MetadataStore, PendingObjectEraseHidesWhatTheDiskStillHas) {
  auto kv = controlled();
  MetadataStore s(*kv, small_options());
  const auto dir = object(1);
  s.put<AttrRecord>(dir, attr_record(1));
  s.put<LookupRecord>(NameKey{dir, "a"}, positive(2));
  s.flush();
  kv->close_gate();
  s.erase_object(dir);
  s.put<LookupRecord>(NameKey{dir, "b"}, positive(3));  // after the erase: kept
  EXPECT_EQ(disk_keys(kv->inner(), "meta_lookups"), 1u);
  EXPECT_EQ(s.peek<AttrRecord>(dir).where, Where::Absent);
  EXPECT_EQ(s.peek<LookupRecord>(NameKey{dir, "a"}).where, Where::Absent);
  EXPECT_EQ(s.peek<LookupRecord>(NameKey{dir, "b"}).where, Where::Memory);
  kv->open_gate();
  s.flush();
  EXPECT_EQ(s.get<LookupRecord>(NameKey{dir, "a"}), nullptr);
  EXPECT_NE(s.get<LookupRecord>(NameKey{dir, "b"}), nullptr);
  EXPECT_EQ(disk_keys(kv->inner(), "meta_attrs"), 0u);
  EXPECT_EQ(disk_keys(kv->inner(), "meta_lookups"), 1u);
}

TEST(MetadataStore, RecordsSurviveReopeningRocksDb) {
  TempDir dir;
  const auto o = object(1);
  {
    auto kv = open_rocksdb_store(dir / "db", 8, metadata_families());
    MetadataStore s(*kv, small_options());
    for (std::uint32_t i = 0; i < 100; ++i) s.put<AttrRecord>(object(i), attr_record(i));
    s.put<LookupRecord>(NameKey{o, "x"}, positive(1));
    s.erase<AttrRecord>(object(50));
  }
  auto kv = open_rocksdb_store(dir / "db", 8, metadata_families());
  MetadataStore s(*kv, small_options());
  // Cold block cache: peek does not read the file.
  EXPECT_EQ(s.peek<AttrRecord>(object(3)).where, Where::OnDisk);
  for (std::uint32_t i = 0; i < 100; ++i) {
    auto r = i % 2 ? s.get<AttrRecord>(object(i)) : load_now<AttrRecord>(s, object(i));
    if (i == 50) {
      EXPECT_EQ(r, nullptr);
    } else {
      ASSERT_NE(r, nullptr) << i;
      EXPECT_EQ(r->attr, attr_record(i).attr);
    }
  }
  EXPECT_EQ(s.peek<AttrRecord>(object(3)).where, Where::Memory);
  EXPECT_EQ(s.get<LookupRecord>(NameKey{o, "x"})->child, positive(1).child);
  auto u = s.usage();
  EXPECT_GE(table(u, "attrs").disk_entries, 90u);
  EXPECT_GT(table(u, "attrs").disk_bytes, 0u);
  EXPECT_GE(table(u, "attrs").memory_entries, 99u);
}

namespace {

/// Every kind of record for `o` (a directory with two names).
void fill_object(MetadataStore& s, const ObjectKey& o) {
  s.put<AttrRecord>(o, attr_record(1));
  s.put<ListingRecord>(o, ListingRecord{1, {{listing_cookie("a"), 1, "a", origin(20, 1)}}});
  s.put<LinkRecord>(o, LinkRecord{{}, "t"});
  for (auto k : {FsKind::Fsinfo, FsKind::Pathconf, FsKind::Fsstat}) s.put<FsRecord>(FsKey{o, k}, FsRecord{"x", 1});
  s.put<AccessRecord>(CredKey{o, 1, 1, {}}, AccessRecord{{}, 1, 1, 1});
  s.put<AccessRecord>(CredKey{o, 2, 2, {3}}, AccessRecord{{}, 1, 1, 1});
  s.put<LookupRecord>(NameKey{o, "a"}, positive(1));
  s.put<LookupRecord>(NameKey{o, "\xff\xfe"}, positive(2));
}

/// How many of `o`'s records the store answers (blocking reads: memory and disk).
int count_object(MetadataStore& s, const ObjectKey& o) {
  int n = 0;
  n += s.get<AttrRecord>(o) != nullptr;
  n += s.get<ListingRecord>(o) != nullptr;
  n += s.get<LinkRecord>(o) != nullptr;
  for (auto k : {FsKind::Fsinfo, FsKind::Pathconf, FsKind::Fsstat}) n += s.get<FsRecord>(FsKey{o, k}) != nullptr;
  n += s.get<AccessRecord>(CredKey{o, 1, 1, {}}) != nullptr;
  n += s.get<AccessRecord>(CredKey{o, 2, 2, {3}}) != nullptr;
  n += s.get<LookupRecord>(NameKey{o, "a"}) != nullptr;
  n += s.get<LookupRecord>(NameKey{o, "\xff\xfe"}) != nullptr;
  return n;
}

}  // namespace

TEST(MetadataStore, EraseObjectDropsEveryKindOfThatObjectOnly) {
  auto kv = make_memory_store(metadata_families());
  auto opts = small_options();
  opts.memory_bytes = 4096;  // most records only on disk
  const auto a = object(1), b = object(2);
  {
    MetadataStore s(*kv, opts);
    fill_object(s, a);
    fill_object(s, b);
  }
  MetadataStore s(*kv, opts);
  ASSERT_EQ(count_object(s, a), 10);
  ASSERT_EQ(count_object(s, b), 10);
  s.erase_object(a);
  EXPECT_EQ(count_object(s, a), 0);
  EXPECT_EQ(count_object(s, b), 10);
  s.flush();
  EXPECT_EQ(disk_keys(*kv, "meta_access"), 2u);
  EXPECT_EQ(disk_keys(*kv, "meta_lookups"), 2u);
  EXPECT_EQ(disk_keys(*kv, "meta_fs"), 3u);
  EXPECT_EQ(count_object(s, b), 10);
}

TEST(MetadataStore, EraseExportDropsThatExportOnly) {
  auto kv = make_memory_store(metadata_families());
  MetadataStore s(*kv, small_options());
  const auto a1 = object(1, 7), a2 = object(2, 7), other = object(1, 8), last = object(1, 0xffffffff);
  for (const auto& o : {a1, a2, other, last}) fill_object(s, o);
  s.flush();
  s.erase_export(7);
  EXPECT_EQ(count_object(s, a1), 0);
  EXPECT_EQ(count_object(s, a2), 0);
  EXPECT_EQ(count_object(s, other), 10);
  EXPECT_EQ(count_object(s, last), 10);
  s.erase_export(0xffffffff);  // the last export: a range to the end
  EXPECT_EQ(count_object(s, last), 0);
  EXPECT_EQ(count_object(s, other), 10);
  s.flush();
  EXPECT_EQ(disk_keys(*kv, "meta_attrs"), 1u);
}

TEST(MetadataStore, CachedChildrenArePositiveLookupsOfThatDirectory) {
  auto kv = make_memory_store(metadata_families());
  auto opts = small_options();
  MetadataStore s(*kv, opts);
  const auto dir = object(1), other = object(2);
  s.put<LookupRecord>(NameKey{dir, "on-disk"}, positive(1));
  s.put<LookupRecord>(NameKey{dir, "erased"}, positive(2));
  s.put<LookupRecord>(NameKey{dir, "missing"}, LookupRecord{false, {}, 1, 5});
  s.put<LookupRecord>(NameKey{other, "elsewhere"}, positive(3));
  s.flush();
  s.erase<LookupRecord>(NameKey{dir, "erased"});
  s.put<LookupRecord>(NameKey{dir, "fresh"}, positive(4));
  auto children = s.cached_children(dir);
  std::set<std::uint8_t> got;
  for (const auto& h : children) got.insert(h.bytes[0]);
  EXPECT_EQ(children.size(), 2u);
  EXPECT_EQ(got, (std::set<std::uint8_t>{positive(1).child.bytes[0], positive(4).child.bytes[0]}));
  EXPECT_EQ(s.cached_children(object(3)).size(), 0u);
}

TEST(MetadataStore, MemoryBudgetIsRespected) {
  auto kv = make_memory_store(metadata_families());
  auto opts = small_options();
  opts.memory_bytes = 64 * 1024;
  MetadataStore s(*kv, opts);
  for (std::uint32_t i = 0; i < 5000; ++i) {
    s.put<AttrRecord>(object(i % 250, i / 250), attr_record(i));
    s.put<LookupRecord>(NameKey{object(i % 250, i / 250), "n" + std::to_string(i)}, positive(1));
    ASSERT_LE(memory_bytes(s.usage()), opts.memory_bytes);
  }
  // A listing bigger than a shard's share is not kept in memory, yet readable.
  ListingRecord big;
  for (int i = 0; i < 2000; ++i) big.entries.push_back({std::uint64_t(i + 1), 1, "entry-name-" + std::to_string(i), {}});
  s.put<ListingRecord>(object(1), big);
  auto u = s.usage();
  EXPECT_LE(memory_bytes(u), opts.memory_bytes);
  EXPECT_GT(memory_bytes(u), opts.memory_bytes / 2);  // positive control: it is used
  EXPECT_GT(table(u, "attrs").memory_entries, 0u);
  EXPECT_GT(table(u, "lookups").memory_entries, 0u);
  EXPECT_GT(u.evicted_memory, 5000u);
  EXPECT_EQ(s.peek<ListingRecord>(object(1)).value->entries.size(), 2000u);
  s.flush();
  EXPECT_EQ(s.get<ListingRecord>(object(1))->entries.size(), 2000u);
  EXPECT_EQ(s.get<AttrRecord>(object(0, 0))->seq, 0u);  // evicted long ago, read from disk
}

namespace {

std::uint32_t used_time_on_disk(KvStore& kv, const ObjectKey& o) {
  std::string key, value;
  codec::append_key(key, o);
  if (kv.get(kv.family("meta_attrs"), key, value, KvStore::Tier::Any) != KvStore::Found::Yes) return 0;
  return codec::value_used_time(value).value_or(0);
}

}  // namespace

TEST(MetadataStore, EvictingARecordUsedFromMemoryRewritesItsTime) {
  auto kv = make_memory_store(metadata_families());
  ManualClock clock(1'000'000'000'000);
  auto opts = small_options(&clock);
  opts.memory_bytes = 8 * 1024;
  opts.shards = 1;
  MetadataStore s(*kv, opts);
  s.put<AttrRecord>(object(1), attr_record(1));
  s.put<AttrRecord>(object(2), attr_record(2));
  s.flush();
  const std::uint32_t t0 = 1'000'000'000;
  EXPECT_EQ(used_time_on_disk(*kv, object(1)), t0);

  clock.advance(10 * 60 * 1000);
  ASSERT_EQ(s.peek<AttrRecord>(object(1)).where, Where::Memory);  // served from memory
  const auto evicted_before = s.usage().evicted_memory;
  for (std::uint32_t i = 10; i < 200; ++i) s.put<AttrRecord>(object(i, 2), attr_record(i));
  ASSERT_GT(s.usage().evicted_memory, evicted_before + 2);
  s.flush();
  EXPECT_EQ(used_time_on_disk(*kv, object(1)), t0 + 600);  // rewritten on eviction
  EXPECT_EQ(used_time_on_disk(*kv, object(2)), t0);        // never used: left alone
}

namespace {

std::uint64_t metadata_disk_bytes(KvStore& kv) {
  std::uint64_t n = 0;
  for (const auto& f : metadata_families()) n += kv.usage(kv.family(f)).bytes;
  return n;
}

}  // namespace

TEST(MetadataStore, DiskSweepDropsLeastRecentlyUsedAndNeverTheHandleMap) {
  auto kv = make_memory_store(metadata_families());
  for (int i = 0; i < 20; ++i) kv->put("handle-" + std::to_string(i), "mapping");
  ManualClock clock(1'000'000'000'000);
  {
    MetadataStore s(*kv, small_options(&clock));
    for (std::uint32_t i = 0; i < 200; ++i) s.put<AttrRecord>(object(i, 1), attr_record(i));  // old
    clock.advance(10 * 60 * 1000);
    for (std::uint32_t i = 0; i < 200; ++i) s.put<AttrRecord>(object(i, 2), attr_record(i));  // recent
  }
  const auto total = metadata_disk_bytes(*kv);
  clock.advance(10 * 60 * 1000);

  auto opts = small_options(&clock);
  opts.disk_bytes = total * 95 / 100;
  {
    MetadataStore s(*kv, opts);
    // Five old records are used now (they enter the memory layer, touched).
    for (std::uint32_t i = 0; i < 5; ++i) ASSERT_EQ(s.peek<AttrRecord>(object(i, 1)).where, Where::Memory);
    s.sweep_disk();
    const auto u = s.usage();
    EXPECT_GT(u.evicted_disk, 50u);
    EXPECT_LT(u.evicted_disk, 200u);
    EXPECT_LE(metadata_disk_bytes(*kv), opts.disk_bytes * 80 / 100);
    int old_left = 0, recent_left = 0;
    for (std::uint32_t i = 0; i < 200; ++i) {
      old_left += s.get<AttrRecord>(object(i, 1)) != nullptr;
      recent_left += s.get<AttrRecord>(object(i, 2)) != nullptr;
    }
    EXPECT_EQ(recent_left, 200);
    EXPECT_EQ(old_left, 200 - static_cast<int>(u.evicted_disk));
    for (std::uint32_t i = 0; i < 5; ++i) EXPECT_NE(s.get<AttrRecord>(object(i, 1)), nullptr) << i;
    // Within budget now: a second sweep drops nothing.
    s.sweep_disk();
    EXPECT_EQ(s.usage().evicted_disk, u.evicted_disk);
  }
  {
    opts.disk_bytes = 0;  // everything goes, except the handle map
    MetadataStore s(*kv, opts);
    s.sweep_disk();
    EXPECT_EQ(metadata_disk_bytes(*kv), 0u);
    EXPECT_GT(s.usage().evicted_disk, 200u);
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(kv->get("handle-" + std::to_string(i)), "mapping") << i;
}

TEST(MetadataStore, DiskSweepWorksOnRocksDb) {
  TempDir dir;
  auto kv = open_rocksdb_store(dir / "db", 8, metadata_families());
  kv->put("handle", "mapping");
  ManualClock clock(1'000'000'000'000);
  auto opts = small_options(&clock);
  opts.disk_bytes = 1;  // everything metadata goes
  MetadataStore s(*kv, opts);
  s.on_disk_error([](const std::string& m) { ADD_FAILURE() << m; });
  for (std::uint32_t i = 0; i < 300; ++i) s.put<AttrRecord>(object(i), attr_record(i));
  clock.advance(120'000);
  s.put<AttrRecord>(object(1000), attr_record(1000));
  s.sweep_disk();
  EXPECT_FALSE(s.usage().degraded);
  EXPECT_GE(s.usage().evicted_disk, 300u);
  EXPECT_EQ(s.get<AttrRecord>(object(5)), nullptr);
  EXPECT_EQ(kv->get("handle"), "mapping");
}

TEST(MetadataStore, DiskFailureDegradesToMemoryOnceAndNeverThrows) {
  auto kv = controlled();
  MetadataStore s(*kv, small_options());
  std::atomic<int> calls{0};
  std::string message;
  s.on_disk_error([&](const std::string& m) {
    ++calls;
    message = m;
  });
  s.put<AttrRecord>(object(1), attr_record(1));
  s.flush();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(kv->writes, 1);  // positive control: the disk is used
  EXPECT_FALSE(s.usage().degraded);

  kv->fail_writes = true;
  s.put<AttrRecord>(object(2), attr_record(2));
  s.flush();
  EXPECT_EQ(calls, 1);
  EXPECT_NE(message.find("injected write error"), std::string::npos) << message;
  EXPECT_TRUE(s.usage().degraded);

  // Keeps answering from memory; reads never reach the disk again.
  kv->fail_reads = true;
  EXPECT_EQ(s.peek<AttrRecord>(object(2)).value->seq, 2u);
  EXPECT_EQ(s.peek<AttrRecord>(object(1)).value->seq, 1u);
  EXPECT_EQ(s.peek<AttrRecord>(object(3)).where, Where::Absent);
  EXPECT_EQ(load_now<AttrRecord>(s, object(3)), nullptr);
  s.put<AttrRecord>(object(4), attr_record(4));
  s.erase_object(object(1));
  EXPECT_EQ(s.peek<AttrRecord>(object(1)).where, Where::Absent);
  s.flush();
  s.sweep_disk();
  EXPECT_EQ(s.get<AttrRecord>(object(4))->seq, 4u);
  EXPECT_EQ(calls, 1);
}

TEST(MetadataStore, ReadFailureDegradesAndAHookSetLaterHearsOfIt) {
  auto kv = controlled();
  MetadataStore s(*kv, small_options());
  kv->fail_reads = true;
  EXPECT_EQ(s.peek<AttrRecord>(object(1)).where, Where::Absent);
  EXPECT_TRUE(s.usage().degraded);
  int calls = 0;
  s.on_disk_error([&](const std::string& m) {
    ++calls;
    EXPECT_NE(m.find("injected read error"), std::string::npos) << m;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(load_now<AttrRecord>(s, object(1)), nullptr);
  EXPECT_EQ(calls, 1);
}

TEST(MetadataStore, ConcurrentPutsAndPeeks) {
  auto kv = make_memory_store(metadata_families());
  auto opts = small_options();
  opts.memory_bytes = 32 * 1024;  // evictions and disk reads under way too
  MetadataStore s(*kv, opts);
  constexpr int kThreads = 4, kKeys = 50, kRounds = 20;
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const auto ex = static_cast<std::uint32_t>(t + 1);
      const auto their_ex = static_cast<std::uint32_t>((t + 1) % kThreads + 1);
      for (int round = 0; round < kRounds; ++round) {
        for (int k = 0; k < kKeys; ++k) {
          const auto mine = object(static_cast<std::uint32_t>(k), ex);
          s.put<AttrRecord>(mine, attr_record(static_cast<std::uint32_t>(round)));
          // Others' keys: absent, on disk, or a whole record.
          auto p = s.peek<AttrRecord>(object(static_cast<std::uint32_t>(k), their_ex));
          if (p.where == Where::Memory && p.value->attr != attr_record(static_cast<std::uint32_t>(p.value->seq)).attr)
            ++bad;
          // My own latest write is always visible.
          auto own = s.get<AttrRecord>(mine);
          if (!own || own->seq != static_cast<std::uint64_t>(round)) ++bad;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, 0);
  s.flush();
  for (int t = 0; t < kThreads; ++t)
    for (int k = 0; k < kKeys; ++k)
      EXPECT_EQ(s.get<AttrRecord>(object(static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(t + 1)))->seq,
                static_cast<std::uint64_t>(kRounds - 1));
  EXPECT_GT(s.usage().evicted_memory, 0u);  // the memory layer was under pressure
}

TEST(MetadataStore, ConcurrentUpdatesAreAtomic) {
  auto kv = make_memory_store(metadata_families());
  MetadataStore s(*kv, small_options());
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        s.update<AttrRecord>(object(0, 99), [](const AttrRecord* cur) {
          AttrRecord next = cur ? *cur : AttrRecord{};
          ++next.seq;
          return std::optional<AttrRecord>(next);
        });
        s.put<AttrRecord>(object(static_cast<std::uint32_t>(i % 100), static_cast<std::uint32_t>(t)), attr_record(1));
        (void)s.peek<AttrRecord>(object(0, 99));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(s.peek<AttrRecord>(object(0, 99)).value->seq, static_cast<std::uint64_t>(kThreads * kEach));
  s.flush();
  EXPECT_EQ(s.get<AttrRecord>(object(0, 99))->seq, static_cast<std::uint64_t>(kThreads * kEach));
}

// ---- the per-thread memo (peek_memo.h) ------------------------------------------

TEST(MetadataStoreMemo, RepeatedReadIsServedFromThisThreadsCopy) {
  auto kv = make_memory_store(metadata_families());
  const auto o = object(7);
  for (bool memo : {true, false}) {
    auto opts = small_options();
    opts.thread_memo = memo;
    MetadataStore s(*kv, opts);
    s.put<AttrRecord>(o, attr_record(3));
    auto first = s.peek<AttrRecord>(o);  // from the shard, fills the memo
    // The memo shares the store's record at first, then makes its own copy once
    // the record is used again and again.
    MetadataStore::Peeked<AttrRecord> later;
    for (std::uint32_t i = 0; i < PeekMemo::kCopyAfterUses + 1; ++i) later = s.peek<AttrRecord>(o);
    ASSERT_EQ(later.where, Where::Memory);
    EXPECT_EQ(later.value->attr, attr_record(3).attr);
    if (memo) {
      EXPECT_NE(first.value.get(), later.value.get()) << "the memo should have served its own copy";
    } else {
      EXPECT_EQ(first.value.get(), later.value.get()) << "without the memo, the shard's record";
    }
  }
}

TEST(MetadataStoreMemo, EveryKindOfChangeIsSeenAtOnce) {
  auto kv = make_memory_store(metadata_families());
  auto opts = small_options();
  opts.shards = 1;  // every key in the shard the memo watches
  MetadataStore s(*kv, opts);
  const auto o = object(1), other = object(2);
  auto read_twice = [&](const ObjectKey& k) {
    s.peek<AttrRecord>(k);
    return s.peek<AttrRecord>(k);  // the memo's answer, when it has one
  };

  s.put<AttrRecord>(o, attr_record(1));
  EXPECT_EQ(read_twice(o).value->seq, 1u);
  s.put<AttrRecord>(o, attr_record(2));
  EXPECT_EQ(read_twice(o).value->seq, 2u);

  s.update<AttrRecord>(o, [](const AttrRecord* cur) {
    AttrRecord next = *cur;
    next.seq = 3;
    return std::optional<AttrRecord>(next);
  });
  EXPECT_EQ(read_twice(o).value->seq, 3u);

  s.erase<AttrRecord>(o);
  EXPECT_EQ(s.peek<AttrRecord>(o).where, Where::Absent);

  s.put<AttrRecord>(o, attr_record(4));
  EXPECT_EQ(read_twice(o).value->seq, 4u);
  s.erase_object(o);
  EXPECT_EQ(s.peek<AttrRecord>(o).where, Where::Absent);

  s.put<AttrRecord>(other, attr_record(5));
  EXPECT_EQ(read_twice(other).value->seq, 5u);
  s.erase_export(1);
  EXPECT_EQ(s.peek<AttrRecord>(other).where, Where::Absent);

  // Lookups and ACCESS answers go through the memo too.
  const NameKey name{o, "a.php"};
  s.put<LookupRecord>(name, positive(1));
  s.peek<LookupRecord>(name);
  s.put<LookupRecord>(name, LookupRecord{false, {}, 1, kNever});
  EXPECT_FALSE(s.peek<LookupRecord>(name).value->exists);
}

TEST(MetadataStoreMemo, ChangesMadeByAnotherThreadAreSeen) {
  auto kv = make_memory_store(metadata_families());
  MetadataStore s(*kv, small_options());
  const auto o = object(9);
  constexpr std::uint32_t kRounds = 500;
  s.put<AttrRecord>(o, attr_record(0));
  std::atomic<std::uint32_t> published{0};
  std::atomic<int> stale{0};
  std::thread reader([&] {
    for (;;) {
      const auto seen_before = published.load(std::memory_order_acquire);
      auto p = s.peek<AttrRecord>(o);
      // Whatever was published before the read must be visible in it.
      if (p.where != Where::Memory || p.value->seq < seen_before) ++stale;
      if (seen_before == kRounds) break;
    }
  });
  for (std::uint32_t i = 1; i <= kRounds; ++i) {
    s.put<AttrRecord>(o, attr_record(i));
    published.store(i, std::memory_order_release);
  }
  reader.join();
  EXPECT_EQ(stale, 0);
}
