// The warm's TreeWalker over a fake tree: what it visits and asks for each kind
// of object, the depth limit, file data, manifests of several paths, failures
// that name their path, the bound on calls in flight, and cancellation.
#include <gtest/gtest.h>

#include <utility>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "gateway/warm/tree_walker.h"
#include "tests/unit/gateway/fake_tree_program.h"
#include "tests/support/waiting.h"

namespace nfsgw::warm {
namespace {

using nfs3::FileType;
using test::FakeTree;
using namespace std::chrono_literals;

struct Result {
  WarmFigures figures;
  std::vector<WarmFailure> failures;
  bool done = false;
};

/// Walks `paths` of `tree` on a private io_context with two threads.
Result walk(FakeTree& tree, std::vector<std::string> paths, WalkSettings s = {},
            std::shared_ptr<WarmProgress> progress = std::make_shared<WarmProgress>(),
            std::function<void()> during = {}) {
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::promise<void> finished;
  auto walker = TreeWalker::create(io.get_executor(), tree, FakeTree::handle(1), "/export", s, progress);
  walker->start(std::move(paths), [&] { finished.set_value(); });
  std::thread t1([&] { io.run(); }), t2([&] { io.run(); });
  if (during) during();
  Result r;
  r.done = finished.get_future().wait_for(20s) == std::future_status::ready;
  work.reset();
  io.stop();
  t1.join();
  t2.join();
  r.figures = progress->figures();
  r.failures = progress->take_failures();
  return r;
}

/// /a/{f0..f9}, /a/sub/{g0..g4}, /b (file, 10000 bytes), /l (link).
struct Tree {
  FakeTree fs;
  std::uint64_t a = 0, sub = 0, b = 0, link = 0;
  Tree() {
    a = fs.add(1, "a", FileType::Dir);
    for (int i = 0; i < 10; ++i) fs.add(a, "f" + std::to_string(i), FileType::Reg, 100);
    sub = fs.add(a, "sub", FileType::Dir);
    for (int i = 0; i < 5; ++i) fs.add(sub, "g" + std::to_string(i), FileType::Reg, 0);
    b = fs.add(1, "b", FileType::Reg, 10000);
    link = fs.add(1, "l", FileType::Lnk);
  }
};

TEST(TreeWalker, VisitsEveryEntryWithTheCallsAClientMakes) {
  Tree t;
  const Result r = walk(t.fs, {""});
  ASSERT_TRUE(r.done);
  EXPECT_TRUE(r.failures.empty());
  // root + a + 10 files + sub + 5 files + b + l
  EXPECT_EQ(r.figures.entries, 20u);
  EXPECT_EQ(r.figures.dirs, 3u);
  EXPECT_EQ(r.figures.failed, 0u);
  EXPECT_EQ(r.figures.paths_total, 1u);
  EXPECT_EQ(r.figures.paths_done, 1u);
  EXPECT_EQ(r.figures.discovering, 0u);
  EXPECT_EQ(r.figures.bytes, 0u) << "no file data without `data`";
  EXPECT_EQ(t.fs.count("read"), 0u);
  // ACCESS of every directory and regular file (not of the link): 3 + 16 + 1.
  EXPECT_EQ(t.fs.count("access"), 19u);
  EXPECT_EQ(t.fs.count("readlink"), 1u);
  // Listings in pages of 3, the last one with eof: root (3 entries) 1 page, a (11) 4, sub (5) 2.
  EXPECT_EQ(t.fs.count("readdirplus"), 7u);
  // Only the starting root has no attributes from a listing.
  EXPECT_EQ(t.fs.count("getattr"), 1u);
  EXPECT_EQ(t.fs.count("lookup"), 0u);
}

TEST(TreeWalker, CallsCarryTheWarmCredentialsAndAddress) {
  Tree t;
  WalkSettings s;
  s.ctx.cred.uid = 1234;
  s.ctx.cred.gid = 55;
  s.ctx.client_address = "127.0.0.1";
  ASSERT_TRUE(walk(t.fs, {"/a/sub"}, s).done);
  const auto calls = t.fs.calls();
  ASSERT_FALSE(calls.empty());
  for (const auto& c : calls) {
    EXPECT_EQ(c.ctx.cred.uid, 1234u) << c.proc;
    EXPECT_EQ(c.ctx.cred.gid, 55u) << c.proc;
    EXPECT_EQ(c.ctx.client_address, "127.0.0.1") << c.proc;
    EXPECT_TRUE(c.ctx.caller_gone) << "a cancelled warm must be able to abandon its calls";
  }
}

TEST(TreeWalker, DepthLimitsTheListings) {
  Tree t;
  WalkSettings s;
  s.depth = 0;
  Result r = walk(t.fs, {""}, s);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.figures.entries, 1u) << "depth 0: the object itself";
  EXPECT_EQ(t.fs.count("readdirplus"), 0u);

