// The flusher's attempts of one file (gateway/writeback/flusher.h): at most
// batch_bytes each, the next one taken and sent once every WRITE of the one before
// is sent (their answers and its COMMIT still out), at most attempts_per_file at
// once, never two WRITEs of the same bytes out at once, and no conflict told from
// attributes that the file's own attempt moved. Over FakeFiles as the origin
// (its replies held to freeze a moment), a dirty log on MemoryLogFiles and a
// ManualClock, the flusher on the io_context the test pumps.
#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include "cache/clock.h"
#include "cache/dirty_log.h"
#include "cache/disk_pool.h"
#include "cache/log_files.h"
#include "gateway/writeback/dirty_files.h"
#include "gateway/writeback/flusher.h"
#include "gateway/writeback/write_back.h"
#include "tests/unit/datacache/fake_files.h"
#include "tests/unit/support/layer_calls.h"

namespace nfsgw::writeback::flusher_pipeline_test {

using namespace std::chrono_literals;
using datacache::test::FakeFiles;
using nfs3::Proc;
using nfsgw::test::as;
using nfsgw::test::invoke;

constexpr std::uint32_t kSpace = 5;
constexpr cache::Millis kDelay = 10'000;
constexpr std::uint64_t kPiece = 4096;      // extent_bytes: one WRITE each
constexpr std::uint64_t kBatch = 4 * kPiece;  // batch_bytes: four WRITEs per attempt
constexpr std::uint32_t kAttempts = 3;        // attempts_per_file

class FlusherPipelineTest : public ::testing::Test {
 protected:
  FlusherPipelineTest() {
    cache::DirtyLogOptions o;
    o.budget_bytes = 1 << 20;
    o.segment_bytes = 64 << 10;
    o.clock = &clock;
    log = cache::DirtyLog::open(segments, o);
    dirty = std::make_unique<DirtyFiles>(*log, clock);
    FlusherSettings fs;
    fs.tick = 2ms;
    fs.extent_bytes = kPiece;
    fs.batch_bytes = kBatch;
    fs.bytes_in_flight = 64 * kPiece;
    fs.attempts_per_file = kAttempts;
    flusher = std::make_unique<Flusher>(io, *dirty, pool, clock, fs);
    flusher->set_space(kSpace, &origin, kDelay);
    back = std::make_unique<WriteBack>(origin, *dirty, *flusher, pool, kSpace, true, WriteBackSettings{});
    flusher->start();
  }
  ~FlusherPipelineTest() override {
    for (std::uint32_t p = 0; p < nfs3::kProcCount; ++p) origin.release(static_cast<Proc>(p));
    flusher->stop();
    for (int i = 0; i < 200; ++i) {
      io.restart();
      io.run_for(1ms);
    }
    back.reset();
    flusher.reset();
    dirty.reset();
    log.reset();
  }

  void write(const nfs3::FileHandle& fh, std::uint64_t offset, const std::string& data) {
    nfs3::WriteArgs a;
    a.file = fh;
    a.offset = offset;
    a.count = static_cast<std::uint32_t>(data.size());
    a.stable = nfs3::StableHow::FileSync;
    a.data.assign(data.begin(), data.end());
    auto f = boost::asio::co_spawn(io, invoke(*back, &Nfs3Program::write, as(1000), std::move(a)),
                                   boost::asio::use_future);
    nfsgw::test::pump_until_ready(io, f);
    ASSERT_EQ(f.get().status, nfs3::Status::Ok);
  }
  template <typename Pred>
  void pump_until(Pred done) {
    nfsgw::test::pump_until(io, done);
  }
  /// Lets the flusher run some passes (each tick is 2 ms).
  void pump_passes() {
    for (int i = 0; i < 50; ++i) {
      io.restart();
      io.run_for(1ms);
    }
  }
  bool is_dirty(const nfs3::FileHandle& fh) const { return dirty->has({kSpace, fh}); }

