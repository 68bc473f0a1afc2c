// What an answer given at once rests on (answer_basis.h): the rules of the value
// itself, and the watch every read of the metadata store returns with the record.
#include <gtest/gtest.h>

#include <atomic>

#include "cache/answer_basis.h"
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

TEST(AnswerBasis, HoldsUntilAWatchedCounterMovesOrTheWindowEnds) {
  std::atomic<std::uint64_t> shard{5};
  ManualClock clock(1000);
  AnswerBasis d;
  d.rests_on(Watch{&shard, 5});
  d.until(clock, 1100);
  d.until(clock, 1500);  // the earliest window counts
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

TEST(AnswerBasis, OnlyAVouchedAnswerWithNothingRefusedIsKeepable) {
  AnswerBasis d;
  EXPECT_FALSE(d.keepable()) << "nobody vouched";
  d.vouch();
  EXPECT_TRUE(d.keepable());
  d.refuse();
  EXPECT_FALSE(d.keepable());
}

TEST(AnswerBasis, MixedStatesTooManyWatchesAndTwoClocksAreRefused) {
  std::atomic<std::uint64_t> c{1};
  AnswerBasis mixed;
  mixed.vouch();
  mixed.rests_on(Watch{&c, 1});
  mixed.rests_on(Watch{&c, 1});  // the same state twice is fine
  EXPECT_TRUE(mixed.keepable());
  EXPECT_EQ(mixed.watches(), 1u);
  mixed.rests_on(Watch{&c, 2});  // read again after a change: two states in one answer
  EXPECT_FALSE(mixed.keepable());

  std::atomic<std::uint64_t> many[AnswerBasis::kMaxWatches + 1];
  AnswerBasis full;
  full.vouch();
  for (std::size_t i = 0; i < AnswerBasis::kMaxWatches; ++i) full.rests_on(Watch{&many[i], 0});
  EXPECT_TRUE(full.keepable());
  full.rests_on(Watch{&many[AnswerBasis::kMaxWatches], 0});
  EXPECT_FALSE(full.keepable()) << "a dependency that cannot be watched";

  ManualClock a, b;
  AnswerBasis clocks;
  clocks.vouch();
  clocks.until(a, 10);
  EXPECT_TRUE(clocks.keepable());
  clocks.until(b, 10);
  EXPECT_FALSE(clocks.keepable());
}

TEST(AnswerBasis, CountsOnceAndOnceMoreForEveryReplay) {
  std::atomic<std::uint64_t> calls{0}, hits{0};
  AnswerBasis d;
  d.count(calls);
  d.count(hits);
  EXPECT_EQ(calls.load(), 1u);
  d.replay_bumps();
  d.replay_bumps();
  EXPECT_EQ(calls.load(), 3u);
  EXPECT_EQ(hits.load(), 3u);
}

TEST(AnswerBasis, CountsAnAmountAndReplaysIt) {
  std::atomic<std::uint64_t> bytes{0};
  AnswerBasis d;
  d.count(bytes, 100);
  d.replay_bumps();
  EXPECT_EQ(bytes.load(), 200u);
}

// An answer built from answers of a layer below (the data cache's READ from the
// metadata cache's GETATTR and ACCESS) rests on all they rest on, counts what they
// count, and is refused when one of them could not be kept.
TEST(AnswerBasis, AMergedPartBringsItsWatchesWindowAndCountersButBumpsNothingNow) {
  std::atomic<std::uint64_t> mine{0}, below{0}, calls{0};
  ManualClock clock(1000);
  AnswerBasis part(false, /*count_later=*/true);
  part.rests_on(Watch{&below, 0});
  part.until(clock, 1200);
  part.count(calls, 2);
  part.vouch();
  AnswerBasis d;
  d.rests_on(Watch{&mine, 0});
  d.until(clock, 1500);
  d.merge(part);
  d.vouch();
  ASSERT_TRUE(d.keepable());
  EXPECT_EQ(d.watches(), 2u);
  EXPECT_EQ(d.expiry(), 1200) << "the part's earlier window";
  EXPECT_EQ(calls.load(), 0u) << "merging bumps nothing";
  d.replay_bumps();
  EXPECT_EQ(calls.load(), 2u) << "a copy counts what the part counted";
  ++below;
  EXPECT_FALSE(d.still_holds()) << "rests on the part's watch";

  AnswerBasis unvouched;
  AnswerBasis e;
  e.vouch();
  e.merge(unvouched);
  EXPECT_FALSE(e.keepable()) << "built from an answer nobody vouched for";
  AnswerBasis full;
  for (std::size_t i = 0; i < AnswerBasis::kMaxBumps; ++i) full.count(calls);
  full.vouch();
  AnswerBasis f;
  f.vouch();
  f.count(calls);
  f.merge(full);
  EXPECT_FALSE(f.keepable()) << "more counters than a basis holds";
}

TEST(AnswerBasisStore, APeekWatchesItsShardAndAChangeOfTheRecordEndsIt) {
  auto kv = make_memory_store(metadata_families());
  MetadataStore s(*kv, one_shard());
  const auto o = object(1), other = object(2);
  s.put<AttrRecord>(o, attr_record(1));
  for (int pass = 0; pass < 3; ++pass) {  // from the shard, then from the thread's memo
    AnswerBasis d;
    const auto peeked = s.peek<AttrRecord>(o);
    ASSERT_TRUE(peeked.value);
    d.rests_on(peeked.watch);
    EXPECT_EQ(d.watches(), 1u) << "pass " << pass;
    EXPECT_TRUE(d.still_holds());
  }
  AnswerBasis d;
  d.rests_on(s.peek<AttrRecord>(o).watch);
  s.put<AttrRecord>(o, attr_record(2));
  EXPECT_FALSE(d.still_holds()) << "the record changed";

  AnswerBasis absent;  // an absence is watched too: a record that arrives ends it
  const auto none = s.peek<AttrRecord>(other);
  EXPECT_FALSE(none.value);
  absent.rests_on(none.watch);
  EXPECT_EQ(absent.watches(), 1u);
  EXPECT_TRUE(absent.still_holds());
  s.put<AttrRecord>(other, attr_record(3));
  EXPECT_FALSE(absent.still_holds());

  AnswerBasis erased;
  erased.rests_on(s.peek<AttrRecord>(o).watch);
  s.erase_object(o);
  EXPECT_FALSE(erased.still_holds()) << "the object was dropped";

  // Past the thread's memo, the same record and the same watch.
  AnswerBasis through;
  const auto fresh = s.peek<AttrRecord>(other, /*through_memory_layer=*/true);
  ASSERT_TRUE(fresh.value);
  through.rests_on(fresh.watch);
  EXPECT_TRUE(through.still_holds());
  s.put<AttrRecord>(other, attr_record(4));
  EXPECT_FALSE(through.still_holds());
}

}  // namespace
