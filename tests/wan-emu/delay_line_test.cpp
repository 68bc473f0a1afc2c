// Release ordering of the delay line and the link's serialisation model.
#include "tools/wan-emu/delay_line.h"

#include <gtest/gtest.h>

#include "tools/wan-emu/link_shaper.h"

namespace nfsgw::wanemu {
namespace {

using Clock = DelayLine::Clock;
using std::chrono::milliseconds;

std::vector<std::uint8_t> bytes(std::size_t n, std::uint8_t v) { return std::vector<std::uint8_t>(n, v); }

TEST(DelayLine, ReleasesOnlyDueChunksInOrder) {
  DelayLine d;
  Clock::time_point t0{};
  d.push(t0 + milliseconds(100), bytes(3, 1));
  d.push(t0 + milliseconds(101), bytes(2, 2));
  d.push(t0 + milliseconds(150), bytes(4, 3));
  EXPECT_EQ(d.queued_bytes(), 9u);
  EXPECT_EQ(d.next_release(), t0 + milliseconds(100));

  std::vector<std::vector<std::uint8_t>> out;
  EXPECT_EQ(d.take_due(t0 + milliseconds(99), out), 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(d.take_due(t0 + milliseconds(101), out), 5u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], bytes(3, 1));
  EXPECT_EQ(out[1], bytes(2, 2));
  EXPECT_EQ(d.queued_bytes(), 4u);
  EXPECT_EQ(d.next_release(), t0 + milliseconds(150));
}

TEST(DelayLine, LoweredDelayNeverOvertakes) {
  DelayLine d;
  Clock::time_point t0{};
  d.push(t0 + milliseconds(500), bytes(1, 1));  // sent while the delay was 500 ms
  d.push(t0 + milliseconds(10), bytes(1, 2));   // delay lowered to 10 ms afterwards
  std::vector<std::vector<std::uint8_t>> out;
  EXPECT_EQ(d.take_due(t0 + milliseconds(100), out), 0u);
  EXPECT_EQ(d.take_due(t0 + milliseconds(500), out), 2u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0][0], 1);
  EXPECT_EQ(out[1][0], 2);
}

TEST(DelayLine, TakeDueRespectsByteBudgetButMovesAtLeastOne) {
  DelayLine d;
  Clock::time_point t0{};
  for (int i = 0; i < 4; ++i) d.push(t0, bytes(1000, static_cast<std::uint8_t>(i)));
  std::vector<std::vector<std::uint8_t>> out;
  EXPECT_EQ(d.take_due(t0, out, 10), 1000u);  // one chunk even though over budget
  EXPECT_EQ(d.take_due(t0, out, 2500), 2000u);
  EXPECT_EQ(d.queued_bytes(), 1000u);
  EXPECT_FALSE(d.empty());
}

TEST(DelayLine, EmptyPushIsIgnored) {
  DelayLine d;
  d.push(Clock::time_point{}, {});
  EXPECT_TRUE(d.empty());
}

TEST(LinkShaper, UnlimitedDepartsOnArrival) {
  LinkShaper s;
  Clock::time_point t0{};
  EXPECT_TRUE(s.unlimited());
  EXPECT_EQ(s.depart(t0, 1 << 20), t0);
}

TEST(LinkShaper, SerialisesBackToBackChunks) {
  LinkShaper s;
  s.set_rate(1000);  // bytes per second: 1 ms per byte
  Clock::time_point t0 = Clock::time_point{} + std::chrono::seconds(10);
  EXPECT_EQ(s.depart(t0, 100), t0 + milliseconds(100));
  // Arrives while the link is still busy: waits for it.
  EXPECT_EQ(s.depart(t0 + milliseconds(50), 10), t0 + milliseconds(110));
  // Arrives after the link went idle: starts at once.
  EXPECT_EQ(s.depart(t0 + milliseconds(500), 1), t0 + milliseconds(501));
}

}  // namespace
}  // namespace nfsgw::wanemu

namespace nfsgw::wanemu {
namespace {

TEST(DelayLine, ReportsHowLateChunksWereReleased) {
  DelayLine d;
  DelayLine::Clock::time_point t0{};
  d.push(t0 + std::chrono::milliseconds(10), std::vector<std::uint8_t>(1, 1));
  d.push(t0 + std::chrono::milliseconds(12), std::vector<std::uint8_t>(1, 2));
  std::vector<std::vector<std::uint8_t>> out;
  DelayLine::Lateness late;
  d.take_due(t0 + std::chrono::milliseconds(15), out, 1 << 20, &late);
  EXPECT_EQ(late.chunks, 2u);
  EXPECT_EQ(late.total, std::chrono::milliseconds(8));  // 5 + 3
  EXPECT_EQ(late.max, std::chrono::milliseconds(5));
}

}  // namespace
}  // namespace nfsgw::wanemu
