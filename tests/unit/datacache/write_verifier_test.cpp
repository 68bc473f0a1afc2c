// The write verifier of a write-back export (RFC 1813, WRITE and COMMIT): every
// WRITE and COMMIT reply through it carries one verifier, nfsgw's (the dirty
// log's), whichever path answered it, and that verifier changes exactly when
// acknowledged UNSTABLE data may have been lost. The difftest's fault 5
// (docs/difftest.md): a WRITE sent on to the origin carried the origin's verifier
// while COMMIT answered the log's, so a client saw it change at every COMMIT and
// sent its data again for ever; the data cache above saw it change too and
// logged an origin restart that never happened.
#include <utility>  // before Asio (Boost 1.74 under C++20)

#include <memory>

#include "cache/block_store.h"
#include "gateway/datacache/data_cache.h"
#include "tests/unit/datacache/write_back_fixture.h"

namespace nfsgw::writeback::write_verifier_test {

using namespace write_back_fixture;
using nfs3::Proc;
using nfs3::StableHow;
using nfs3::Status;
using nfsgw::test::as;
using nfsgw::test::invoke;

constexpr std::uint32_t kOwner = 1000;
constexpr std::uint32_t kOther = 2000;  // ACCESS denies it Modify; the origin takes its WRITEs

class WriteVerifierTest : public WriteBackTest {
 protected:
  /// An OK reply of a write-back export: the log's verifier, or a failure.
  void expect_nfsgw_verifier(const nfs3::WriteRes& w, const char* path) {
    ASSERT_EQ(w.status, Status::Ok) << path;
    EXPECT_EQ(w.verf, log_verifier()) << path;
  }
  void expect_nfsgw_verifier(const nfs3::CommitRes& c, const char* path) {
    ASSERT_EQ(c.status, Status::Ok) << path;
    EXPECT_EQ(c.verf, log_verifier()) << path;
  }
};

// Every path of the layer's WRITE and COMMIT on a write-back export, one after
// the other on the same files, as one client would see them.
TEST_F(WriteVerifierTest, EveryWriteAndCommitOfAWriteBackExportCarriesTheLogsVerifier) {
  origin.refuse_modify(kOther);
  ASSERT_NE(origin.verifier(), log_verifier());  // else the check below could not fail
  const auto fh = origin.add_file(std::string(64, '.'));
  const auto dir = origin.add_dir();

  // Absorbed, UNSTABLE and FILE_SYNC.
  expect_nfsgw_verifier(write(*back, fh, 0, "unstable", StableHow::Unstable), "absorbed UNSTABLE");
  expect_nfsgw_verifier(write(*back, fh, 8, "stable", StableHow::FileSync), "absorbed FILE_SYNC");
  expect_nfsgw_verifier(commit(*back, fh), "COMMIT of a dirty file");
  EXPECT_EQ(origin.calls(Proc::Write), 0u);

  // Sent on to the origin (the caller is not granted Modify, the origin lets it
  // write): made stable there, answered with the log's verifier.
  const nfs3::WriteRes fwd = write(*back, fh, 20, "other", StableHow::Unstable, kOther);
  expect_nfsgw_verifier(fwd, "forwarded UNSTABLE");
  EXPECT_NE(fwd.committed, StableHow::Unstable);
  EXPECT_EQ(origin.last_write_stable(), StableHow::DataSync);
  EXPECT_FALSE(is_dirty(fh));  // flushed before it (it lands on the dirty bytes)
  EXPECT_EQ(origin.data(fh).substr(0, 25), "unstablestable......other");
  expect_nfsgw_verifier(commit(*back, fh), "COMMIT of a clean file");
  // ... FILE_SYNC, and to what is not a regular file.
  expect_nfsgw_verifier(write(*back, fh, 30, "x", StableHow::FileSync, kOther), "forwarded FILE_SYNC");
  const nfs3::WriteRes to_dir = write(*back, dir, 0, "x", StableHow::Unstable);
  if (to_dir.status == Status::Ok) {
    EXPECT_EQ(to_dir.verf, log_verifier()) << "WRITE of a directory";
  }
  // ... when the origin does less than asked (UNSTABLE to a DATA_SYNC WRITE): its
  // COMMIT of the range first.
  origin.answer_unstable(true);
  origin.reset_calls();
  const nfs3::WriteRes lazy = write(*back, fh, 40, "lazy", StableHow::Unstable, kOther);
  expect_nfsgw_verifier(lazy, "forwarded, the origin answering UNSTABLE");
  EXPECT_NE(lazy.committed, StableHow::Unstable);
  EXPECT_EQ(origin.calls(Proc::Commit), 1u);
  // ... and when that COMMIT shows another verifier (the origin restarted): no
  // acknowledgement, the client sends it again.
  origin.hold(Proc::Write);
  auto pending = boost::asio::co_spawn(
      io, invoke(*back, &Nfs3Program::write, as(kOther), [&] {
        nfs3::WriteArgs a;
        a.file = fh;
        a.offset = 44;
        a.count = 4;
        a.stable = StableHow::Unstable;
        a.data.assign({'l', 'o', 's', 't'});
        return a;
      }()),
      boost::asio::use_future);
  pump_until([&] { return origin.held(Proc::Write) == 1; });
  origin.restart(fh, origin.data(fh));
  origin.release(Proc::Write);
  nfsgw::test::pump_until_ready(io, pending);
  EXPECT_NE(pending.get().status, Status::Ok);
  origin.answer_unstable(false);

  // Absorbed while the file's flush is out (its WRITE to the origin held).
  write(*back, fh, 0, "again", StableHow::Unstable);
  origin.hold(Proc::Write);
  clock.advance(kDelay + 1);
  pump_until([&] { return origin.held(Proc::Write) >= 1; });
  expect_nfsgw_verifier(write(*back, fh, 5, "during", StableHow::Unstable), "absorbed during a flush");
  expect_nfsgw_verifier(commit(*back, fh), "COMMIT during a flush");
  // The origin restarts during that flush: nothing acknowledged is lost, the
  // verifier stays.
  const nfs3::WriteVerf before_origin_restart = log_verifier();
  origin.restart(fh, origin.data(fh));
  origin.release(Proc::Write);
  clock.advance(kDelay + 1);  // the bytes written during the flush are due too
  pump_until([&] { return !is_dirty(fh); });
  EXPECT_EQ(log_verifier(), before_origin_restart);
  expect_nfsgw_verifier(write(*back, fh, 0, "after", StableHow::Unstable), "after an origin restart");

  // The log full: JUKEBOX (no verifier to agree with), then the log's once taken.
  // (AFullLogAnswersJukeboxAfterItsWaitAndTakesWritesOnceFlushed covers the wait.)

  // An orderly restart keeps the verifier; uncommitted data survives it.
  const nfs3::WriteVerf before_clean = log_verifier();
  clean_restart();
  EXPECT_EQ(log_verifier(), before_clean);
  expect_nfsgw_verifier(commit(*back, fh), "COMMIT after an orderly restart");
  // A power loss may lose UNSTABLE data: a new verifier, on every path.
  write(*back, fh, 0, "maybe lost", StableHow::Unstable);
  power_loss_restart();
  origin.refuse_modify(kOther);
  EXPECT_NE(log_verifier(), before_clean);
  expect_nfsgw_verifier(write(*back, fh, 0, "resent", StableHow::Unstable), "absorbed after a power loss");
  expect_nfsgw_verifier(write(*back, fh, 50, "o", StableHow::Unstable, kOther), "forwarded after a power loss");
  expect_nfsgw_verifier(commit(*back, fh), "COMMIT after a power loss");
}

// A write-through export answers the origin's verifier on both: they agree there too.
TEST_F(WriteVerifierTest, AWriteThroughExportAnswersTheOriginsVerifierOnWriteAndCommit) {
  const auto fh = origin.add_file("abc");
  write(*back, fh, 0, "dirty");
  const nfs3::WriteRes w = write(*through, fh, 1, "x", StableHow::Unstable);
  ASSERT_EQ(w.status, Status::Ok);
  EXPECT_EQ(w.verf, origin.verifier());
  const nfs3::CommitRes c = commit(*through, fh);
  ASSERT_EQ(c.status, Status::Ok);
  EXPECT_EQ(c.verf, w.verf);
}

// The data cache above a write-back export sees one verifier: absorbed and
// forwarded WRITEs and COMMITs, mixed as a kernel client's writeback mixes them,
// change nothing (it logged "the origin's write verifier changed ... 0 file(s)"
// twice per kernel run, with no restart).
TEST_F(WriteVerifierTest, TheDataCacheAboveSeesNoVerifierChangeWithoutARestart) {
  origin.refuse_modify(kOther);
  auto store = cache::make_memory_block_store([] {
    cache::BlockStoreOptions o;
    o.block_bytes = 4096;
    o.disk_bytes = 1 << 24;
    o.memory_bytes = 1 << 20;
    return o;
  }());
  datacache::DataCache above(*back, *store, pool, kSpace, datacache::DataCacheSettings{});
  const auto fh = origin.add_file(std::string(32, '.'));
  auto call_write = [&](std::uint64_t offset, const std::string& data, std::uint32_t uid) {
    nfs3::WriteArgs a;
    a.file = fh;
    a.offset = offset;
    a.count = static_cast<std::uint32_t>(data.size());
    a.stable = StableHow::Unstable;
    a.data.assign(data.begin(), data.end());
    return run(invoke(above, &Nfs3Program::write, as(uid), std::move(a)));
  };
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(call_write(0, "absorbed", kOwner).status, Status::Ok);
    ASSERT_EQ(call_write(10, "forwarded", kOther).status, Status::Ok);
    ASSERT_EQ(run(invoke(above, &Nfs3Program::commit, as(kOwner), nfs3::CommitArgs{fh, 0, 0})).status, Status::Ok);
  }
  EXPECT_EQ(above.verifier_changes(), 0u);
  // The negative control: the counter does count a change (the origin's, seen by a
  // data cache straight above it).
  datacache::DataCache plain(origin, *store, pool, kSpace + 1, datacache::DataCacheSettings{});
  auto plain_write = [&] {
    nfs3::WriteArgs a;
    a.file = fh;
    a.count = 1;
    a.stable = StableHow::Unstable;
    a.data.assign({'z'});
    return run(invoke(plain, &Nfs3Program::write, as(kOwner), std::move(a)));
  };
  ASSERT_EQ(plain_write().status, Status::Ok);
  origin.restart(fh, origin.data(fh));
  ASSERT_EQ(plain_write().status, Status::Ok);
  EXPECT_EQ(plain.verifier_changes(), 1u);
}

}  // namespace nfsgw::writeback::write_verifier_test
