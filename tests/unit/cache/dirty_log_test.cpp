// The dirty log (cache/dirty_log.h): what a write-back export acknowledged must
// survive a crash of nfsgw and a power loss, come back exactly, and leave only once
// the origin holds it; and its frames (cache/dirty_record.h) never trust damage.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "cache/dirty_log.h"
#include "cache/dirty_record.h"
#include "cache/log_files.h"
#include "temp_dir.h"

namespace nfsgw::cache {
namespace dirty_log_test {

using Loss = MemoryLogFiles::Loss;

ObjectKey file_key(std::uint8_t n, std::uint32_t space = 7) {
  ObjectKey k;
  k.export_id = space;
  const std::uint8_t fh[] = {0xfe, n, 0x01, 0x02, 0x03, 0x04, 0x05, n};
  k.fh.assign(fh);
  return k;
}

Writer writer(std::uint32_t uid = 1000) { return Writer{uid, 100, {100, 200}}; }

/// `n` bytes, different for every (`tag`, position).
std::string bytes(std::uint32_t tag, std::uint64_t offset, std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((tag * 131 + (offset + i) * 7 + 1) % 251);
  return s;
}

/// Not a value bytes() makes: marks a byte that is not dirty.
constexpr char kClean = '\xff';
std::string clean(std::size_t n) { return std::string(n, kClean); }

/// The file's dirty bytes [0, end) as a string, kClean for bytes that are not dirty.
std::string dirty_view(const DirtyLog& log, const ObjectKey& f, std::uint64_t end) {
  std::string out(end, kClean);
  log.overlay(f, 0, out);
  return out;
}

DirtyLogOptions small_segments(std::uint64_t segment = 4096, std::uint64_t budget = 1 << 20) {
  DirtyLogOptions o;
  o.segment_bytes = segment;
  o.budget_bytes = budget;
  return o;
}

// ---- frames ----------------------------------------------------------------------------

TEST(DirtyRecord, EveryKindRoundTrips) {
  const std::string data = bytes(1, 0, 300);
  for (auto kind : {DirtyRecord::Kind::Write, DirtyRecord::Kind::Truncate, DirtyRecord::Kind::Drop,
                    DirtyRecord::Kind::Start, DirtyRecord::Kind::CleanStop, DirtyRecord::Kind::Clean,
                    DirtyRecord::Kind::Times}) {
    DirtyRecord r;
    r.kind = kind;
    r.seq = 42;
    r.file = file_key(3);
    r.offset = 1ull << 40;
    r.writer = writer(77);
    r.data = data;
    r.length = 5000;
    r.upto = 41;
    r.mtime = nfs3::Time{1700000000, 999999999};
    std::string frame;
    encode_dirty_record(r, frame);
    auto d = decode_dirty_frame(frame);
    ASSERT_TRUE(d.has_value());
    if (kind == DirtyRecord::Kind::Times) {
      EXPECT_EQ(d->record.writer, writer(77));
      EXPECT_FALSE(d->record.atime);
      EXPECT_EQ(d->record.mtime, (nfs3::Time{1700000000, 999999999}));
      EXPECT_EQ(frame.size(), dirty_frame_head_size(r));
      continue;
    }
    if (kind == DirtyRecord::Kind::Clean) {
      EXPECT_EQ(d->record.length, 5000u);
      EXPECT_EQ(d->record.upto, 41u);
    }
    EXPECT_EQ(d->frame_bytes, frame.size());
    EXPECT_EQ(d->record.kind, kind);
    EXPECT_EQ(d->record.seq, 42u);
    EXPECT_EQ(d->record.file, r.file);
    if (kind != DirtyRecord::Kind::Drop) {
      EXPECT_EQ(d->record.offset, 1ull << 40);
    }
    if (kind == DirtyRecord::Kind::Write) {
      EXPECT_EQ(d->record.writer, writer(77));
      EXPECT_EQ(d->record.data, data);
      EXPECT_EQ(frame.substr(d->data_at, data.size()), data);
      EXPECT_EQ(d->data_at, dirty_frame_head_size(r));
    }
  }
}

TEST(DirtyRecord, NoDamagedFrameDecodes) {
  DirtyRecord r;
  r.file = file_key(1);
  r.offset = 4096;
  r.writer = writer();
  const std::string data = bytes(2, 0, 64);
  r.data = data;
  std::string frame;
  encode_dirty_record(r, frame);
  ASSERT_TRUE(decode_dirty_frame(frame));
  // Every prefix is short, every single flipped bit is caught.
  for (std::size_t n = 0; n < frame.size(); ++n) EXPECT_FALSE(decode_dirty_frame(std::string_view(frame).substr(0, n))) << n;
  for (std::size_t i = 0; i < frame.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = frame;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      EXPECT_FALSE(decode_dirty_frame(bad)) << "byte " << i << " bit " << bit;
    }
  // A frame followed by other bytes decodes as itself.
  auto d = decode_dirty_frame(frame + "trailing");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->frame_bytes, frame.size());
}

TEST(DirtyRecord, TimesRecordsCarryEachTimeOnlyWhenKeptAndNoDamagedOneDecodes) {
  for (int which = 0; which < 4; ++which) {
    DirtyRecord r;
    r.kind = DirtyRecord::Kind::Times;
    r.file = file_key(4);
    r.writer = writer(5);
    if (which & 1) r.atime = nfs3::Time{10, 20};
    if (which & 2) r.mtime = nfs3::Time{0, 0};  // the epoch is a time too
    std::string frame;
    encode_dirty_record(r, frame);
    auto d = decode_dirty_frame(frame);
    ASSERT_TRUE(d) << which;
    EXPECT_EQ(d->record.atime, r.atime) << which;
    EXPECT_EQ(d->record.mtime, r.mtime) << which;
    for (std::size_t n = 0; n < frame.size(); ++n) EXPECT_FALSE(decode_dirty_frame(std::string_view(frame).substr(0, n)));
    for (std::size_t i = 0; i < frame.size(); ++i) {
      std::string bad = frame;
      bad[i] = static_cast<char>(bad[i] ^ 0x10);
      EXPECT_FALSE(decode_dirty_frame(bad)) << "byte " << i;
    }
  }
}

TEST(DirtyRecord, TooManyGroupsAreRefused) {
  DirtyRecord r;
  r.writer.gids.assign(kMaxWriterGids + 1, 5);
  std::string frame;
  EXPECT_THROW(encode_dirty_record(r, frame), std::invalid_argument);
}

// ---- the index -----------------------------------------------------------------------------

TEST(DirtyLog, NewestWriteOfEveryByteIsWhatReadsSee) {
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments());
  const ObjectKey f = file_key(1);
  EXPECT_FALSE(log->dirty_end(f));
  ASSERT_EQ(log->write(f, 100, bytes(1, 100, 200), writer(), false), DirtyLog::Appended::Ok);
  ASSERT_EQ(log->write(f, 150, bytes(2, 150, 20), writer(), false), DirtyLog::Appended::Ok);
  ASSERT_EQ(log->write(f, 280, bytes(3, 280, 40), writer(), false), DirtyLog::Appended::Ok);
  std::string want = clean(100) + bytes(1, 100, 50) + bytes(2, 150, 20) + bytes(1, 170, 110) +
                     bytes(3, 280, 40);
  EXPECT_EQ(dirty_view(*log, f, 320), want);
  EXPECT_EQ(log->dirty_end(f), 320u);
  EXPECT_EQ(log->usage().dirty_bytes, 220u);
  EXPECT_EQ(log->usage().dirty_files, 1u);
  // Another file of the same handle in another cache space is another file.
  EXPECT_FALSE(log->dirty_end(file_key(1, 8)));
  // overlay() leaves the bytes it has nothing for alone, and counts what it copied.
  std::string part(50, 'x');
  EXPECT_EQ(log->overlay(f, 80, part), 30u);
  EXPECT_EQ(part, std::string(20, 'x') + bytes(1, 100, 30));
}

