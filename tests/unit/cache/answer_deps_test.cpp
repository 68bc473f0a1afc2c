// What an answer given at once rests on (answer_deps.h): the rules of the record
// itself, and what the metadata store records into it while a thread records.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cache/answer_deps.h"
#include "cache/metadata_store.h"
#include "record_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::attr_record;
using nfsgw::cache::testing::object;

namespace {

MetadataStoreOptions one_shard() {
  MetadataStoreOptions o;
  o.memory_bytes = 1 << 20;
  o.disk_threads = 1;
  o.shards = 1;  // every key in the one shard
  return o;
}

TEST(AnswerDeps, HoldsUntilAWatchedCounterMovesOrTheWindowEnds) {
  std::atomic<std::uint64_t> shard{5};
  ManualClock clock(1000);
  AnswerDeps d;
  d.watch(shard, 5);
  d.expires(clock, 1100);
  d.expires(clock, 1500);  // the earliest window counts
  d.vouch();
  ASSERT_TRUE(d.keepable());
  EXPECT_EQ(d.expiry(), 1100);
  EXPECT_TRUE(d.still_holds());
  clock.set(1099);
  EXPECT_TRUE(d.still_holds());
  clock.set(1100);
  EXPECT_FALSE(d.still_holds()) << "the window ended";
  clock.set(1000);
  ++shard;
  EXPECT_FALSE(d.still_holds()) << "the shard changed";
}

TEST(AnswerDeps, OnlyAVouchedAnswerWithNothingRefusedIsKeepable) {
  AnswerDeps d;
  EXPECT_FALSE(d.keepable()) << "nobody vouched";
  d.vouch();
  EXPECT_TRUE(d.keepable());
  d.refuse();
  EXPECT_FALSE(d.keepable());
}

TEST(AnswerDeps, MixedStatesTooManyWatchesAndTwoClocksAreRefused) {
  std::atomic<std::uint64_t> c{1};
  AnswerDeps mixed;
  mixed.vouch();
  mixed.watch(c, 1);
  mixed.watch(c, 1);  // the same state twice is fine
  EXPECT_TRUE(mixed.keepable());
  EXPECT_EQ(mixed.watches(), 1u);
  mixed.watch(c, 2);  // read again after a change: two states in one answer
  EXPECT_FALSE(mixed.keepable());

  std::atomic<std::uint64_t> many[AnswerDeps::kMaxWatches + 1];
  AnswerDeps full;
  full.vouch();
  for (std::size_t i = 0; i < AnswerDeps::kMaxWatches; ++i) full.watch(many[i], 0);
  EXPECT_TRUE(full.keepable());
  full.watch(many[AnswerDeps::kMaxWatches], 0);
  EXPECT_FALSE(full.keepable()) << "a dependency that cannot be watched";

  ManualClock a, b;
  AnswerDeps clocks;
  clocks.vouch();
  clocks.expires(a, 10);
  EXPECT_TRUE(clocks.keepable());
  clocks.expires(b, 10);
  EXPECT_FALSE(clocks.keepable());
}

TEST(AnswerDeps, ReplayBumpsEveryRecordedCounterOnce) {
  std::atomic<std::uint64_t> calls{0}, hits{0};
  AnswerDeps d;
  d.bump(calls);
  d.bump(hits);
  d.replay_bumps();
  d.replay_bumps();
  EXPECT_EQ(calls.load(), 2u);
  EXPECT_EQ(hits.load(), 2u);
}

TEST(AnswerDeps, RecordingIsPerThreadAndEndsWithItsScope) {
  EXPECT_EQ(AnswerDeps::current(), nullptr);
  AnswerDeps d;
  {
    AnswerDeps::Recording r(d);
    EXPECT_EQ(AnswerDeps::current(), &d);
    AnswerDeps* seen_elsewhere = &d;
    std::thread([&] { seen_elsewhere = AnswerDeps::current(); }).join();
    EXPECT_EQ(seen_elsewhere, nullptr);
  }
  EXPECT_EQ(AnswerDeps::current(), nullptr);
}

TEST(AnswerDepsStore, APeekWatchesItsShardAndAChangeOfTheRecordEndsIt) {
  auto kv = make_memory_store(metadata_families());
  MetadataStore s(*kv, one_shard());
  const auto o = object(1), other = object(2);
  s.put<AttrRecord>(o, attr_record(1));
  for (int pass = 0; pass < 3; ++pass) {  // from the shard, then from the thread's memo
    AnswerDeps d;
    {
      AnswerDeps::Recording r(d);
      ASSERT_TRUE(s.peek<AttrRecord>(o).value);
    }
    EXPECT_EQ(d.watches(), 1u) << "pass " << pass;
    EXPECT_TRUE(d.still_holds());
  }
  AnswerDeps d;
  {
    AnswerDeps::Recording r(d);
    (void)s.peek<AttrRecord>(o);
  }
  s.put<AttrRecord>(o, attr_record(2));
  EXPECT_FALSE(d.still_holds()) << "the record changed";

  AnswerDeps absent;  // an absence is watched too: a record that arrives ends it
  {
    AnswerDeps::Recording r(absent);
    EXPECT_FALSE(s.peek<AttrRecord>(other).value);
  }
  EXPECT_EQ(absent.watches(), 1u);
  EXPECT_TRUE(absent.still_holds());
  s.put<AttrRecord>(other, attr_record(3));
  EXPECT_FALSE(absent.still_holds());

  AnswerDeps erased;
  {
    AnswerDeps::Recording r(erased);
    (void)s.peek<AttrRecord>(o);
  }
  s.erase_object(o);
  EXPECT_FALSE(erased.still_holds()) << "the object was dropped";
}

TEST(AnswerDepsStore, NoRecordingNoWatches) {
  auto kv = make_memory_store(metadata_families());
  MetadataStore s(*kv, one_shard());
  s.put<AttrRecord>(object(1), attr_record(1));
  AnswerDeps d;
  (void)s.peek<AttrRecord>(object(1));  // not recording: d sees nothing
  EXPECT_EQ(d.watches(), 0u);
  {
    AnswerDeps::Recording r(d);
    (void)s.peek<AttrRecord>(object(1));
  }
  EXPECT_EQ(d.watches(), 1u) << "positive control";
}

}  // namespace
