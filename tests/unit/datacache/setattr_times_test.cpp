// SETATTR of a dirty file's times on the write-back layer: kept with the file and
// sent after its data and COMMIT, not flushed first (a tar unpack: CREATE, WRITE,
// COMMIT, SETATTR times per file, with no origin round trip for the SETATTR); a
// size still orders against the dirty bytes.
#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <algorithm>

#include "tests/unit/datacache/write_back_fixture.h"

namespace nfsgw::writeback::setattr_times_test {

using namespace write_back_fixture;
using nfs3::Proc;
using nfs3::Status;
using nfs3::TimeHow;

constexpr nfs3::Time kOld{1'000'000'000, 5};    // a tar member's mtime, long ago
constexpr nfs3::Time kAtime{1'000'000'100, 7};

nfs3::Sattr times(nfs3::Time atime, nfs3::Time mtime) {
  nfs3::Sattr s;
  s.atime = {TimeHow::ClientTime, atime};
  s.mtime = {TimeHow::ClientTime, mtime};
  return s;
}

/// Where `p` first comes in `seq`, and where it last does (seq.size() when never).
std::size_t first_of(const std::vector<Proc>& seq, Proc p) {
  return static_cast<std::size_t>(std::find(seq.begin(), seq.end(), p) - seq.begin());
}
std::size_t last_of(const std::vector<Proc>& seq, Proc p) {
  const auto it = std::find(seq.rbegin(), seq.rend(), p);
  return it == seq.rend() ? seq.size() : static_cast<std::size_t>(seq.rend() - it - 1);
}

class SetattrTimesTest : public WriteBackTest {
 protected:
  SetattrTimesTest() { file = owned(); }
  /// A file of the fixture's caller (uid 1000).
  nfs3::FileHandle owned() {
    const nfs3::FileHandle fh = origin.add_file("");
    origin.set_owner(fh, 1000);
    return fh;
  }
  nfs3::FileHandle file;
};

TEST_F(SetattrTimesTest, TimesOfADirtyFileAreAnsweredAtOnceAndSentAfterItsData) {
  ASSERT_EQ(origin.attributes(file).uid, 1000u);
  ASSERT_EQ(write(*back, file, 0, std::string(16 << 10, 'u'), nfs3::StableHow::Unstable).status, Status::Ok);
  ASSERT_EQ(commit(*back, file).status, Status::Ok);
  origin.reset_calls();
  const nfs3::Fattr before = getattr(*back, file).attributes;
  const nfs3::SetattrRes s = setattr(*back, file, times(kAtime, kOld));
  ASSERT_EQ(s.status, Status::Ok);
  EXPECT_TRUE(origin.sequence().empty()) << "no origin call for the SETATTR";
  ASSERT_TRUE(s.obj_wcc.after.has_value());
  EXPECT_EQ(s.obj_wcc.after->mtime, kOld);
  EXPECT_EQ(s.obj_wcc.after->atime, kAtime);
  EXPECT_EQ(s.obj_wcc.after->size, 16u << 10);
  EXPECT_NE(s.obj_wcc.after->ctime, before.ctime);  // a change of the file
  // Every export answers them meanwhile.
  for (WriteBack* layer : {back.get(), through.get()}) {
    const nfs3::Fattr a = getattr(*layer, file).attributes;
    EXPECT_EQ(a.mtime, kOld);
    EXPECT_EQ(a.atime, kAtime);
    EXPECT_EQ(a.size, 16u << 10);
  }
  // A mode set meanwhile goes to the origin and keeps them.
  nfs3::Sattr mode;
  mode.mode = 0600;
  const nfs3::SetattrRes m = setattr(*back, file, mode);
  ASSERT_EQ(m.status, Status::Ok);
  EXPECT_EQ(m.obj_wcc.after->mtime, kOld);
  EXPECT_EQ(m.obj_wcc.after->atime, kAtime);

  // The flush: WRITEs, COMMIT, then the SETATTR of the times, as the owner.
  origin.reset_calls();
  flush_by_delay(file);
  const std::vector<Proc> seq = origin.sequence();
  ASSERT_LT(last_of(seq, Proc::Setattr), seq.size());
  EXPECT_LT(last_of(seq, Proc::Write), first_of(seq, Proc::Commit));
  EXPECT_LT(last_of(seq, Proc::Commit), first_of(seq, Proc::Setattr));
  EXPECT_EQ(origin.data(file), std::string(16 << 10, 'u'));
  EXPECT_EQ(origin.attributes(file).mtime, kOld);
  EXPECT_EQ(origin.attributes(file).atime, kAtime);
  EXPECT_EQ(origin.attributes(file).mode & 07777, 0600u);
  // Clean: the origin's attributes, the times among them.
  EXPECT_FALSE(is_dirty(file));
  EXPECT_EQ(getattr(*back, file).attributes.mtime, kOld);
}

// The unpack of many files: no SETATTR, GETATTR or other origin call until the
// flush, and then the times come after each file's data.
TEST_F(SetattrTimesTest, AnUnpackCostsNoOriginCallPerFile) {
  std::vector<nfs3::FileHandle> files;
  for (int i = 0; i < 20; ++i) files.push_back(owned());
  origin.answer_steps(false);
  // The first WRITE of each file asks its attributes and ACCESS below (a metadata
  // cache answers them there); the COMMIT and the SETATTR ask nothing.
  std::size_t setattr_calls = 0, write_calls = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    ASSERT_EQ(write(*back, files[i], 0, std::string(100, 'a' + static_cast<char>(i)),
                    nfs3::StableHow::Unstable).status,
              Status::Ok);
    ASSERT_EQ(commit(*back, files[i]).status, Status::Ok);
    ASSERT_EQ(setattr(*back, files[i], times(kAtime, nfs3::Time{kOld.seconds + static_cast<std::uint32_t>(i), 0}))
                  .status,
              Status::Ok);
    setattr_calls = origin.calls(Proc::Setattr);
    write_calls = origin.calls(Proc::Write);
  }
  EXPECT_EQ(setattr_calls, 0u);
  EXPECT_EQ(write_calls, 0u);
  EXPECT_EQ(origin.calls(Proc::Commit), 0u);
  clock.advance(kDelay + 1);
  pump_until([&] { return std::none_of(files.begin(), files.end(), [&](const auto& f) { return is_dirty(f); }); });
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(origin.data(files[i]), std::string(100, 'a' + static_cast<char>(i)));
    EXPECT_EQ(origin.attributes(files[i]).mtime, (nfs3::Time{kOld.seconds + static_cast<std::uint32_t>(i), 0}));
  }
  EXPECT_EQ(origin.calls(Proc::Setattr), files.size());
}

// A WRITE after the SETATTR sets the mtime anew: the kept one is not sent over it
// (the atime still is).
TEST_F(SetattrTimesTest, AWriteAfterTheTimesSetsTheMtimeAnew) {
  write(*back, file, 0, "first");
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld)).status, Status::Ok);
  const nfs3::WriteRes w = write(*back, file, 5, "second");
  ASSERT_TRUE(w.file_wcc.after.has_value());
  EXPECT_NE(w.file_wcc.after->mtime, kOld);
  EXPECT_EQ(getattr(*back, file).attributes.atime, kAtime);
  flush_by_delay(file);
  EXPECT_EQ(origin.data(file), "firstsecond");
  EXPECT_NE(origin.attributes(file).mtime, kOld);
  EXPECT_EQ(origin.attributes(file).atime, kAtime);
}

