// The change journal: objects are written down before a change is sent, crossed
// out only after the store has what the change taught, and a start after a crash
// drops exactly the objects still written down.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "cache/change_journal.h"
#include "cache/metadata_store.h"
#include "controlled_store.h"
#include "record_helpers.h"

using namespace nfsgw;
using namespace nfsgw::cache;
using nfsgw::cache::testing::attr_record;
using nfsgw::cache::testing::ControlledStore;
using nfsgw::cache::testing::object;

namespace {

std::vector<std::string> journal_families() {
  auto f = metadata_families();
  f.emplace_back(change_journal_family());
  return f;
}

MetadataStoreOptions small_store() {
  MetadataStoreOptions o;
  o.memory_bytes = 1 << 20;
  o.disk_threads = 1;
  o.shards = 4;
  return o;
}

std::size_t written_down(KvStore& kv) {
  std::size_t n = 0;
  kv.scan(kv.family(change_journal_family()), {}, {}, [&](std::string_view, std::string_view) { return ++n, true; });
  return n;
}

/// begin(), then waits (bounded) until the objects are durable.
void begin_and_wait(ChangeJournal& j, const std::vector<ObjectKey>& objects) {
  std::promise<void> durable;
  auto f = durable.get_future();
  j.begin(objects, [&] { durable.set_value(); });
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

struct JournalTest : ::testing::Test {
  std::unique_ptr<KvStore> kv = make_memory_store(journal_families());
  MetadataStore store{*kv, small_store()};
  ManualClock clock;
  ChangeJournalOptions options() {
    ChangeJournalOptions o;
    o.clock = &clock;
    o.linger = std::chrono::milliseconds(1000);
    return o;
  }
};

}  // namespace

TEST_F(JournalTest, ObjectsAreOnDiskBeforeTheChangeMayGoOn) {
  ChangeJournal j(*kv, store, options());
  EXPECT_EQ(written_down(*kv), 0u);
  begin_and_wait(j, {object(1), object(2)});
  EXPECT_EQ(written_down(*kv), 2u);
  EXPECT_EQ(j.counts().syncs, 1u);
  j.end({object(1), object(2)});
}

TEST_F(JournalTest, AStartAfterACrashDropsOnlyWhatWasWrittenDown) {
  store.put<AttrRecord>(object(1), attr_record(1));
  store.put<AttrRecord>(object(2), attr_record(2));
  store.flush();
  {
    ChangeJournal crashed(*kv, store, options());
    begin_and_wait(crashed, {object(1)});
    // No end(): the process died while (or just after) the change ran.
  }
  ASSERT_EQ(written_down(*kv), 1u);
  ChangeJournal next(*kv, store, options());
  EXPECT_EQ(next.recover(), 1u);
  EXPECT_EQ(store.get<AttrRecord>(object(1)), nullptr);  // may be stale: asked again
  EXPECT_NE(store.get<AttrRecord>(object(2)), nullptr);  // untouched: stays warm
  EXPECT_EQ(written_down(*kv), 0u);
  EXPECT_EQ(next.recover(), 0u);
}

TEST_F(JournalTest, AnEndedChangeIsCrossedOutOnlyAfterItsLinger) {
  store.put<AttrRecord>(object(1), attr_record(1));
  ChangeJournal j(*kv, store, options());
  begin_and_wait(j, {object(1)});
  j.end({object(1)});
  j.cross_out_now(false);
  EXPECT_EQ(j.counts().crossed, 0u);
  EXPECT_EQ(written_down(*kv), 1u);
  clock.advance(1000);
  j.cross_out_now(false);
  EXPECT_EQ(j.counts().crossed, 1u);
  EXPECT_EQ(written_down(*kv), 0u);
  // Crossed out: the next start keeps the object's records.
  ChangeJournal next(*kv, store, options());
  EXPECT_EQ(next.recover(), 0u);
  EXPECT_NE(store.get<AttrRecord>(object(1)), nullptr);
}

TEST_F(JournalTest, AnObjectStillWrittenDownCostsNoSecondSync) {
  ChangeJournal j(*kv, store, options());
  begin_and_wait(j, {object(1)});
  EXPECT_EQ(j.counts().syncs, 1u);
  bool at_once = false;
  j.begin({object(1)}, [&] { at_once = true; });
  EXPECT_TRUE(at_once);  // durable already: runs inside begin()
  EXPECT_EQ(j.counts().syncs, 1u);
  j.end({object(1)});
  // Still in use by the first change: not crossed out even past its linger.
  clock.advance(5000);
  j.cross_out_now(true);
  EXPECT_EQ(written_down(*kv), 1u);
  j.end({object(1)});
  j.cross_out_now(true);
  EXPECT_EQ(written_down(*kv), 0u);
}

TEST_F(JournalTest, TryBeginBeginsOnlyWhatIsStillWrittenDown) {
  ChangeJournal j(*kv, store, options());
  EXPECT_FALSE(j.try_begin({object(1)}));  // not written down: begin() must write it
  begin_and_wait(j, {object(1)});
  EXPECT_FALSE(j.try_begin({object(1), object(2)}));  // one of them is not
  EXPECT_TRUE(j.try_begin({object(1)}));
  EXPECT_EQ(j.counts().syncs, 1u);
  j.end({object(1)});
  // The change begun by try_begin keeps it written down past its linger.
  clock.advance(5000);
  j.cross_out_now(false);
  EXPECT_EQ(written_down(*kv), 1u);
  j.end({object(1)});
  clock.advance(1000);  // its own linger
  j.cross_out_now(false);
  EXPECT_EQ(written_down(*kv), 0u);
}

TEST_F(JournalTest, AChangeBegunWhileCrossedOutIsWrittenDownAgain) {
  ChangeJournal j(*kv, store, options());
  begin_and_wait(j, {object(1)});
  j.end({object(1)});
  j.cross_out_now(true);
  ASSERT_EQ(written_down(*kv), 0u);
  begin_and_wait(j, {object(1)});
  EXPECT_EQ(written_down(*kv), 1u);
  EXPECT_EQ(j.counts().syncs, 2u);
  j.end({object(1)});
}

TEST(ChangeJournal, AFailingDiskNeverHoldsAChangeBack) {
  auto controlled = std::make_unique<ControlledStore>(make_memory_store(journal_families()));
  ControlledStore& disk = *controlled;
  MetadataStore store(disk, small_store());
  int errors = 0;
  ChangeJournalOptions o;
  o.on_error = [&](const std::string&) { ++errors; };
  ChangeJournal j(disk, store, o);
  disk.fail_writes = true;
  begin_and_wait(j, {object(1)});
  begin_and_wait(j, {object(2)});
  EXPECT_EQ(j.counts().syncs, 0u);
  EXPECT_EQ(errors, 1);  // once per failure
  disk.fail_writes = false;
  begin_and_wait(j, {object(3)});
  EXPECT_EQ(j.counts().syncs, 1u);
  j.end({object(1)});
  j.end({object(2)});
  j.end({object(3)});
}
