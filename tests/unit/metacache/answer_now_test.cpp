// The answers given at once (getattr_now, lookup_now, access_now): exactly the
// coroutine's answer when every record is in memory, never an origin call, and
// nothing (nullopt) whenever the coroutine would have to wait, ask or learn.
#include "cache/answer_basis.h"
#include "tests/unit/metacache/metacache_fixture.h"

namespace nfsgw::metacache::test {
namespace {

using AnswerNowTest = MetaCacheTest;

constexpr std::uint32_t kReadLookup = nfs3::access::Read | nfs3::access::Lookup;

nfs3::LookupArgs lookup_args(const nfs3::FileHandle& dir, const std::string& name) {
  return nfs3::LookupArgs{nfs3::DirOpArgs{dir, name}};
}

TEST_F(AnswerNowTest, ColdRecordsGiveNothingAndAskNobody) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  origin.add_file(d, "a.php");
  EXPECT_FALSE(layer->getattr_now(as(kUser), nfs3::GetattrArgs{d}));
  EXPECT_FALSE(layer->lookup_now(as(kUser), lookup_args(d, "a.php")));
  EXPECT_FALSE(layer->access_now(as(kUser), nfs3::AccessArgs{d, kReadLookup}));
  EXPECT_EQ(origin.total_calls(), 0u);
  settle();
  EXPECT_EQ(origin.total_calls(), 0u);  // nothing started in the background either
  EXPECT_EQ(layer->counters().get(Proc::Lookup).calls, 0u);
}

TEST_F(AnswerNowTest, WarmAnswersAreTheCoroutinesAndCountAsHits) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "a.php", 0644, kUser, kUser, "<?php");
  answer_now = false;  // warm through the coroutines only
  const auto want_found = lookup(d, "a.php", as(kUser));
  const auto want_missing = lookup(d, "missing.php", as(kUser));
  const auto want_missing_again = lookup(d, "missing.php", as(kUser));  // ACCESS now known
  const auto want_attr = getattr(f, as(kUser));
  const auto want_access = access(f, kReadLookup, as(kUser));
  ASSERT_EQ(want_found.status, Status::Ok);
  ASSERT_EQ(want_missing.status, Status::NoEnt);  // from the origin
  ASSERT_EQ(want_missing_again.status, Status::NoEnt);
  const auto calls_before = origin.total_calls();
  const auto lookups_before = layer->counters().get(Proc::Lookup);

  auto found = layer->lookup_now(as(kUser), lookup_args(d, "a.php"));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->status, Status::Ok);
  EXPECT_EQ(found->object, want_found.object);
  EXPECT_EQ(found->obj_attributes, want_found.obj_attributes);
  EXPECT_EQ(found->dir_attributes, want_found.dir_attributes);

  auto missing = layer->lookup_now(as(kUser), lookup_args(d, "missing.php"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, Status::NoEnt);
  EXPECT_EQ(missing->dir_attributes, want_missing_again.dir_attributes);

  auto attr = layer->getattr_now(as(kUser), nfs3::GetattrArgs{f});
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr->attributes, want_attr.attributes);

  auto acc = layer->access_now(as(kUser), nfs3::AccessArgs{f, kReadLookup});
  ASSERT_TRUE(acc);
  EXPECT_EQ(acc->access, want_access.access);
  EXPECT_EQ(acc->obj_attributes, want_access.obj_attributes);

  EXPECT_EQ(origin.total_calls(), calls_before);
  const auto lookups = layer->counters().get(Proc::Lookup);
  EXPECT_EQ(lookups.calls, lookups_before.calls + 2);
  EXPECT_EQ(lookups.hits, lookups_before.hits + 2);
}

// A layer above may ask tentatively (the data cache's READ step) and then not use
// the answer: nothing is counted until it replays the answer's bumps.
TEST_F(AnswerNowTest, ATentativeAnswerIsCountedOnlyWhenUsed) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "a.php", 0644, kUser, kUser, "<?php");
  answer_now = false;
  getattr(f, as(kUser));
  access(f, nfs3::access::Read, as(kUser));
  const auto getattrs = layer->counters().get(Proc::Getattr);
  const auto accesses = layer->counters().get(Proc::Access);
  CallContext tentative = as(kUser);
  tentative.tentative = true;

  auto attr = layer->getattr_now(tentative, nfs3::GetattrArgs{f});
  auto acc = layer->access_now(tentative, nfs3::AccessArgs{f, nfs3::access::Read});
  ASSERT_TRUE(attr);
  ASSERT_TRUE(acc);
  EXPECT_EQ(layer->counters().get(Proc::Getattr).hits, getattrs.hits) << "asked, not used: not counted";
  EXPECT_EQ(layer->counters().get(Proc::Access).hits, accesses.hits);
  attr.basis.replay_bumps();
  acc.basis.replay_bumps();
  EXPECT_EQ(layer->counters().get(Proc::Getattr).hits, getattrs.hits + 1) << "used: counted once";
  EXPECT_EQ(layer->counters().get(Proc::Getattr).calls, getattrs.calls + 1);
  EXPECT_EQ(layer->counters().get(Proc::Access).hits, accesses.hits + 1);
  // Positive control: an answer asked for plainly is counted at once.
  ASSERT_TRUE(layer->getattr_now(as(kUser), nfs3::GetattrArgs{f}));
  EXPECT_EQ(layer->counters().get(Proc::Getattr).hits, getattrs.hits + 2);
}