// A size set after the times: the file is flushed first, kept times included, and
// the size lands last, so the origin ends with the size's own mtime and no stale
// dirty byte past it.
TEST_F(SetattrTimesTest, ASizeAfterKeptTimesFlushesDataAndTimesFirst) {
  write(*back, file, 0, "0123456789");
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld)).status, Status::Ok);
  origin.reset_calls();
  const nfs3::SetattrRes t = truncate(*back, file, 4);
  ASSERT_EQ(t.status, Status::Ok);
  const std::vector<Proc> seq = origin.sequence();
  ASSERT_GE(std::count(seq.begin(), seq.end(), Proc::Setattr), 2);
  EXPECT_LT(last_of(seq, Proc::Commit), first_of(seq, Proc::Setattr));
  EXPECT_EQ(origin.data(file), "0123");
  EXPECT_NE(origin.attributes(file).mtime, kOld);  // the truncate's, after the times
  EXPECT_FALSE(is_dirty(file));
  clock.advance(kDelay + 1);
  pump_passes();
  EXPECT_EQ(origin.data(file), "0123");
}

// Not the owner, a guard, or a file not dirty: to the origin as before.
TEST_F(SetattrTimesTest, TimesNotKeptGoToTheOriginAfterTheFlush) {
  write(*back, file, 0, "abc");
  origin.reset_calls();
  // Another user's (the origin decides; the fake takes it).
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld), 2000).status, Status::Ok);
  EXPECT_FALSE(is_dirty(file));
  EXPECT_EQ(origin.data(file), "abc");
  EXPECT_EQ(origin.attributes(file).mtime, kOld);
  // A clean file's: straight through.
  origin.reset_calls();
  ASSERT_EQ(setattr(*back, file, times(kAtime, kAtime)).status, Status::Ok);
  EXPECT_EQ(origin.calls(Proc::Setattr), 1u);
}