TEST(DirtyLog, TruncateAndDropTakeBytesOut) {
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments());
  const ObjectKey f = file_key(1), g = file_key(2);
  log->write(f, 0, bytes(1, 0, 100), writer(), false);
  log->write(g, 0, bytes(2, 0, 100), writer(), false);
  log->truncate(f, 60);
  EXPECT_EQ(log->dirty_end(f), 60u);
  EXPECT_EQ(dirty_view(*log, f, 100), bytes(1, 0, 60) + clean(40));
  log->drop(g);
  EXPECT_FALSE(log->dirty_end(g));
  EXPECT_EQ(log->usage().dirty_bytes, 60u);
  // A truncate of a file the log never saw logs nothing.
  const auto appended = files.size(1);
  log->truncate(file_key(9), 0);
  log->drop(file_key(9));
  EXPECT_EQ(files.size(1), appended);
}

// ---- durability ------------------------------------------------------------------------------

TEST(DirtyLog, StableWritesAndCommittedOnesSurviveAPowerLossUnstableOnesDoNot) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  {
    auto log = DirtyLog::open(files, small_segments());
    log->write(f, 0, bytes(1, 0, 100), writer(), /*stable=*/true);
    log->write(f, 100, bytes(2, 100, 100), writer(), false);
    log->sync();  // a COMMIT
    log->write(f, 200, bytes(3, 200, 100), writer(), false);  // never committed
  }
  files.power_loss(Loss::All);
  auto log = DirtyLog::open(files, small_segments());
  EXPECT_EQ(dirty_view(*log, f, 300), bytes(1, 0, 100) + bytes(2, 100, 100) + clean(100));
  // Positive control: without the power loss the unstable write is there too.
  MemoryLogFiles kept;
  {
    auto l = DirtyLog::open(kept, small_segments());
    l->write(f, 200, bytes(3, 200, 100), writer(), false);
  }
  EXPECT_EQ(dirty_view(*DirtyLog::open(kept, small_segments()), f, 300), clean(200) + bytes(3, 200, 100));
}

// ---- kept times -------------------------------------------------------------------------

const nfs3::Time kAtime{1600000000, 5}, kMtime{1500000000, 7};