  // Destroyed last: coroutine frames still queued in it are freed after the rest.
  boost::asio::io_context io;
  cache::ManualClock clock;
  cache::DiskPool pool{2};
  cache::MemoryLogFiles segments;
  FakeFiles origin;
  std::unique_ptr<cache::DirtyLog> log;
  std::unique_ptr<DirtyFiles> dirty;
  std::unique_ptr<Flusher> flusher;
  std::unique_ptr<WriteBack> back;
};

std::string pattern(std::size_t n, char first) {
  std::string s(n, ' ');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(first + i % 23);
  return s;
}

TEST_F(FlusherPipelineTest, TheNextBatchOfAFileIsSentWhileTheCommitOfTheOneBeforeIsOut) {
  const auto fh = origin.add_file("");
  const std::string data = pattern(4 * kBatch, 'a');  // four attempts' worth
  for (std::uint64_t at = 0; at < data.size(); at += kPiece) write(fh, at, data.substr(at, kPiece));
  origin.hold(Proc::Commit);
  clock.advance(kDelay + 1);
  // The first attempt's four WRITEs, its COMMIT held; the next attempts' WRITEs go
  // out meanwhile, and their COMMITs are held too.
  pump_until([&] { return origin.held(Proc::Commit) == kAttempts; });
  EXPECT_EQ(origin.calls(Proc::Write), 4u * kAttempts);
  // No more attempts while attempts_per_file are out.
  pump_passes();
  EXPECT_EQ(origin.calls(Proc::Write), 4u * kAttempts);
  EXPECT_EQ(origin.held(Proc::Commit), kAttempts);
  EXPECT_TRUE(is_dirty(fh));
  origin.release(Proc::Commit);
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(origin.data(fh), data);
  EXPECT_EQ(origin.calls(Proc::Write), 16u);
  EXPECT_EQ(origin.calls(Proc::Commit), 4u);
  const WriteBackCounts c = dirty->counts();
  EXPECT_EQ(c.flushed_bytes, data.size());
  EXPECT_EQ(c.conflicts, 0u);  // the second attempt saw the first one's attributes, not a change
}

// The next batch is taken as soon as the WRITEs of the one before are all sent:
// the link does not drain between batches while the take reads the log.
TEST_F(FlusherPipelineTest, TheNextBatchIsTakenOnceEveryWriteOfTheOneBeforeIsSent) {
  const auto fh = origin.add_file("");
  const std::string data = pattern(4 * kBatch, 'q');
  for (std::uint64_t at = 0; at < data.size(); at += kPiece) write(fh, at, data.substr(at, kPiece));
  origin.hold(Proc::Write);
  clock.advance(kDelay + 1);
  // The file's first WRITE goes alone (its pre-op attributes tell a conflict):
  // answered, then no WRITE answered.
  pump_until([&] { return origin.held(Proc::Write) == 1; });
  origin.release(Proc::Write);
  origin.hold(Proc::Write);
  pump_until([&] { return origin.held(Proc::Write) == 4u * kAttempts - 1; });
  pump_passes();
  EXPECT_EQ(origin.held(Proc::Write), 4u * kAttempts - 1);  // at most attempts_per_file
  EXPECT_EQ(origin.calls(Proc::Commit), 0u);
  origin.release(Proc::Write);
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(origin.data(fh), data);
  EXPECT_EQ(dirty->counts().flushed_bytes, data.size());
}

TEST_F(FlusherPipelineTest, BytesWrittenAgainAreNotSentWhileTheirFirstWriteIsUnanswered) {
  const auto fh = origin.add_file("");
  write(fh, 0, pattern(kPiece, 'a'));
  origin.hold(Proc::Write);
  clock.advance(kDelay + 1);
  pump_until([&] { return origin.held(Proc::Write) == 1; });
  // Written again while the origin has not answered the first WRITE of them: due at
  // once (the delay has passed for the test's clock after the advance below), but
  // not sent until that WRITE is answered.
  const std::string again = pattern(kPiece, 'A');
  write(fh, 0, again);
  clock.advance(kDelay + 1);
  pump_passes();
  EXPECT_EQ(origin.calls(Proc::Write), 1u);
  origin.release(Proc::Write);
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(origin.data(fh), again);
  EXPECT_EQ(origin.calls(Proc::Write), 2u);
}

TEST_F(FlusherPipelineTest, NoConflictIsToldFromTheFilesOwnAttemptsAndARealOneStillIs) {
  const auto fh = origin.add_file("");
  const std::string data = pattern(2 * kBatch, 'k');
  for (std::uint64_t at = 0; at < data.size(); at += kPiece) write(fh, at, data.substr(at, kPiece));
  origin.hold(Proc::Commit);
  clock.advance(kDelay + 1);
  pump_until([&] { return origin.held(Proc::Commit) == 2; });
  // More bytes while both attempts are out: the file stays dirty, and its next
  // attempt compares the origin with what the earlier ones left there.
  const std::string more = pattern(kPiece, 'M');
  write(fh, data.size(), more);
  origin.release(Proc::Commit);
  clock.advance(kDelay + 1);
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(origin.data(fh), data + more);
  EXPECT_EQ(dirty->counts().conflicts, 0u);
  // Positive control: changed at the origin behind nfsgw's back after a write
  // through nfsgw and before its flush.
  write(fh, 0, "ABC");
  origin.set_data(fh, "changed elsewhere");
  clock.advance(kDelay + 1);
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(dirty->counts().conflicts, 1u);
  EXPECT_EQ(origin.data(fh), "ABCnged elsewhere");
}

}  // namespace nfsgw::writeback::flusher_pipeline_test
