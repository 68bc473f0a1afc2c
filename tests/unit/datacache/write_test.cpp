// Writes are write-through: the origin's answer goes to the client untouched; the
// cached blocks follow the change when the WCC data shows it was the only one,
// and are dropped otherwise.
#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

using WriteTest = DataCacheTest;

TEST_F(WriteTest, AWritePatchesTheCachedBlockAndTheNextReadIsAHit) {
  start();
  std::string content = pattern(2 * kBlock);
  const auto f = origin.add_file(content);
  ASSERT_EQ(bytes_of(read(f, 0, 2 * kBlock)), content);

  auto w = write(f, kBlock - 3, "written!");  // across the two blocks
  ASSERT_EQ(w.status, Status::Ok);
  EXPECT_EQ(w.count, 8u);
  EXPECT_EQ(origin.calls(Proc::Write), 1u);
  EXPECT_EQ(counts().write_through, 1u);
  EXPECT_EQ(counts().blocks_patched, 1u);
  content.replace(kBlock - 3, 8, "written!");
  ASSERT_EQ(origin.data(f), content);

  origin.reset_calls();
  auto r = read(f, 0, 2 * kBlock);
  EXPECT_EQ(bytes_of(r), content);
  EXPECT_EQ(*r.file_attributes, origin.attributes(f));
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
}

TEST_F(WriteTest, AWriteToAFileWithNoCachedBlocksLeavesTheStoreAlone) {
  start();
  std::string content = pattern(2 * kBlock);
  const auto f = origin.add_file(content);
  ASSERT_EQ(write(f, 10, "first").status, Status::Ok);
  EXPECT_EQ(store->apply_writes.load(), 0) << "no hop to the pool for a file with no blocks";
  EXPECT_EQ(origin.calls(Proc::Write), 1u);
  content.replace(10, 5, "first");
  // Once it has blocks, a WRITE patches them again (on the pool).
  ASSERT_EQ(bytes_of(read(f, 0, 2 * kBlock)), content);
  ASSERT_EQ(write(f, 20, "second").status, Status::Ok);
  EXPECT_EQ(store->apply_writes.load(), 1);
  EXPECT_EQ(counts().blocks_patched, 1u);
  content.replace(20, 6, "second");
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, 2 * kBlock)), content);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
  // Dropped (invalidate), the file goes back to the path without the pool.
  layer->drop_file(f);
  drain_pool();
  ASSERT_EQ(cached_blocks(), 0u);
  ASSERT_EQ(write(f, 30, "third").status, Status::Ok);
  EXPECT_EQ(store->apply_writes.load(), 1);
}

TEST_F(WriteTest, BlocksCachedWhileAWriteWasOutAreDroppedWhenItAnswers) {
  start();
  const auto f = origin.add_file(pattern(kBlock, 1));
  origin.hold(Proc::Write);  // applied by the origin at once, answered when released
  auto w = spawn(invoke(*layer, &Nfs3Program::write, as(0),
                        nfs3::WriteArgs{f, 0, 1, nfs3::StableHow::FileSync, {'x'}}));
  pump_until([&] { return origin.held(Proc::Write) == 1; });
  // The file had no blocks when the WRITE left; a reader caches one meanwhile.
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  ASSERT_EQ(cached_blocks(), 1u);
  origin.release(Proc::Write);
  ASSERT_EQ(wait(w).status, Status::Ok);
  drain_pool();
  EXPECT_EQ(cached_blocks(), 0u) << "no copy of the payload to patch them with: dropped";
  EXPECT_EQ(counts().files_dropped, 1u);
  EXPECT_EQ(read(f, 0, kBlock).data[0], static_cast<std::uint8_t>('x'));
}

TEST_F(WriteTest, AnAppendGrowsTheShortLastBlock) {
  start();
  const auto f = origin.add_file(pattern(100));
  ASSERT_EQ(read(f, 0, 100).count, 100u);
  ASSERT_EQ(write(f, 100, "tail").status, Status::Ok);
  origin.reset_calls();
  auto r = read(f, 0, 200);
  EXPECT_EQ(bytes_of(r), pattern(100) + "tail");
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
}

TEST_F(WriteTest, TheOriginsStabilityAndVerifierPassThrough) {
  start();
  const auto f = origin.add_file(pattern(100));
  auto w = write(f, 0, "x", nfs3::StableHow::Unstable);
  EXPECT_EQ(w.committed, nfs3::StableHow::Unstable);
  EXPECT_EQ(w.verf, FakeFiles::kVerf);
  auto c = run(invoke(*layer, &Nfs3Program::commit, as(0), nfs3::CommitArgs{f, 0, 0}));
  EXPECT_EQ(c.verf, FakeFiles::kVerf);
}

// An origin that restarts may lose UNSTABLE writes it had not committed; its
// attributes may still look like the cached version (the metadata cache's
// window), so the changed write verifier is what drops the blocks.
TEST_F(WriteTest, AChangedVerifierInACommitDropsTheBlocksOfFilesWithUncommittedWrites) {
  start();
  const std::string original = pattern(kBlock, 1);
  const auto f = origin.add_file(original);
  const auto g = origin.add_file(pattern(kBlock, 2));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  ASSERT_EQ(read(g, 0, kBlock).count, kBlock);
  ASSERT_EQ(write(f, 0, "unstable", nfs3::StableHow::Unstable).status, Status::Ok);
  EXPECT_EQ(counts().blocks_patched, 1u);

  origin.restart(f, original);  // the unstable bytes are lost
  auto c = run(invoke(*layer, &Nfs3Program::commit, as(0), nfs3::CommitArgs{f, 0, 0}));
  ASSERT_EQ(c.status, Status::Ok);
  EXPECT_NE(c.verf, FakeFiles::kVerf) << "the client sees the new verifier";
  drain_pool();
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), original) << "served bytes the origin lost";
  EXPECT_EQ(origin.calls(Proc::Read), 1u);
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(g, 0, kBlock)), pattern(kBlock, 2));
  EXPECT_EQ(origin.calls(Proc::Read), 0u) << "a file without uncommitted writes keeps its blocks";
}