TEST(DirtyLog, KeptTimesReturnOnlyOnceSyncedAndSurviveAPowerLoss) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  {
    auto log = DirtyLog::open(files, small_segments());
    log->write(f, 0, bytes(1, 0, 100), writer(), /*stable=*/false);
    const KeptTimes kept = log->keep_times(f, kAtime, kMtime, writer(1001));
    EXPECT_EQ(kept.atime, kAtime);
    EXPECT_EQ(kept.mtime, kMtime);
    EXPECT_EQ(log->kept_times(f), kept);
  }
  // Everything not synced is lost: keep_times synced its record (and the
  // unstable write before it with it).
  files.power_loss(Loss::All);
  auto log = DirtyLog::open(files, small_segments());
  const auto kept = log->kept_times(f);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->atime, kAtime);
  EXPECT_EQ(kept->mtime, kMtime);
  EXPECT_EQ(kept->writer, writer(1001));
  EXPECT_EQ(log->files_with_times(), std::vector<ObjectKey>{f});
  // Negative control: a file with no times has none after the same loss.
  EXPECT_FALSE(log->kept_times(file_key(2)));
}

TEST(DirtyLog, KeepingTimesMergesAndSentOnesNeverComeBack) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  std::uint64_t seq = 0;
  {
    auto log = DirtyLog::open(files, small_segments());
    log->keep_times(f, kAtime, std::nullopt, writer(1));
    const KeptTimes both = log->keep_times(f, std::nullopt, kMtime, writer(2));
    EXPECT_EQ(both.atime, kAtime);  // kept from the first
    EXPECT_EQ(both.mtime, kMtime);
    EXPECT_EQ(both.writer, writer(2));  // the last one who set any
    seq = both.seq;
    log->times_sent(f, seq - 1);  // an older version: not what is kept now
    EXPECT_TRUE(log->kept_times(f));
    log->times_sent(f, seq);  // durable when it returns: no sync() here
    EXPECT_FALSE(log->kept_times(f));
  }
  files.power_loss(Loss::All);
  EXPECT_FALSE(DirtyLog::open(files, small_segments())->kept_times(f));
}

TEST(DirtyLog, AWriteAfterTheTimesUnkeepsTheMtimeAndADropEverything) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1), g = file_key(2);
  {
    auto log = DirtyLog::open(files, small_segments());
    log->keep_times(f, kAtime, kMtime, writer());
    log->write(f, 0, bytes(1, 0, 10), writer(), /*stable=*/true);
    const auto now = log->kept_times(f);
    ASSERT_TRUE(now);
    EXPECT_EQ(now->atime, kAtime);
    EXPECT_FALSE(now->mtime);
    log->keep_times(g, std::nullopt, kMtime, writer());
    log->write(g, 0, bytes(2, 0, 10), writer(), true);
    EXPECT_FALSE(log->kept_times(g));  // only an mtime was kept
    log->keep_times(g, kAtime, std::nullopt, writer());
    log->drop(g);
    EXPECT_FALSE(log->kept_times(g));
  }
  // A replay applies the records in the same order and comes to the same.
  auto log = DirtyLog::open(files, small_segments());
  const auto f_times = log->kept_times(f);
  ASSERT_TRUE(f_times);
  EXPECT_EQ(f_times->atime, kAtime);
  EXPECT_FALSE(f_times->mtime);
  EXPECT_FALSE(log->kept_times(g));
}

TEST(DirtyLog, ASegmentHoldingKeptTimesIsNotDeadUntilTheyAreSent) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1), g = file_key(2);
  {
    auto log = DirtyLog::open(files, small_segments(600));
    log->write(f, 0, bytes(1, 0, 400), writer(), false);  // segment 1
    const KeptTimes kept = log->keep_times(f, kAtime, kMtime, writer());  // segment 1 too
    log->write(g, 0, bytes(2, 0, 500), writer(), false);   // segment 2
    // f's bytes cleaned: its segment holds no live byte, only the Times record.
    for (const auto& e : log->take(kNever, 1 << 20, 1 << 20)) {
      if (e.file == f) {
        log->cleaned(e);
      } else {
        log->untake(e);
      }
    }
    ASSERT_EQ(log->usage().dirty_bytes, 500u);
    EXPECT_EQ(files.list().front(), 1u) << "segment 1 went with the kept times in it";
    EXPECT_TRUE(log->kept_times(f));
    // Sent: segment 1 is dead now (g's bytes live in 2, which stays).
    log->times_sent(f, kept.seq);
    EXPECT_EQ(files.list().front(), 2u);
  }
  auto log = DirtyLog::open(files, small_segments(600));
  EXPECT_FALSE(log->kept_times(f));
  EXPECT_EQ(dirty_view(*log, g, 500), bytes(2, 0, 500));
}

// ---- the write verifier ----------------------------------------------------------------

/// A run that writes bytes(1, 0, 100) UNSTABLE to `f` and stops in good order;
/// returns its verifier.
std::uint64_t run_stopped_cleanly(MemoryLogFiles& files, const ObjectKey& f) {
  auto log = DirtyLog::open(files, small_segments());
  log->write(f, 0, bytes(1, 0, 100), writer(), false);
  log->close_clean();
  return log->write_verifier();
}