TEST_F(AnswerNowTest, ACallerWhosePermissionIsUnknownGetsNothing) {
  start();
  const auto d = origin.add_dir(origin.root(), "d", 0700, kUser, kUser);
  origin.add_file(d, "a.php");
  lookup(d, "a.php", as(kUser));
  lookup(d, "a.php", as(kUser));
  ASSERT_TRUE(layer->lookup_now(as(kUser), lookup_args(d, "a.php")));
  // Another user: no ACCESS answer of theirs is known, so nothing is answered
  // from the cache (the coroutine asks the origin, which refuses them).
  EXPECT_FALSE(layer->lookup_now(as(kUser + 1), lookup_args(d, "a.php")));
  EXPECT_FALSE(layer->access_now(as(kUser + 1), nfs3::AccessArgs{d, nfs3::access::Lookup}));
}

TEST_F(AnswerNowTest, AnEndedWindowGivesNothing) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "a.php");
  lookup(d, "a.php", as(kUser));
  lookup(d, "a.php", as(kUser));
  ASSERT_TRUE(layer->getattr_now(as(kUser), nfs3::GetattrArgs{f}));
  ASSERT_TRUE(layer->lookup_now(as(kUser), lookup_args(d, "a.php")));
  clock.advance(10'000);  // attr_ttl: the child's attributes must be revalidated
  EXPECT_FALSE(layer->getattr_now(as(kUser), nfs3::GetattrArgs{f}));
  EXPECT_FALSE(layer->lookup_now(as(kUser), lookup_args(d, "a.php")));
  clock.advance(10'000);  // dir_ttl too
  EXPECT_FALSE(layer->lookup_now(as(kUser), lookup_args(d, "a.php")));
}

TEST_F(AnswerNowTest, AStrictExportAnswersNoGetattrOrAccessAtOnce) {
  settings.consistency = cache::Consistency::Strict;
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "a.php");
  getattr(f, as(kUser));
  access(f, kReadLookup, as(kUser));
  EXPECT_FALSE(layer->getattr_now(as(kUser), nfs3::GetattrArgs{f}));
  EXPECT_FALSE(layer->access_now(as(kUser), nfs3::AccessArgs{f, kReadLookup}));
}

// ---- what an answer given at once rests on (cache/answer_basis.h) ----------------
// The dispatcher keeps a copy of such an answer while its basis holds
// (gateway/rpc/answer_memo.h): every way the answer can go stale must end it.

TEST_F(AnswerNowTest, AWarmLookupVouchesAndEndsWithAChangeThroughTheLayer) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  origin.add_file(d, "a.php");
  lookup(d, "a.php", as(kUser));
  lookup(d, "a.php", as(kUser));
  const auto found = layer->lookup_now(as(kUser), lookup_args(d, "a.php"));
  ASSERT_TRUE(found);
  const cache::AnswerBasis& basis = found.basis;
  ASSERT_TRUE(basis.keepable());
  EXPECT_GE(basis.watches(), 1u);
  EXPECT_LE(basis.watches(), 4u);                     // folder, name, ACCESS, child
  EXPECT_EQ(basis.bumps(), 2u);                       // calls and hits
  EXPECT_LE(basis.expiry(), clock.now_ms() + 10'000);  // the child's attr_ttl
  EXPECT_TRUE(basis.still_holds());
  lookup(d, "gone.php", as(kUser));  // learnt from the origin: NOENT
  const auto missing = layer->lookup_now(as(kUser), lookup_args(d, "gone.php"));
  ASSERT_TRUE(missing);
  EXPECT_TRUE(missing.basis.keepable());
  EXPECT_LE(missing.basis.expiry(), clock.now_ms() + 5'000);  // negative_ttl
  ASSERT_EQ(remove(d, "a.php").status, Status::Ok);
  EXPECT_FALSE(basis.still_holds()) << "the name was removed through the layer";
  EXPECT_FALSE(missing.basis.still_holds()) << "the folder changed";
}

TEST_F(AnswerNowTest, AWarmAccessRestsOnItsAccessRecordAndWindow) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "a.php");
  access(f, kReadLookup, as(kUser));
  const auto acc = layer->access_now(as(kUser), nfs3::AccessArgs{f, kReadLookup});
  ASSERT_TRUE(acc);
  ASSERT_TRUE(acc.basis.keepable());
  // The object's attributes and the ACCESS answer: one watch each, or one for
  // both when their keys fall in one shard (the key hash's seed is per process).
  EXPECT_GE(acc.basis.watches(), 1u);
  EXPECT_LE(acc.basis.watches(), 2u);
  EXPECT_TRUE(acc.basis.still_holds());
  ASSERT_EQ(chmod(f, 0600).status, Status::Ok);
  EXPECT_FALSE(acc.basis.still_holds()) << "the mode changed through the layer";
}

TEST_F(AnswerNowTest, AWarmGetattrEndsWithItsWindow) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "a.php");
  getattr(f, as(kUser));
  const auto attr = layer->getattr_now(as(kUser), nfs3::GetattrArgs{f});
  ASSERT_TRUE(attr);
  const cache::AnswerBasis& basis = attr.basis;
  ASSERT_TRUE(basis.keepable());
  EXPECT_TRUE(basis.still_holds());
  clock.advance(9'999);
  EXPECT_TRUE(basis.still_holds());
  clock.advance(1);  // attr_ttl: the coroutine revalidates from here on
  EXPECT_FALSE(basis.still_holds());
  EXPECT_FALSE(layer->getattr_now(as(kUser), nfs3::GetattrArgs{f})) << "positive control: the layer agrees";
}

TEST_F(AnswerNowTest, NothingAnsweredNothingVouched) {
  start();
  const auto d = origin.add_dir(origin.root(), "d");
  const auto f = origin.add_file(d, "a.php");
  const auto cold = layer->getattr_now(as(kUser), nfs3::GetattrArgs{f});
  EXPECT_FALSE(cold);
  EXPECT_FALSE(cold.basis.keepable());
}

}  // namespace
}  // namespace nfsgw::metacache::test