TEST_F(WriteTest, AChangedVerifierInAWriteOfAnotherFileDropsTheBlocksOfFilesWithUncommittedWrites) {
  start();
  const std::string original = pattern(kBlock, 3);
  const auto f = origin.add_file(original);
  const auto g = origin.add_file(pattern(kBlock, 4));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  ASSERT_EQ(write(f, 100, "lost", nfs3::StableHow::Unstable).status, Status::Ok);
  origin.restart(f, original);
  auto w = write(g, 0, "x", nfs3::StableHow::FileSync);
  ASSERT_EQ(w.status, Status::Ok);
  EXPECT_EQ(w.verf, origin.verifier());
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), original);
  EXPECT_EQ(origin.calls(Proc::Read), 1u);
}

TEST_F(WriteTest, AFileCommittedUnderTheSameVerifierKeepsItsBlocksAcrossARestart) {
  start();
  const auto f = origin.add_file(pattern(kBlock, 5));
  const auto g = origin.add_file(pattern(kBlock, 6));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  ASSERT_EQ(write(f, 0, "kept", nfs3::StableHow::Unstable).status, Status::Ok);
  auto c = run(invoke(*layer, &Nfs3Program::commit, as(0), nfs3::CommitArgs{f, 0, 0}));
  ASSERT_EQ(c.verf, FakeFiles::kVerf);
  const std::string committed = origin.data(f);
  origin.restart(f, committed);  // nothing lost: it was committed
  ASSERT_EQ(write(g, 0, "y", nfs3::StableHow::FileSync).status, Status::Ok);
  drain_pool();
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), committed);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
}

TEST_F(WriteTest, AWriteWhosePreOpAttributesDoNotMatchDropsTheFile) {
  start();
  const auto f = origin.add_file(pattern(kBlock, 1));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  ASSERT_EQ(cached_blocks(), 1u);
  origin.set_data(f, pattern(kBlock, 2));  // a change the cache did not see
  ASSERT_EQ(write(f, 0, "x").status, Status::Ok);
  EXPECT_EQ(counts().blocks_patched, 0u);
  EXPECT_EQ(cached_blocks(), 0u);
  EXPECT_EQ(read(f, 0, kBlock).data[1], static_cast<std::uint8_t>(pattern(kBlock, 2)[1]));
}

TEST_F(WriteTest, AWriteWithoutWccDataDropsTheFile) {
  start();
  const auto f = origin.add_file(pattern(kBlock));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  origin.omit_wcc(true);
  ASSERT_EQ(write(f, 0, "x").status, Status::Ok);
  EXPECT_EQ(cached_blocks(), 0u);
  EXPECT_EQ(counts().files_dropped, 1u);
}

TEST_F(WriteTest, AWriteLostOnTheWayDropsTheFile) {
  start();
  const auto f = origin.add_file(pattern(kBlock));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  origin.fail(Proc::Write, 1, Status::Jukebox, true);  // it may or may not have been applied
  EXPECT_EQ(write(f, 0, "x").status, Status::Jukebox);
  EXPECT_EQ(cached_blocks(), 0u);
}

TEST_F(WriteTest, ATruncateDropsTheBlocksPastTheNewSize) {
  start();
  const std::string content = pattern(3 * kBlock);
  const auto f = origin.add_file(content);
  ASSERT_EQ(read(f, 0, 3 * kBlock).count, 3 * kBlock);
  ASSERT_EQ(cached_blocks(), 3u);
  ASSERT_EQ(truncate(f, kBlock + 10).status, Status::Ok);
  EXPECT_EQ(cached_blocks(), 1u);  // block 2 is gone; block 1 no longer fits its length

  origin.reset_calls();
  auto r = read(f, 0, 3 * kBlock);
  EXPECT_EQ(bytes_of(r), content.substr(0, kBlock + 10));
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(origin.calls(Proc::Read), 1u);  // block 0 still cached, block 1 fetched at its new length
}

TEST_F(WriteTest, AChmodKeepsTheBlocks) {
  start();
  const auto f = origin.add_file(pattern(2 * kBlock));
  ASSERT_EQ(read(f, 0, 2 * kBlock).count, 2 * kBlock);
  ASSERT_EQ(chmod(f, 0600).status, Status::Ok);
  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, 2 * kBlock)), pattern(2 * kBlock));
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
}

TEST_F(WriteTest, ASetattrWithoutWccDataDropsTheFile) {
  start();
  const auto f = origin.add_file(pattern(kBlock));
  ASSERT_EQ(read(f, 0, kBlock).count, kBlock);
  origin.omit_wcc(true);
  ASSERT_EQ(chmod(f, 0600).status, Status::Ok);
  EXPECT_EQ(cached_blocks(), 0u);
}

}  // namespace
}  // namespace nfsgw::datacache::test