TEST(DirtyLog, TheVerifierIsKeptOnlyAfterACleanStop) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  const std::uint64_t v1 = run_stopped_cleanly(files, f);
  std::uint64_t v2 = 0;
  {
    auto log = DirtyLog::open(files, small_segments());
    v2 = log->write_verifier();
    EXPECT_EQ(v2, v1);  // nothing unstable was lost: clients need not resend
    EXPECT_EQ(dirty_view(*log, f, 100), bytes(1, 0, 100));
    log->write(f, 100, bytes(2, 100, 100), writer(), false);
    // No clean stop: as kill -9 leaves it.
  }
  std::uint64_t v3 = 0;
  {
    auto log = DirtyLog::open(files, small_segments());
    v3 = log->write_verifier();
    EXPECT_NE(v3, v2);  // the UNSTABLE write may be lost: clients must resend
  }
  // A run that wrote nothing and did not stop cleanly changes it too.
  auto log = DirtyLog::open(files, small_segments());
  EXPECT_NE(log->write_verifier(), v3);
}

TEST(DirtyLog, APowerLossAfterACleanStopKeepsTheVerifierAndOneAfterAStartDoesNot) {
  for (Loss loss : {Loss::All, Loss::Half, Loss::HoleInside}) {
    MemoryLogFiles files;
    const ObjectKey f = file_key(1);
    const std::uint64_t v1 = run_stopped_cleanly(files, f);
    files.power_loss(loss);  // the CleanStop was synced: it stays
    std::uint64_t v2 = 0;
    {
      auto log = DirtyLog::open(files, small_segments());
      v2 = log->write_verifier();
      EXPECT_EQ(v2, v1) << static_cast<int>(loss);
      EXPECT_EQ(dirty_view(*log, f, 100), bytes(1, 0, 100));
      log->write(f, 100, bytes(2, 100, 100), writer(), false);  // unsynced
    }
    // The Start was synced before open() returned, so no loss can leave the
    // CleanStop as the last record once a run has begun.
    files.power_loss(loss);
    auto log = DirtyLog::open(files, small_segments());
    EXPECT_NE(log->write_verifier(), v2) << static_cast<int>(loss);
  }
}

TEST(DirtyLog, AWriteAfterACleanStopStartsARiskTheNextRunSees) {
  MemoryLogFiles files;
  std::uint64_t v1 = 0;
  {
    auto log = DirtyLog::open(files, small_segments());
    v1 = log->write_verifier();
    log->close_clean();
    log->write(file_key(1), 0, bytes(1, 0, 10), writer(), false);
  }
  auto log = DirtyLog::open(files, small_segments());
  EXPECT_NE(log->write_verifier(), v1);
}

TEST(DirtyLog, TheVerifierRecordsLeaveTheDirtyBytesAlone) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  for (int run = 0; run < 3; ++run) {
    auto log = DirtyLog::open(files, small_segments(1024));
    log->write(f, 100 * run, bytes(run, 100 * run, 100), writer(), true);
    if (run % 2 == 0) log->close_clean();
  }
  auto log = DirtyLog::open(files, small_segments(1024));
  EXPECT_EQ(dirty_view(*log, f, 300), bytes(0, 0, 100) + bytes(1, 100, 100) + bytes(2, 200, 100));
  EXPECT_EQ(log->dirty_files().size(), 1u);  // no file made up for the Start and CleanStop records
  EXPECT_EQ(log->usage().dirty_bytes, 300u);
}

TEST(DirtyLog, ATornTailIsCutAndCountedAndTheLogGoesOn) {
  for (Loss loss : {Loss::Half, Loss::HoleInside}) {
    MemoryLogFiles files;
    const ObjectKey f = file_key(1);
    {
      auto log = DirtyLog::open(files, small_segments(1 << 20));  // three unsynced frames of 164 bytes: half of them ends mid-frame
      log->write(f, 0, bytes(1, 0, 100), writer(), true);
      for (int i = 1; i <= 3; ++i) log->write(f, 100 * i, bytes(1 + i, 100 * i, 100), writer(), false);
    }
    files.power_loss(loss);
    auto log = DirtyLog::open(files, small_segments(1 << 20));
    const DirtyUsage u = log->usage();
    EXPECT_GT(u.torn_bytes, 0u);
    EXPECT_EQ(u.corrupt_bytes, 0u);
    // The stable write is whole; what survived of the others is whole writes, never
    // a part of one or bytes no write wrote.
    const std::string seen = dirty_view(*log, f, 500);
    EXPECT_EQ(seen.substr(0, 100), bytes(1, 0, 100));
    for (int i = 1; i <= 3; ++i) {
      const std::string s = seen.substr(100 * i, 100);
      EXPECT_TRUE(s == bytes(1 + i, 100 * i, 100) || s == clean(100)) << i;
    }
    // New writes after the cut are kept and come back.
    log->write(f, 1000, bytes(9, 1000, 10), writer(), true);
    log.reset();
    auto again = DirtyLog::open(files, small_segments(1 << 20));
    EXPECT_EQ(dirty_view(*again, f, 1010).substr(1000), bytes(9, 1000, 10));
    EXPECT_EQ(again->usage().torn_bytes, 0u);
  }
}