// `nfsgw flush` waits for kept times too, and a flush_file (a write-through
// export's WRITE) sends them before the WRITE.
TEST_F(SetattrTimesTest, FlushAllAndFlushFileWaitForKeptTimes) {
  write(*back, file, 0, "abc");
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld)).status, Status::Ok);
  auto progress = std::make_shared<FlushProgress>();
  std::optional<FlushOutcome> outcome;
  flusher->flush_all(std::nullopt, progress, [&](FlushOutcome o) { outcome = std::move(o); });
  pump_until([&] { return outcome.has_value(); });
  EXPECT_TRUE(outcome->ok);
  EXPECT_EQ(origin.attributes(file).mtime, kOld);
  EXPECT_FALSE(is_dirty(file));

  write(*back, file, 3, "def");
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld)).status, Status::Ok);
  ASSERT_EQ(write(*through, file, 6, "g").status, Status::Ok);
  EXPECT_EQ(origin.data(file), "abcdefg");
  EXPECT_FALSE(is_dirty(file));
}

// An origin that cannot take the times now (no answer): tried again after the
// backoff, the file dirty until then; one that refuses them for good: dropped.
TEST_F(SetattrTimesTest, KeptTimesAreTriedAgainWhenTheOriginDoesNotAnswer) {
  write(*back, file, 0, "abc");
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld)).status, Status::Ok);
  origin.fail(Proc::Setattr, 1, Status::Jukebox, true);
  clock.advance(kDelay + 1);
  pump_until([&] { return dirty->counts().flushed_bytes == 3; });
  pump_passes();
  EXPECT_TRUE(is_dirty(file)) << origin.calls(Proc::Setattr) << " SETATTRs, " << dirty->counts().retries << " retries";
  EXPECT_EQ(getattr(*back, file).attributes.mtime, kOld);
  clock.advance(1001);  // the first backoff
  pump_until([&] { return !is_dirty(file); });
  EXPECT_EQ(origin.attributes(file).mtime, kOld);

  write(*back, file, 0, "x");
  ASSERT_EQ(setattr(*back, file, times(kOld, kOld)).status, Status::Ok);
  origin.fail(Proc::Setattr, 1, Status::Perm, false);
  flush_by_delay(file);  // clean: not tried again
  EXPECT_EQ(origin.data(file), "xbc");
  EXPECT_EQ(origin.attributes(file).atime, kAtime);  // the first times', not these
}

