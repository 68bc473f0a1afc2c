// The write-back layer (gateway/writeback/) over FakeFiles (write_back_fixture.h).
#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <random>

#include "tests/unit/datacache/write_back_fixture.h"

namespace nfsgw::writeback::write_back_test {

using namespace write_back_fixture;
using nfs3::Proc;
using nfs3::Status;
using nfsgw::test::as;
using nfsgw::test::invoke;

TEST_F(WriteBackTest, AStableWriteIsAnsweredFromTheLogAndSeenAtOnceThroughEveryExport) {
  const auto fh = origin.add_file("hello world");
  const nfs3::Fattr was = origin.attributes(fh);
  const nfs3::WriteRes w = write(*back, fh, 6, "THERE!!");
  ASSERT_EQ(w.status, Status::Ok);
  EXPECT_FALSE(w.gateway_status);
  EXPECT_EQ(w.count, 7u);
  EXPECT_EQ(w.committed, nfs3::StableHow::FileSync);
  EXPECT_EQ(w.verf, log_verifier());
  EXPECT_EQ(origin.calls(Proc::Write), 0u);
  ASSERT_TRUE(w.file_wcc.before && w.file_wcc.after);
  EXPECT_EQ(w.file_wcc.before->size, 11u);
  EXPECT_EQ(w.file_wcc.after->size, 13u);
  EXPECT_NE(w.file_wcc.after->mtime, was.mtime);

  // The other export (write-through) shows the same bytes and attributes.
  for (WriteBack* layer : {back.get(), through.get()}) {
    const nfs3::GetattrRes a = getattr(*layer, fh);
    ASSERT_EQ(a.status, Status::Ok);
    EXPECT_EQ(a.attributes.size, 13u);
    EXPECT_EQ(a.attributes.mtime, w.file_wcc.after->mtime);
    const nfs3::ReadRes r = read(*layer, fh, 0, 100);
    ASSERT_EQ(r.status, Status::Ok);
    EXPECT_EQ(text_of(r), "hello THERE!!");
    EXPECT_TRUE(r.eof);
    ASSERT_TRUE(r.file_attributes);
    EXPECT_EQ(r.file_attributes->size, 13u);
  }
  EXPECT_EQ(origin.data(fh), "hello world");
  EXPECT_EQ(dirty->counts().writes_absorbed, 1u);
}

TEST_F(WriteBackTest, EachWriteMovesTheTimesForward) {
  const auto fh = origin.add_file("0123456789");
  const nfs3::WriteRes a = write(*back, fh, 0, "a");
  const nfs3::WriteRes b = write(*back, fh, 1, "b");  // same millisecond of the manual clock
  ASSERT_TRUE(a.file_wcc.after && b.file_wcc.before && b.file_wcc.after);
  EXPECT_EQ(b.file_wcc.before->mtime, a.file_wcc.after->mtime);
  EXPECT_NE(b.file_wcc.after->mtime, a.file_wcc.after->mtime);
  EXPECT_EQ(b.file_wcc.after->size, 10u);
}

TEST_F(WriteBackTest, AfterARestartADirtyFileShowsTimesNoEarlierSnapshotHad) {
  // A data cache above keeps blocks under (size, mtime, ctime): a snapshot
  // rebuilt after a restart must not repeat the times of one that showed other
  // bytes (the origin's, with the dirty size, were the first snapshot's base).
  const auto fh = origin.add_file(std::string(100, 'o'));
  write(*back, fh, 200, "first");
  const nfs3::Fattr first = getattr(*back, fh).attributes;
  clock.advance(500);  // a restart takes time
  power_loss_restart();
  const nfs3::Fattr rebuilt = getattr(*back, fh).attributes;
  EXPECT_EQ(rebuilt.size, 205u);
  EXPECT_NE(rebuilt.mtime, origin.attributes(fh).mtime);
  EXPECT_NE(rebuilt.mtime, first.mtime);
  clock.advance(-10);  // even with a clock that went back a little
  write(*back, fh, 200, "again");
  const nfs3::Fattr again = getattr(*back, fh).attributes;
  EXPECT_NE(again.mtime, first.mtime);
  EXPECT_NE(again.mtime, rebuilt.mtime);
}

TEST_F(WriteBackTest, ARangeHeldWhollyInTheLogIsReadWithoutTheOrigin) {
  const auto fh = origin.add_file(std::string(100, 'o'));
  write(*back, fh, 10, std::string(20, 'd'));
  origin.reset_calls();
  const nfs3::ReadRes r = read(*back, fh, 12, 10);
  ASSERT_EQ(r.status, Status::Ok);
  EXPECT_EQ(text_of(r), std::string(10, 'd'));
  EXPECT_FALSE(r.eof);
  EXPECT_EQ(origin.calls(Proc::Read), 0u);
  // A range that is only partly dirty asks the origin for the rest.
  EXPECT_EQ(text_of(read(*back, fh, 5, 10)), "oooooddddd");
  EXPECT_EQ(origin.calls(Proc::Read), 1u);
}

TEST_F(WriteBackTest, AStableWriteSurvivesAPowerLossAndAnUnstableOneOnceCommitted) {
  const auto fh = origin.add_file(std::string(20, '.'));
  write(*back, fh, 0, "stable", nfs3::StableHow::FileSync);
  write(*back, fh, 10, "unstable", nfs3::StableHow::Unstable);
  const nfs3::WriteVerf before = log_verifier();
  power_loss_restart();
  // The unstable write may be lost, so the verifier changed: the client resends it.
  EXPECT_NE(log_verifier(), before);
  EXPECT_TRUE(is_dirty(fh));
  EXPECT_EQ(text_of(read(*back, fh, 0, 6)), "stable");

  write(*back, fh, 10, "unstable", nfs3::StableHow::Unstable);
  const nfs3::CommitRes c = commit(*back, fh);
  ASSERT_EQ(c.status, Status::Ok);
  EXPECT_EQ(c.verf, log_verifier());
  power_loss_restart();
  EXPECT_EQ(text_of(read(*back, fh, 0, 20)), "stable....unstable..");
  // And it reaches the origin.
  flush_by_delay(fh);
  EXPECT_EQ(origin.data(fh), "stable....unstable..");
}

TEST_F(WriteBackTest, TheFlushWaitsForTheDelayThenCommitsAndTheFileIsClean) {
  const auto fh = origin.add_file("hello world");
  write(*back, fh, 6, "THERE!!");
  clock.advance(kDelay - 1000);
  pump_passes();
  EXPECT_EQ(origin.calls(Proc::Write), 0u);
  EXPECT_TRUE(is_dirty(fh));
  flush_by_delay(fh);
  EXPECT_EQ(origin.data(fh), "hello THERE!!");
  EXPECT_GE(origin.calls(Proc::Commit), 1u);
  const WriteBackCounts c = dirty->counts();
  EXPECT_EQ(c.flushed_files, 1u);
  EXPECT_EQ(c.flushed_bytes, 7u);
  EXPECT_EQ(c.dirty_bytes, 0u);
  // Clean: attributes are the origin's again.
  EXPECT_EQ(getattr(*back, fh).attributes, origin.attributes(fh));
}

TEST_F(WriteBackTest, AFlushThatMeetsAnOriginRestartSendsEverythingAgain) {
  const auto fh = origin.add_file(std::string(10, '.'));
  write(*back, fh, 0, "0123456789abcdef");
  origin.hold(Proc::Write);
  clock.advance(kDelay + 1);
  pump_until([&] { return origin.held(Proc::Write) == 1; });
  // The origin took the WRITE and restarts before the COMMIT: what it took is lost.
  origin.restart(fh, std::string(10, '.'));
  origin.release(Proc::Write);
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(origin.data(fh), "0123456789abcdef");
  EXPECT_EQ(dirty->counts().verifier_changes, 1u);
}

TEST_F(WriteBackTest, AFileGoneAtTheOriginHasItsBytesDropped) {
  const auto fh = origin.add_file("abc");
  write(*back, fh, 0, "xyz");
  origin.fail(Proc::Write, 1, Status::Stale, false);
  flush_by_delay(fh);
  EXPECT_EQ(dirty->counts().stale_dropped, 1u);
  EXPECT_EQ(log->dirty_end(key(fh)), std::nullopt);
  EXPECT_EQ(origin.data(fh), "abc");
}

TEST_F(WriteBackTest, AFailedFlushIsTriedAgainAfterItsBackoff) {
  const auto fh = origin.add_file("abc");
  write(*back, fh, 0, "xyz");
  origin.fail(Proc::Write, 1, Status::Jukebox, true);
  clock.advance(kDelay + 1);
  pump_until([&] { return dirty->counts().retries == 1; });
  pump_passes();
  EXPECT_TRUE(is_dirty(fh));
  EXPECT_EQ(origin.data(fh), "abc");
  clock.advance(1001);  // the first backoff
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(origin.data(fh), "xyz");
}

TEST_F(WriteBackTest, AWriteThroughAnotherExportLandsAfterTheDirtyBytes) {
  const auto fh = origin.add_file("xxxxxxxx");
  write(*back, fh, 0, "AAAA");
  const nfs3::WriteRes w = write(*through, fh, 2, "BB");
  ASSERT_EQ(w.status, Status::Ok);
  EXPECT_EQ(w.verf, origin.verifier());  // the origin's answer
  EXPECT_FALSE(is_dirty(fh));
  clock.advance(kDelay + 1);
  pump_passes();
  EXPECT_EQ(origin.data(fh), "AABBxxxx");
}

TEST_F(WriteBackTest, ASizeSetOnADirtyFileIsNeverUndoneByItsFlush) {
  const auto fh = origin.add_file("0123456789");
  write(*back, fh, 8, "ABCDEF");
  const nfs3::SetattrRes s = truncate(*back, fh, 5);
  ASSERT_EQ(s.status, Status::Ok);
  clock.advance(kDelay + 1);
  pump_passes();
  EXPECT_EQ(origin.data(fh), "01234");
  EXPECT_EQ(getattr(*back, fh).attributes.size, 5u);
  EXPECT_FALSE(is_dirty(fh));
}

TEST_F(WriteBackTest, AStepAnswerIsNotGivenAgainOnceTheFileIsDirty) {
  origin.answer_steps(true);
  const auto fh = origin.add_file("abc");
  const CallContext ctx = as(1000);
  Now<nfs3::GetattrRes> n = back->getattr_now(ctx, nfs3::GetattrArgs{fh});
  ASSERT_TRUE(n);
  ASSERT_TRUE(n.basis.keepable());
  EXPECT_TRUE(n.basis.still_holds());
  write(*back, fh, 3, "d");
  EXPECT_FALSE(n.basis.still_holds());
  // A dirty file's steps pass (its coroutine answers from the snapshot).
  EXPECT_FALSE(back->getattr_now(ctx, nfs3::GetattrArgs{fh}));
  EXPECT_FALSE(through->access_now(ctx, nfs3::AccessArgs{fh, nfs3::access::Read}));
  // Another file's answers still come at once.
  const auto other = origin.add_file("zzz");
  EXPECT_TRUE(back->getattr_now(ctx, nfs3::GetattrArgs{other}));
}

TEST_F(WriteBackTest, AFullLogAnswersJukeboxAfterItsWaitAndTakesWritesOnceFlushed) {
  close();
  open(/*budget=*/6 << 10, /*segment=*/1 << 10);
  const auto fh = origin.add_file("");
  origin.hold(Proc::Write);  // the flush cannot make room
  ASSERT_EQ(write(*back, fh, 0, std::string(3000, 'a')).status, Status::Ok);
  const nfs3::WriteRes full = write(*back, fh, 3000, std::string(4000, 'b'));
  EXPECT_EQ(full.status, Status::Jukebox);
  EXPECT_TRUE(full.gateway_status);
  EXPECT_EQ(dirty->counts().budget_jukebox, 1u);
  origin.release(Proc::Write);
  pump_until([&] { return !is_dirty(fh); });  // urgent: no waiting for the delay
  EXPECT_EQ(origin.data(fh), std::string(3000, 'a'));
  EXPECT_EQ(write(*back, fh, 3000, std::string(4000, 'b')).status, Status::Ok);
}

TEST_F(WriteBackTest, ALogThatCannotBeWrittenAnswersJukeboxAndLosesNothingAcknowledged) {
  const auto fh = origin.add_file("....");
  ASSERT_EQ(write(*back, fh, 0, "ok").status, Status::Ok);
  segments.fail_with(ENOSPC);
  const nfs3::WriteRes w = write(*back, fh, 2, "no");
  EXPECT_EQ(w.status, Status::Jukebox);
  EXPECT_TRUE(w.gateway_status);
  EXPECT_GE(dirty->counts().log_errors, 1u);
  segments.fail_with(0);
  EXPECT_EQ(text_of(read(*back, fh, 0, 4)), "ok..");
  flush_by_delay(fh);
  EXPECT_EQ(origin.data(fh), "ok..");
}

TEST_F(WriteBackTest, AWriteOfWhatIsNotARegularFileGoesToTheOrigin) {
  const auto dir = origin.add_dir();
  write(*back, dir, 0, "x");
  EXPECT_EQ(origin.calls(Proc::Write), 1u);
  EXPECT_FALSE(is_dirty(dir));
}

TEST_F(WriteBackTest, FlushAllEndsOnceEverythingDirtyBeforeItIsCommitted) {
  const auto a = origin.add_file("aaaa"), b = origin.add_file("bbbb");
  write(*back, a, 0, "AA");
  write(*back, b, 0, "BB");
  auto progress = std::make_shared<FlushProgress>();
  std::optional<FlushOutcome> outcome;
  flusher->flush_all(std::nullopt, progress, [&](FlushOutcome o) { outcome = std::move(o); });
  pump_until([&] { return outcome.has_value(); });  // no delay waited for
  EXPECT_TRUE(outcome->ok) << outcome->message;
  EXPECT_EQ(origin.data(a), "AAaa");
  EXPECT_EQ(origin.data(b), "BBbb");
  EXPECT_EQ(progress->files_left.load(), 0u);
  EXPECT_EQ(progress->bytes_flushed.load(), 4u);
}

// has(), attributes() and clean_count() answer without the lock while no file of
// a key's stripe is dirty: with more files than stripes, every answer must still
// be the entry's, whichever files of the same stripe come and go.
TEST_F(WriteBackTest, EveryFileIsSeenDirtyExactlyWhileItHasAnEntryWhateverItsStripeHolds) {
  constexpr int kFiles = 4 * static_cast<int>(DirtyFiles::kStripes);
  std::vector<cache::ObjectKey> keys;
  for (int i = 0; i < kFiles; ++i) {
    const std::string id = "stripe-file-" + std::to_string(i);
    keys.push_back(key(nfs3::FileHandle(std::span(reinterpret_cast<const std::uint8_t*>(id.data()), id.size()))));
  }
  nfs3::Fattr base;
  base.type = nfs3::FileType::Reg;
  std::vector<int> writing(kFiles, 0);
  std::mt19937 rng(20261206);
  int dirty_seen = 0;
  for (int step = 0; step < 4000; ++step) {
    const int i = static_cast<int>(rng() % kFiles);
    if (writing[i] > 0 && rng() % 2 == 0) {
      dirty->abort_write(keys[i]);
      --writing[i];
    } else if (writing[i] < 3) {
      dirty->begin_write(keys[i], base);
      ++writing[i];
    }
    const int j = static_cast<int>(rng() % kFiles);
    ASSERT_EQ(dirty->has(keys[j]), writing[j] > 0) << "file " << j << " at step " << step;
    ASSERT_EQ(dirty->attributes(keys[j]).has_value(), writing[j] > 0) << "file " << j << " at step " << step;
    ASSERT_EQ(dirty->clean_count(keys[j]).has_value(), writing[j] > 0) << "file " << j << " at step " << step;
    dirty_seen += writing[j] > 0;
  }
  EXPECT_GT(dirty_seen, 100);  // the dirty side of the check was exercised
  for (int i = 0; i < kFiles; ++i)
    while (writing[i]-- > 0) dirty->abort_write(keys[i]);
  for (int i = 0; i < kFiles; ++i) EXPECT_FALSE(dirty->has(keys[i])) << "file " << i;
  EXPECT_FALSE(dirty->any());
}

// Dirty bytes decide a file's size and mtime, nothing else: the link count after
// a LINK or after a REMOVE of another of its names, and a mode, are the origin's,
// through every export, while the file stays dirty (the kernel client's suite saw
// nlink 1 after five LINKs of a dirty file).
TEST_F(WriteBackTest, ADirtyFileShowsWhatTheOriginSaysOfAllButItsDataAfterLinkAndRemove) {
  const auto fh = origin.add_file("aaaa");
  const auto dir = origin.add_dir();
  ASSERT_EQ(write(*back, fh, 0, "BBBBBB").status, Status::Ok);
  ASSERT_TRUE(is_dirty(fh));
  for (int i = 0; i < 5; ++i) {
    nfs3::LinkArgs la{fh, nfs3::DirOpArgs{dir, "name-" + std::to_string(i)}};
    const nfs3::LinkRes lr = run(invoke(*back, &Nfs3Program::link, as(1000), std::move(la)));
    ASSERT_EQ(lr.status, Status::Ok);
    ASSERT_TRUE(lr.file_attributes.has_value());
    EXPECT_EQ(lr.file_attributes->nlink, static_cast<std::uint32_t>(2 + i));
    EXPECT_EQ(lr.file_attributes->size, 6u);  // the dirty size, in the LINK reply too
  }
  for (WriteBack* layer : {back.get(), through.get()}) {
    const nfs3::GetattrRes g = getattr(*layer, fh);
    ASSERT_EQ(g.status, Status::Ok);
    EXPECT_EQ(g.attributes.nlink, 6u);
    EXPECT_EQ(g.attributes.size, 6u);
  }
  // A REMOVE's reply names no file: every dirty file's link count is asked again.
  origin.unlink_on_remove(fh);
  nfs3::RemoveArgs ra{nfs3::DirOpArgs{dir, "name-0"}};
  ASSERT_EQ(run(invoke(*back, &Nfs3Program::remove, as(1000), std::move(ra))).status, Status::Ok);
  // Until then a reply without the file's attributes gets none from the snapshot.
  nfs3::PostOpAttr none;
  EXPECT_FALSE(dirty->patch(key(fh), none));
  EXPECT_FALSE(none.has_value());
  const nfs3::GetattrRes after_remove = getattr(*back, fh);
  ASSERT_EQ(after_remove.status, Status::Ok);
  EXPECT_EQ(after_remove.attributes.nlink, 5u);
  EXPECT_EQ(after_remove.attributes.size, 6u);
  EXPECT_TRUE(is_dirty(fh));
  // Asked once: the next GETATTR is the snapshot's again, with no origin call.
  origin.reset_calls();
  EXPECT_EQ(getattr(*back, fh).attributes.nlink, 5u);
  EXPECT_EQ(origin.calls(Proc::Getattr), 0u);
  // When the origin cannot answer after a REMOVE, the snapshot still does.
  origin.unlink_on_remove(fh);
  nfs3::RemoveArgs rb{nfs3::DirOpArgs{dir, "name-1"}};
  ASSERT_EQ(run(invoke(*back, &Nfs3Program::remove, as(1000), std::move(rb))).status, Status::Ok);
  origin.fail(Proc::Getattr, 1, Status::Jukebox, true);
  const nfs3::GetattrRes outage = getattr(*back, fh);
  ASSERT_EQ(outage.status, Status::Ok);
  EXPECT_EQ(outage.attributes.size, 6u);
  EXPECT_EQ(read(*back, fh, 0, 10).data.size(), 6u);
}

// The difftest's write-back faults (docs/difftest.md): a SETATTR of the mode keeps
// the dirty mtime, a failed SETATTR answers the dirty file as nfsgw shows it, and
// a file whose last name is removed through nfsgw is gone for GETATTR and READ.
TEST_F(WriteBackTest, SetattrAndRemoveOfADirtyFileAnswerAsNfsgwShowsIt) {
  const auto fh = origin.add_file("aaaa");
  const auto dir = origin.add_dir();
  ASSERT_EQ(write(*back, fh, 0, "BBBBBB").status, Status::Ok);
  const nfs3::Fattr dirty = getattr(*back, fh).attributes;
  ASSERT_EQ(dirty.size, 6u);
  nfs3::SetattrArgs chmod;
  chmod.object = fh;
  chmod.new_attributes.mode = 0600;
  const nfs3::SetattrRes ok = run(invoke(*back, &Nfs3Program::setattr, as(1000), nfs3::SetattrArgs(chmod)));
  ASSERT_EQ(ok.status, Status::Ok);
  ASSERT_TRUE(ok.obj_wcc.after.has_value());
  EXPECT_EQ(ok.obj_wcc.after->mode & 07777, 0600u);
  EXPECT_EQ(ok.obj_wcc.after->mtime, dirty.mtime);  // not the origin's older one
  EXPECT_EQ(ok.obj_wcc.after->size, 6u);
  EXPECT_EQ(getattr(*through, fh).attributes.mtime, dirty.mtime);
  origin.fail(Proc::Setattr, 1, Status::Perm, false);
  const nfs3::SetattrRes refused = run(invoke(*through, &Nfs3Program::setattr, as(1000), nfs3::SetattrArgs(chmod)));
  ASSERT_EQ(refused.status, Status::Perm);
  ASSERT_TRUE(refused.obj_wcc.after.has_value());
  EXPECT_EQ(refused.obj_wcc.after->size, 6u);
  EXPECT_EQ(refused.obj_wcc.after->mtime, dirty.mtime);
  // Its only name removed: STALE for GETATTR and READ through every export.
  origin.unlink_on_remove(fh);
  nfs3::RemoveArgs ra{nfs3::DirOpArgs{dir, "only-name"}};
  ASSERT_EQ(run(invoke(*back, &Nfs3Program::remove, as(1000), std::move(ra))).status, Status::Ok);
  EXPECT_EQ(getattr(*through, fh).status, Status::Stale);
  EXPECT_EQ(read(*back, fh, 0, 10).status, Status::Stale);
  EXPECT_EQ(getattr(*back, fh).status, Status::Stale);
}

// After a restart a dirty file's entry has no snapshot until asked; a REMOVE
// before that must not leave the first GETATTR with the origin's size and times
// (the difftest saw the size go back to the origin's after kill -9).
TEST_F(WriteBackTest, AFirstGetattrAfterARestartAndARemoveShowsTheDirtySize) {
  const auto fh = origin.add_file("aaaa");
  const auto dir = origin.add_dir();
  ASSERT_EQ(write(*back, fh, 0, "BBBBBBBB").status, Status::Ok);
  power_loss_restart();  // a stable write: its bytes come back from the log, with no snapshot yet
  ASSERT_TRUE(is_dirty(fh));
  origin.unlink_on_remove(origin.add_file("other"));
  nfs3::RemoveArgs ra{nfs3::DirOpArgs{dir, "other"}};
  ASSERT_EQ(run(invoke(*back, &Nfs3Program::remove, as(1000), std::move(ra))).status, Status::Ok);
  const nfs3::GetattrRes g = getattr(*through, fh);
  ASSERT_EQ(g.status, Status::Ok);
  EXPECT_EQ(g.attributes.size, 8u);
  EXPECT_EQ(read(*back, fh, 0, 20).data.size(), 8u);
}

// `nfsgw flush`'s last line ("flushed: N bytes") counts every batch: the count is
// made before the log shows the bytes clean, which is what the flush waits on (it
// was made after, and a flush that looked in between missed the last batch). The
// window was a few microseconds: many flushes of many files, each checked.
TEST_F(WriteBackTest, FlushAllCountsEveryBatchItWaitedFor) {
  std::vector<nfs3::FileHandle> files;
  for (int i = 0; i < 16; ++i) files.push_back(origin.add_file(""));
  std::uint64_t total = 0;
  for (int round = 0; round < 12; ++round) {
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < files.size(); ++i) {
      const std::string data(1000 + 100 * i + static_cast<std::size_t>(round), 'a' + static_cast<char>(i % 26));
      ASSERT_EQ(write(*back, files[i], 0, data).status, Status::Ok);
      bytes += data.size();
    }
    auto progress = std::make_shared<FlushProgress>();
    std::optional<FlushOutcome> outcome;
    flusher->flush_all(std::nullopt, progress, [&](FlushOutcome o) { outcome = std::move(o); });
    pump_until([&] { return outcome.has_value(); });
    ASSERT_TRUE(outcome->ok) << outcome->message;
    EXPECT_EQ(progress->bytes_flushed.load(), bytes) << "round " << round;
    EXPECT_EQ(outcome->message, "flushed: " + std::to_string(bytes) + " bytes committed at the origin");
    total += bytes;
  }
  EXPECT_EQ(dirty->counts().flushed_bytes, total);
}

}  // namespace nfsgw::writeback::write_back_test