TEST(DirtyLog, ATruncateOnceReturnedHoldsAcrossAPowerLoss) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  {
    auto log = DirtyLog::open(files, small_segments());
    log->write(f, 0, bytes(1, 0, 1000), writer(), true);
    log->truncate(f, 10);
    log->write(file_key(2), 0, bytes(2, 0, 10), writer(), true);
    log->drop(file_key(2));
  }
  files.power_loss(Loss::All);
  auto log = DirtyLog::open(files, small_segments());
  EXPECT_EQ(log->dirty_end(f), 10u);
  EXPECT_FALSE(log->dirty_end(file_key(2)));
}

TEST(DirtyLog, ABitFlippedInAnOlderSegmentIsCountedNotTrusted) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  {
    auto log = DirtyLog::open(files, small_segments(1024));
    for (int i = 0; i < 20; ++i) log->write(f, 100 * i, bytes(i, 100 * i, 100), writer(), true);
    ASSERT_GE(files.list().size(), 3u);
  }
  files.flip_bit(files.list().front(), 40);  // inside the first frame's body
  auto log = DirtyLog::open(files, small_segments(1024));
  EXPECT_GT(log->usage().corrupt_bytes, 0u);
  const std::string seen = dirty_view(*log, f, 2000);
  EXPECT_EQ(seen.substr(0, 100), clean(100));       // not trusted
  EXPECT_EQ(seen.substr(1900, 100), bytes(19, 1900, 100));      // later segments replayed
}

TEST(DirtyLog, StableWritesReturnOnlyAfterASyncThatCoversThem) {
  // Ordering, as a syscall trace would show it: after each stable write the bytes
  // synced reach at least the end of its record.
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments(1 << 20));
  for (int i = 0; i < 10; ++i) {
    log->write(file_key(1), 10 * i, bytes(i, 10 * i, 10), writer(), true);
    const auto seg = files.list().back();
    EXPECT_EQ(files.synced_size(seg), files.size(seg)) << i;
  }
  log->write(file_key(1), 500, bytes(50, 500, 10), writer(), false);
  const auto seg = files.list().back();
  EXPECT_LT(files.synced_size(seg), files.size(seg));  // positive control: unstable is not synced
  log->sync();
  EXPECT_EQ(files.synced_size(seg), files.size(seg));
}

TEST(DirtyLog, OnDiskEverythingComesBackAfterReopening) {
  testing::TempDir dir;
  const ObjectKey f = file_key(1);
  {
    auto log = DirtyLog::open(dir.path(), small_segments(2048));
    for (int i = 0; i < 30; ++i) log->write(f, 50 * i, bytes(i, 50 * i, 100), writer(1000 + i), i % 2 == 0);
    log->truncate(f, 1400);
  }
  auto log = DirtyLog::open(dir.path(), small_segments(2048));
  std::string want;
  for (int i = 0; i < 28; ++i) want += bytes(i, 50 * i, 50);
  EXPECT_EQ(dirty_view(*log, f, 1400), want);
  EXPECT_EQ(log->dirty_end(f), 1400u);
  const DirtyUsage u = log->usage();
  EXPECT_EQ(u.replayed_records, 32u);  // 30 writes, the truncate, the first run's Start
  EXPECT_EQ(u.torn_bytes + u.corrupt_bytes, 0u);
  // Bytes a replay brings back are due for a flush at once, with their writer.
  auto taken = log->take(cache::wall_clock().now_ms(), 1 << 20, 1 << 20);
  ASSERT_FALSE(taken.empty());
  EXPECT_EQ(taken.front().writer.uid, 1000u);
}

// ---- flushing and cleaning -------------------------------------------------------------------

TEST(DirtyLog, TakeGivesDueBytesInOrderAndOnce) {
  MemoryLogFiles files;
  ManualClock clock;
  DirtyLogOptions o = small_segments();
  o.clock = &clock;
  auto log = DirtyLog::open(files, o);
  const ObjectKey f = file_key(1), g = file_key(2);
  log->write(g, 0, bytes(1, 0, 10), writer(), false);
  clock.advance(1000);
  log->write(f, 300, bytes(2, 300, 100), writer(), false);
  log->write(f, 0, bytes(3, 0, 100), writer(), false);
  log->write(f, 100, bytes(4, 100, 100), writer(), false);  // adjacent: joins
  log->write(f, 200, bytes(5, 200, 100), writer(2000), false);  // another writer: apart
  clock.advance(1000);
  log->write(f, 1000, bytes(6, 1000, 10), writer(), false);  // not due yet

  auto t = log->take(clock.now_ms() - 500, 1 << 20, 150);
  // g first (oldest), then f in offset order, extents of at most 150 bytes.
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].file, g);
  EXPECT_EQ(t[1].offset, 0u);
  EXPECT_EQ(t[1].data, bytes(3, 0, 100) + bytes(4, 100, 50));
  EXPECT_EQ(t[2].offset, 150u);
  EXPECT_EQ(t[2].data.size(), 50u);
  EXPECT_EQ(t[3].offset, 200u);
  EXPECT_EQ(t[3].writer.uid, 2000u);
  EXPECT_EQ(t[4].offset, 300u);
  EXPECT_TRUE(log->take(clock.now_ms() - 500, 1 << 20, 150).empty());  // taken once
  // untake: they can be taken again.
  log->untake(t[0]);
  auto again = log->take(clock.now_ms() - 500, 1 << 20, 150);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].file, g);
}

