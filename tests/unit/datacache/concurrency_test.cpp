// Concurrent misses for one block of one version of a file make one fetch.
#include <vector>

#include "tests/unit/datacache/datacache_fixture.h"

namespace nfsgw::datacache::test {
namespace {

using SingleFetchTest = DataCacheTest;

TEST_F(SingleFetchTest, HundredConcurrentColdReadsOfOneBlockMakeOneFetch) {
  start();
  const std::string content = pattern(kBlock);
  const auto f = origin.add_file(content);
  origin.hold(Proc::Read);
  std::vector<std::future<nfs3::ReadRes>> readers;
  for (std::uint32_t i = 0; i < 100; ++i) readers.push_back(spawn(read_call(f, i * 40, 40, as(kUser + i))));
  pump_until([&] { return origin.held(Proc::Read) == 1 && layer->stats().snapshot().reads == 100; });
  for (int i = 0; i < 200; ++i) {  // let the others find the block missing and join the fetch
    io.restart();
    io.run_for(1ms);
  }
  EXPECT_EQ(origin.held(Proc::Read), 1u);
  origin.release(Proc::Read);
  for (std::uint32_t i = 0; i < 100; ++i) {
    auto r = wait(readers[i]);
    ASSERT_EQ(r.status, Status::Ok);
    EXPECT_EQ(bytes_of(r), content.substr(i * 40, 40)) << i;
  }
  EXPECT_EQ(origin.calls(Proc::Read), 1u);
  EXPECT_EQ(counts().blocks_fetched, 1u);
  // Every reader missed the store (none found the block stored), yet the origin
  // was read once: the others waited for the one fetch.
  EXPECT_EQ(counts().read_misses, 100u);
}

TEST_F(SingleFetchTest, ConcurrentReadsOfDifferentBlocksAreNotMerged) {
  start();
  const std::string content = pattern(4 * kBlock);
  const auto f = origin.add_file(content);
  origin.hold(Proc::Read);
  std::vector<std::future<nfs3::ReadRes>> readers;
  for (std::uint32_t b = 0; b < 4; ++b) readers.push_back(spawn(read_call(f, b * kBlock, kBlock)));
  pump_until([&] { return origin.held(Proc::Read) == 4; });
  origin.release(Proc::Read);
  for (std::uint32_t b = 0; b < 4; ++b) EXPECT_EQ(bytes_of(wait(readers[b])), content.substr(b * kBlock, kBlock));
  EXPECT_EQ(counts().blocks_fetched, 4u);
}

TEST_F(SingleFetchTest, AReaderOfANewerVersionDoesNotJoinAFetchOfTheOlder) {
  start();
  const auto f = origin.add_file(pattern(kBlock, 1));
  origin.hold(Proc::Read);
  auto old_reader = spawn(read_call(f, 0, kBlock));
  pump_until([&] { return origin.held(Proc::Read) == 1; });  // answered with version 1, not delivered
  origin.set_data(f, pattern(kBlock, 2));
  auto new_reader = spawn(read_call(f, 0, kBlock));
  pump_until([&] { return origin.held(Proc::Read) == 2; });  // a fetch of its own
  origin.release(Proc::Read);
  EXPECT_EQ(bytes_of(wait(old_reader)), pattern(kBlock, 1));
  EXPECT_EQ(bytes_of(wait(new_reader)), pattern(kBlock, 2));

  origin.reset_calls();
  EXPECT_EQ(bytes_of(read(f, 0, kBlock)), pattern(kBlock, 2));
}

}  // namespace
}  // namespace nfsgw::datacache::test