// Answered times are durable: a power loss right after the SETATTR (everything
// not synced gone, the data's UNSTABLE bytes committed before) takes back
// neither the data nor the times. The restarted nfsgw shows the kept times before
// the origin has them, and sends them after the data.
TEST_F(SetattrTimesTest, KeptTimesSurviveAPowerLossAndAreSentAfterTheRestart) {
  ASSERT_EQ(write(*back, file, 0, "durable", nfs3::StableHow::Unstable).status, Status::Ok);
  ASSERT_EQ(commit(*back, file).status, Status::Ok);
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld)).status, Status::Ok);
  power_loss_restart();
  ASSERT_TRUE(is_dirty(file));
  EXPECT_NE(origin.attributes(file).mtime, kOld);  // not sent yet
  const nfs3::Fattr a = getattr(*back, file).attributes;
  EXPECT_EQ(a.mtime, kOld);
  EXPECT_EQ(a.atime, kAtime);
  EXPECT_EQ(a.size, 7u);
  origin.reset_calls();
  flush_by_delay(file);
  EXPECT_EQ(origin.data(file), "durable");
  EXPECT_EQ(origin.attributes(file).mtime, kOld);
  EXPECT_EQ(origin.attributes(file).atime, kAtime);
  const std::vector<Proc> seq = origin.sequence();
  EXPECT_LT(last_of(seq, Proc::Commit), first_of(seq, Proc::Setattr));
  // Sent: a second power loss brings nothing back (no SETATTR sent again).
  power_loss_restart();
  EXPECT_FALSE(is_dirty(file));
  origin.reset_calls();
  clock.advance(kDelay + 1);
  pump_passes();
  EXPECT_EQ(origin.calls(Proc::Setattr), 0u);
}

// Times left alone once the data went (the origin did not answer their SETATTR):
// a restart finds them in the log and sends them.
TEST_F(SetattrTimesTest, TimesLeftAfterTheDataAreSentAfterARestart) {
  write(*back, file, 0, "abc");
  ASSERT_EQ(setattr(*back, file, times(kAtime, kOld)).status, Status::Ok);
  origin.fail(Proc::Setattr, 1, Status::Jukebox, true);
  clock.advance(kDelay + 1);
  pump_until([&] { return dirty->counts().flushed_bytes == 3; });
  pump_passes();
  ASSERT_TRUE(is_dirty(file));
  ASSERT_EQ(log->dirty_files().size(), 0u);  // only the times are left
  power_loss_restart();
  ASSERT_TRUE(is_dirty(file));
  EXPECT_EQ(getattr(*back, file).attributes.mtime, kOld);
  flush_by_delay(file);
  EXPECT_EQ(origin.attributes(file).mtime, kOld);
  EXPECT_EQ(origin.data(file), "abc");
}

// A log that cannot take the times: nothing is shown or answered that is not
// durable somewhere. The SETATTR goes the way of times not kept (flushed first,
// then to the origin): the origin has them when it is answered OK.
TEST_F(SetattrTimesTest, ALogThatCannotKeepTheTimesSendsThemToTheOriginOrRefuses) {
  write(*back, file, 0, "abc");
  segments.fail_with(EIO);
  const nfs3::SetattrRes r = setattr(*back, file, times(kAtime, kOld));
  segments.fail_with(0);
  EXPECT_GE(dirty->counts().log_errors, 1u);
  if (r.status == Status::Ok) {
    EXPECT_EQ(origin.attributes(file).mtime, kOld);
  } else {
    EXPECT_EQ(r.status, Status::Jukebox);
    EXPECT_NE(getattr(*back, file).attributes.mtime, kOld) << "shown, yet neither logged nor sent";
  }
  EXPECT_FALSE(log->kept_times(key(file)));
}

}  // namespace nfsgw::writeback::setattr_times_test