TEST(DirtyLog, CleanedBytesLeaveButBytesWrittenSinceStay) {
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments());
  const ObjectKey f = file_key(1);
  log->write(f, 0, bytes(1, 0, 100), writer(), false);
  auto t = log->take(kNever, 1 << 20, 1 << 20);
  ASSERT_EQ(t.size(), 1u);
  log->write(f, 40, bytes(2, 40, 20), writer(), false);  // while the flush is out
  log->cleaned(t[0]);
  EXPECT_EQ(dirty_view(*log, f, 100), clean(40) + bytes(2, 40, 20) + clean(40));
  EXPECT_EQ(log->usage().dirty_bytes, 20u);
  auto rest = log->take(kNever, 1 << 20, 1 << 20);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].offset, 40u);
  log->cleaned(rest[0]);
  EXPECT_EQ(log->usage().dirty_bytes, 0u);
  EXPECT_TRUE(log->dirty_files().empty());
}

TEST(DirtyLog, DeadSegmentsGoOldestFirstAndOnlyThen) {
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments(600));
  const ObjectKey f = file_key(1), g = file_key(2);
  log->write(f, 0, bytes(1, 0, 500), writer(), false);  // segment 1
  log->write(g, 0, bytes(2, 0, 500), writer(), false);  // segment 2
  log->write(f, 500, bytes(3, 500, 500), writer(), false);  // segment 3
  ASSERT_EQ(files.list(), (std::vector<std::uint64_t>{1, 2, 3}));
  // g clean: segment 2 is dead but segment 1 is not, so both stay (the Clean
  // record fills segment 3, so a 4th is started).
  for (const auto& e : log->take(kNever, 1 << 20, 1 << 20))
    if (e.file == g) {
      log->cleaned(e);
    } else {
      log->untake(e);
    }
  EXPECT_EQ(files.list(), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  // f clean too: 1, 2 and 3 go; 4 is the current segment and stays.
  for (const auto& e : log->take(kNever, 1 << 20, 1 << 20)) log->cleaned(e);
  EXPECT_EQ(files.list(), (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(log->usage().dirty_bytes, 0u);
}

TEST(DirtyLog, AFullBudgetRefusesWritesUntilCleaningFreesRoom) {
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments(1000, 3000));
  const ObjectKey f = file_key(1);
  int written = 0;
  while (log->write(f, 700 * written, bytes(written, 700 * written, 700), writer(), false) == DirtyLog::Appended::Ok)
    ++written;
  ASSERT_GE(written, 3);
  EXPECT_LE(log->usage().log_bytes, 3000u);
  EXPECT_EQ(log->usage().full_refusals, 1u);
  const std::string before = dirty_view(*log, f, 700 * written);
  for (const auto& e : log->take(kNever, 1 << 20, 1 << 20)) log->cleaned(e);
  EXPECT_EQ(log->write(f, 0, bytes(99, 0, 700), writer(), false), DirtyLog::Appended::Ok);
  EXPECT_NE(before, clean(before.size()));  // positive control: they were dirty
}

TEST(DirtyLog, ACleanedCurrentSegmentMakesRoomWhenTheBudgetIsFull) {
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments(1 << 20, 3000));  // one segment would hold everything
  const ObjectKey f = file_key(1);
  ASSERT_EQ(log->write(f, 0, bytes(1, 0, 2000), writer(), false), DirtyLog::Appended::Ok);
  EXPECT_EQ(log->write(f, 2000, bytes(2, 2000, 2000), writer(), false), DirtyLog::Appended::Full);
  for (const auto& e : log->take(kNever, 1 << 20, 1 << 20)) log->cleaned(e);
  // Every byte of the current segment is clean: it is left for a new one.
  EXPECT_EQ(log->write(f, 2000, bytes(2, 2000, 2000), writer(), false), DirtyLog::Appended::Ok);
  EXPECT_LE(log->usage().log_bytes, 3000u);
  EXPECT_EQ(dirty_view(*log, f, 4000), clean(2000) + bytes(2, 2000, 2000));
}

TEST(DirtyLog, CleanedBytesNeverComeBackAfterAPowerLossButLaterWritesDo) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  {
    auto log = DirtyLog::open(files, small_segments());
    log->write(f, 0, bytes(1, 0, 300), writer(), true);
    const auto taken = log->take(kNever, 1 << 20, 1 << 20);
    ASSERT_EQ(taken.size(), 1u);
    log->write(f, 100, bytes(2, 100, 50), writer(), true);  // after the take: stays dirty
    log->cleaned(std::span<const DirtyExtent>(taken));
    EXPECT_EQ(dirty_view(*log, f, 300), clean(100) + bytes(2, 100, 50) + clean(150));
  }
  files.power_loss(Loss::All);
  auto log = DirtyLog::open(files, small_segments());
  EXPECT_EQ(dirty_view(*log, f, 300), clean(100) + bytes(2, 100, 50) + clean(150));
  EXPECT_EQ(log->usage().dirty_bytes, 50u);
}