  Tree t1;
  s.depth = 1;
  r = walk(t1.fs, {""}, s);
  EXPECT_EQ(r.figures.entries, 4u) << "depth 1: the root and its three entries";
  EXPECT_EQ(r.figures.dirs, 1u);
}

TEST(TreeWalker, DataReadsEveryByteOfEveryFileInChunks) {
  Tree t;
  WalkSettings s;
  s.data = true;
  s.read_bytes = 4096;
  const Result r = walk(t.fs, {""}, s);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.figures.bytes, 10u * 100 + 10000);
  EXPECT_EQ(r.figures.data_total, 10u * 100 + 10000);
  const auto bytes = t.fs.read_bytes();
  EXPECT_EQ(bytes.at(t.b), 10000u);
  // 10 small files in one READ each, b in 3 (4096 + 4096 + 1808); empty files none.
  EXPECT_EQ(t.fs.count("read"), 13u);
}

TEST(TreeWalker, ManifestPathsAreResolvedAndCountedAsDone) {
  Tree t;
  const Result r = walk(t.fs, {"/a/f3", "/a/sub", "/b"});
  ASSERT_TRUE(r.done);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.figures.paths_total, 3u);
  EXPECT_EQ(r.figures.paths_done, 3u);
  // f3, sub + its 5 files, b.
  EXPECT_EQ(r.figures.entries, 8u);
  // The way down: LOOKUP a, f3; a, sub; b.
  EXPECT_EQ(t.fs.count("lookup"), 5u);
}

TEST(TreeWalker, FailuresNameThePathAndTheWalkGoesOn) {
  Tree t;
  t.fs.deny_access.insert(t.sub);
  const Result r = walk(t.fs, {"/a", "/nope", "/a/f1/x"});
  ASSERT_TRUE(r.done);
  ASSERT_EQ(r.failures.size(), 3u);
  std::map<std::string, std::string> why;
  for (const auto& f : r.failures) why[f.path] = f.why;
  EXPECT_EQ(why["/export/a/sub"], "ACCES at ACCESS");
  EXPECT_EQ(why["/export/nope"], "NOENT at LOOKUP 'nope'");
  EXPECT_EQ(why["/export/a/f1/x"], "NOTDIR at LOOKUP 'x'");
  EXPECT_EQ(r.figures.failed, 3u);
  // Everything else under /a was still visited: a, 10 files, sub (its ACCESS failed).
  EXPECT_EQ(r.figures.entries, 12u);
}

TEST(TreeWalker, ListingsWithoutHandlesAreLookedUp) {
  Tree t;
  t.fs.listings_without_handles = true;
  const Result r = walk(t.fs, {"/a/sub"});
  ASSERT_TRUE(r.done);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(r.figures.entries, 6u);
  EXPECT_EQ(t.fs.count("lookup"), 2u + 5u);
}

TEST(TreeWalker, KeepsUpToParallelCallsInFlightAndNoMore) {
  FakeTree fs;
  fs.delay = 5ms;
  fs.page_entries = 200;
  const std::uint64_t d = fs.add(1, "d", FileType::Dir);
  for (int i = 0; i < 200; ++i) fs.add(d, "f" + std::to_string(i), FileType::Reg, 10);
  WalkSettings s;
  s.parallel = 8;
  const Result r = walk(fs, {""}, s);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.figures.entries, 202u);
  EXPECT_LE(fs.max_in_flight(), 8u);
  EXPECT_GE(fs.max_in_flight(), 6u) << "the walk should fill its window";

  FakeTree one;
  one.delay = 1ms;
  const std::uint64_t d1 = one.add(1, "d", FileType::Dir);
  for (int i = 0; i < 20; ++i) one.add(d1, "f" + std::to_string(i), FileType::Reg, 10);
  s.parallel = 1;
  ASSERT_TRUE(walk(one, {""}, s).done);
  EXPECT_EQ(one.max_in_flight(), 1u);
}

TEST(TreeWalker, AStackLongerThanTheBoundPausesTheListingAndStillFinishes) {
  FakeTree fs;
  fs.page_entries = 10;
  const std::uint64_t d = fs.add(1, "d", FileType::Dir);
  for (int i = 0; i < 100; ++i) fs.add(d, "f" + std::to_string(i), FileType::Reg, 10);
  WalkSettings s;
  s.parallel = 2;
  s.max_queued = 5;
  const Result r = walk(fs, {""}, s);
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.figures.entries, 102u);
  EXPECT_EQ(r.figures.dirs, 2u);
}

TEST(TreeWalker, CancelStopsTheWalkEarly) {
  FakeTree fs;
  fs.delay = 2ms;
  for (int d = 0; d < 20; ++d) {
    const std::uint64_t dir = fs.add(1, "d" + std::to_string(d), FileType::Dir);
    for (int i = 0; i < 50; ++i) fs.add(dir, "f" + std::to_string(i), FileType::Reg, 10);
  }
  WalkSettings s;
  s.parallel = 2;
  auto progress = std::make_shared<WarmProgress>();
  const Result r = walk(fs, {""}, s, progress, [&] {
    EXPECT_TRUE(test::wait_until([&] { return progress->entries.load() > 0; }, 10s, "the walk's first entries"));
    progress->cancel();
  });
  ASSERT_TRUE(r.done) << "a cancelled walk still ends";
  EXPECT_LT(r.figures.entries, 1021u);
  EXPECT_EQ(r.figures.paths_done, 0u) << "a cancelled path is not done";
}

TEST(TreeWalker, NothingToWalkEndsAtOnce) {
  FakeTree fs;
  const Result r = walk(fs, {});
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.figures.entries, 0u);
}

}  // namespace
}  // namespace nfsgw::warm
