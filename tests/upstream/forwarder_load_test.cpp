// Many calls in flight at once across the pool's connections, all answered right.
#include <utility>

#include <atomic>
#include <fstream>
#include <future>
#include <memory>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "tests/upstream/origin_fixture.h"
#include "tests/upstream/test_util.h"

namespace nfsgw::upstream::test {
namespace {

TEST(LoadTest, TwoThousandConcurrentCallsOverFourConnections) {
  constexpr int kFiles = 20;
  constexpr int kCalls = 2000;
  const std::string dir = fresh_dir("load");
  for (int i = 0; i < kFiles; ++i) {
    std::ofstream(dir + "/f" + std::to_string(i)) << std::string(static_cast<std::size_t>(i) * 100 + 1, 'a' + i);
  }
  ForwarderHarness h(4);
  std::vector<nfs3::FileHandle> handles;
  for (int i = 0; i < kFiles; ++i) handles.push_back(h.lookup_path("load/f" + std::to_string(i)));
  ASSERT_EQ(h.fwd().connections_up(), 4u);

  // Shared with every call's coroutine, which holds it by value: when the wait
  // below times out, the test returns while calls are still running on the
  // harness's threads, and they must not touch this function's stack.
  struct Tally {
    std::atomic<int> done{0}, right{0};
    std::promise<void> all_done;
  };
  auto tally = std::make_shared<Tally>();
  Forwarder& fwd = h.fwd();  // outlives the calls: the harness joins its threads first
  for (int n = 0; n < kCalls; ++n) {
    const int i = n % kFiles;
    const bool use_read = (n % 2) == 1;
    boost::asio::co_spawn(
        h.io(),
        [tally, &fwd, i, use_read, fh = handles[static_cast<std::size_t>(i)]]() -> Awaitable<void> {
          const std::size_t want = static_cast<std::size_t>(i) * 100 + 1;
          bool ok = false;
          if (use_read) {
            // Named, not temporaries inside co_await (a GCC 12 pitfall).
            const CallContext ctx = as_user(1000, 1000);
            nfs3::ReadArgs args{fh, 0, 4096};
            auto r = co_await fwd.read(ctx, args);
            ok = r.status == nfs3::Status::Ok && r.data.size() == want &&
                 r.data[0] == static_cast<std::uint8_t>('a' + i);
          } else {
            const CallContext ctx = as_root();
            nfs3::GetattrArgs args{fh};
            auto r = co_await fwd.getattr(ctx, args);
            ok = r.status == nfs3::Status::Ok && r.attributes.size == want;
          }
          if (ok) tally->right.fetch_add(1);
          if (tally->done.fetch_add(1) + 1 == kCalls) tally->all_done.set_value();
        },
        boost::asio::detached);
  }
  ASSERT_EQ(tally->all_done.get_future().wait_for(kWait), std::future_status::ready)
      << tally->done.load() << " of " << kCalls << " answered";
  EXPECT_EQ(tally->right.load(), kCalls);
}

}  // namespace
}  // namespace nfsgw::upstream::test