TEST(DirtyLog, ADiskErrorLosesNothingAcknowledged) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  auto log = DirtyLog::open(files, small_segments());
  log->write(f, 0, bytes(1, 0, 100), writer(), true);
  files.fail_with(ENOSPC);
  try {
    log->write(f, 100, bytes(2, 100, 100), writer(), true);
    FAIL() << "a write on a full disk must throw";
  } catch (const DirtyLogError& e) {
    EXPECT_EQ(e.code(), ENOSPC);
  }
  EXPECT_EQ(log->dirty_end(f), 100u);  // nothing of the refused write is indexed
  files.fail_with(0);
  log->write(f, 200, bytes(3, 200, 100), writer(), true);
  log.reset();
  files.power_loss(Loss::All);
  auto again = DirtyLog::open(files, small_segments());
  EXPECT_EQ(dirty_view(*again, f, 300), bytes(1, 0, 100) + clean(100) + bytes(3, 200, 100));
}

// A full disk, then a flush: the space of a current segment whose bytes are all
// clean comes back by moving past it, so writes go on without a restart (an
// integration test saw every WRITE answered JUKEBOX after the flush, for good).
TEST(DirtyLog, AFullDiskTakesWritesAgainOnceItsBytesAreClean) {
  MemoryLogFiles files;
  const ObjectKey f = file_key(1);
  auto log = DirtyLog::open(files, small_segments(1 << 20, 1 << 20));  // one segment would hold everything
  ASSERT_EQ(log->write(f, 0, bytes(1, 0, 2000), writer(), true), DirtyLog::Appended::Ok);
  files.set_capacity(3000);
  EXPECT_THROW(log->write(f, 2000, bytes(2, 2000, 2000), writer(), true), DirtyLogError);
  // While bytes of the segment are dirty it cannot go: the disk stays full.
  EXPECT_THROW(log->write(f, 2000, bytes(2, 2000, 2000), writer(), true), DirtyLogError);
  for (const auto& e : log->take(kNever, 1 << 20, 1 << 20)) log->cleaned(e);
  ASSERT_EQ(log->usage().dirty_bytes, 0u);
  EXPECT_EQ(log->write(f, 2000, bytes(2, 2000, 2000), writer(), true), DirtyLog::Appended::Ok);
  EXPECT_EQ(dirty_view(*log, f, 4000), clean(2000) + bytes(2, 2000, 2000));
  log.reset();
  files.power_loss(Loss::All);
  auto again = DirtyLog::open(files, small_segments(1 << 20, 1 << 20));
  EXPECT_EQ(dirty_view(*again, f, 4000), clean(2000) + bytes(2, 2000, 2000));
}

// Stable writers on many threads at once: every write ends indexed and synced.
// (That they share syncs is not shown: MemoryLogFiles syncs at once, so callers
// rarely find one under way.)
TEST(DirtyLog, StableWritersAtOnceAllEndSyncedAndIndexed) {
  MemoryLogFiles files;
  auto log = DirtyLog::open(files, small_segments(1 << 20, 1 << 26));
  const auto syncs_before = files.syncs();
  constexpr int kThreads = 8, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i)
        log->write(file_key(static_cast<std::uint8_t>(t)), 10 * i, bytes(t, 10 * i, 10), writer(), true);
    });
  for (auto& th : threads) th.join();
  const auto syncs = files.syncs() - syncs_before;
  EXPECT_GE(syncs, 1u);
  EXPECT_LE(syncs, static_cast<std::uint64_t>(kThreads * kEach));
  const auto seg = files.list().back();
  EXPECT_EQ(files.synced_size(seg), files.size(seg));
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(log->dirty_end(file_key(static_cast<std::uint8_t>(t))), 10u * kEach);
}

// ---- the model: random runs against what must survive ------------------------------------------

/// What the log may hold after a power loss, per file and byte: the newest write
/// that a sync covered (its tag), or any write made since the last sync (the log
/// may have synced it on its own), or nothing when the durable one was cleaned.
class Model {
 public:
  struct Cell {
    std::int64_t tag = -1;             // the newest synced write, -1: none
    bool may_be_gone = false;          // cleaned: the origin has this value or a newer one
    std::vector<std::uint32_t> since;  // writes not yet synced
    bool since_cleaned = false;        // the newest of them is at the origin
  };
  void write(std::uint8_t file, std::uint64_t offset, std::uint64_t size, std::uint32_t tag) {
    auto& c = cells(file, offset + size);
    // A write that a power loss takes away leaves the origin's copy as it was.
    for (std::uint64_t i = offset; i < offset + size; ++i) {
      c[i].since.push_back(tag);
      c[i].since_cleaned = false;
    }
  }
  /// Truncates and drops sync at once (and with them every write before).
  void cut(std::uint8_t file, std::uint64_t from) {
    synced();
    auto& c = files_[file];
    for (std::uint64_t i = from; i < c.size(); ++i) c[i] = Cell{};
  }
  void synced() {
    for (auto& [f, c] : files_)
      for (auto& cell : c)
        if (!cell.since.empty()) cell = Cell{cell.since.back(), cell.since_cleaned, {}, false};
  }
  void cleaned(std::uint8_t file, std::uint64_t offset, std::uint64_t size) {
    auto& c = cells(file, offset + size);
    for (std::uint64_t i = offset; i < offset + size; ++i) {
      c[i].may_be_gone = true;
      c[i].since_cleaned = !c[i].since.empty();
    }
  }
  /// After a power loss: whether `seen` (kClean: not dirty) may be byte `i`.
  bool allows(std::uint8_t file, std::uint64_t i, char seen) {
    const Cell& c = cells(file, i + 1)[i];
    if (seen == kClean) return c.tag < 0 || c.may_be_gone;
    if (c.tag >= 0 && seen == bytes(static_cast<std::uint32_t>(c.tag), i, 1)[0]) return true;
    for (std::uint32_t t : c.since)
      if (seen == bytes(t, i, 1)[0]) return true;
    return false;
  }
  /// After the check of a power loss: the writes since the last sync are gone or
  /// kept; what the log now holds is what the next check must accept, so the
  /// model takes the log's word for it.
  void reset_to(std::uint8_t file, const std::string& seen) {
    auto& c = cells(file, seen.size());
    for (std::size_t i = 0; i < c.size(); ++i) {
      c[i] = Cell{};
      if (i < seen.size() && seen[i] != kClean) c[i].tag = tag_of(i, seen[i]);
    }
  }
  std::uint64_t size(std::uint8_t file) { return files_[file].size(); }
  void remember(std::uint32_t tag) { tags_.push_back(tag); }

