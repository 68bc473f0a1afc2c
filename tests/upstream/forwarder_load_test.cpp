// Many calls in flight at once across the pool's connections, all answered right.
#include <utility>

#include <atomic>
#include <fstream>

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

  std::atomic<int> done{0}, right{0};
  std::promise<void> all_done;
  for (int n = 0; n < kCalls; ++n) {
    const int i = n % kFiles;
    const bool use_read = (n % 2) == 1;
    boost::asio::co_spawn(
        h.io(),
        [&, i, use_read, fh = handles[static_cast<std::size_t>(i)]]() -> Awaitable<void> {
          const std::size_t want = static_cast<std::size_t>(i) * 100 + 1;
          bool ok = false;
          if (use_read) {
            auto r = co_await h.fwd().read(as_user(1000, 1000), nfs3::ReadArgs{fh, 0, 4096});
            ok = r.status == nfs3::Status::Ok && r.data.size() == want &&
                 r.data[0] == static_cast<std::uint8_t>('a' + i);
          } else {
            auto r = co_await h.fwd().getattr(as_root(), nfs3::GetattrArgs{fh});
            ok = r.status == nfs3::Status::Ok && r.attributes.size == want;
          }
          if (ok) right.fetch_add(1);
          if (done.fetch_add(1) + 1 == kCalls) all_done.set_value();
        },
        boost::asio::detached);
  }
  ASSERT_EQ(all_done.get_future().wait_for(kWait), std::future_status::ready)
      << done.load() << " of " << kCalls << " answered";
  EXPECT_EQ(right.load(), kCalls);
}

}  // namespace
}  // namespace nfsgw::upstream::test