 private:
  std::vector<Cell>& cells(std::uint8_t file, std::uint64_t size) {
    auto& c = files_[file];
    if (c.size() < size) c.resize(size);
    return c;
  }
  /// The newest tag whose byte `i` is `v` (tags differ by position, so the newest
  /// match stands for any write with that byte there).
  std::int64_t tag_of(std::uint64_t i, char v) const {
    for (auto it = tags_.rbegin(); it != tags_.rend(); ++it)
      if (bytes(*it, i, 1)[0] == v) return *it;
    return -1;
  }
  std::map<std::uint8_t, std::vector<Cell>> files_;
  std::vector<std::uint32_t> tags_;
};

TEST(DirtyLog, RandomRunsKeepEverySyncedByteThroughPowerLosses) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    MemoryLogFiles files;
    ManualClock clock;
    DirtyLogOptions o = small_segments(2048, 1 << 22);
    o.clock = &clock;
    auto log = DirtyLog::open(files, o);
    Model model;
    std::uint32_t tag = 0;
    constexpr std::uint64_t kFileBytes = 3000;
    std::uint64_t durable_checked = 0;
    for (int step = 0; step < 400; ++step) {
      const std::uint8_t file = static_cast<std::uint8_t>(rng() % 3);
      const int what = static_cast<int>(rng() % 100);
      if (what < 55) {
        const std::uint64_t off = rng() % kFileBytes, len = 1 + rng() % 300;
        const bool stable = rng() % 3 == 0;
        ++tag;
        model.remember(tag);
        ASSERT_EQ(log->write(file_key(file), off, bytes(tag, off, len), writer(), stable), DirtyLog::Appended::Ok);
        model.write(file, off, len, tag);
        if (stable) model.synced();
      } else if (what < 62) {
        log->sync();
        model.synced();
      } else if (what < 68) {
        const std::uint64_t size = rng() % kFileBytes;
        log->truncate(file_key(file), size);
        model.cut(file, size);
      } else if (what < 71) {
        log->drop(file_key(file));
        model.cut(file, 0);
      } else if (what < 85) {
        // A flush: clean some of what is taken, give the rest back.
        for (const auto& e : log->take(kNever, 1 + rng() % 4000, 1 + rng() % 700)) {
          if (rng() % 2 == 0) {
            log->cleaned(e);
            model.cleaned(e.file.fh.bytes[1], e.offset, e.data.size());
          } else {
            log->untake(e);
          }
        }
      } else if (what < 93) {
        // kill -9: the page cache keeps everything appended.
        log.reset();
        log = DirtyLog::open(files, o);
        model.synced();
      } else {
        log.reset();
        files.power_loss(Loss::All);
        log = DirtyLog::open(files, o);
        for (std::uint8_t fi = 0; fi < 3; ++fi) {
          const std::uint64_t n = std::max<std::uint64_t>(model.size(fi), log->dirty_end(file_key(fi)).value_or(0));
          const std::string seen = dirty_view(*log, file_key(fi), n);
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_TRUE(model.allows(fi, i, seen[i]))
                << "file " << int(fi) << " byte " << i << " after step " << step << ": "
                << (seen[i] == kClean ? "a synced byte is gone" : "a byte no write left there");
            if (seen[i] != kClean) ++durable_checked;
          }
          model.reset_to(fi, seen);
        }
      }
      // The budget's running count is the segments' sizes, whatever happened.
      std::uint64_t on_disk = 0;
      for (std::uint64_t n : files.list()) on_disk += files.size(n);
      ASSERT_EQ(log->usage().log_bytes, on_disk) << "after step " << step;
    }
    EXPECT_GT(durable_checked, 0u);  // the run checked kept bytes at least once
  }
}

}  // namespace dirty_log_test
}  // namespace nfsgw::cache
